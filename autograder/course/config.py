"""A course folder's nbgrader configuration, in two files (autograder.settings reads them as nbgrader does):

- ``autograder_config.py``, the project's: the repository's grading chain (its nbgrader_config.py), the course
  folder as nbgrader's root, and the gradebook (--db) and cell limit (--cell-timeout) a run was given, kept by later
  runs until another is given. Written again by every run (``write_course_files``); never edited by hand.
- ``nbgrader_config.py``, the instructor's: it loads autograder_config.py first, so every line after that (the
  instant checks' policy, the exchange, anything nbgrader reads) overrides what the project generates. Written
  once, when it is missing, and never again.

nbgrader's own commands and Formgrader read the course folder's nbgrader_config.py as usual, and so see both.

Earlier versions of the project wrote nbgrader_config.py whole, on every run. Such a file is migrated once: the
lines that version generated are left out, every other line is kept, below the new file's first lines, and the
old file is kept whole beside it (nbgrader_config.py.bak), so no line of the instructor's is lost.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from autograder import REPOSITORY
from autograder.grading.ledger import write_atomic
from autograder.settings import GENERATED_FILE, INSTRUCTOR_FILE, SettingsError, own_lines, sqlite_url

GENERATED = '''"""Made by autograder for this course folder and written again by every run (the class command,
the hub): do not edit. Your settings go in nbgrader_config.py beside it, which loads this file first."""
import os

c = get_config()  # noqa: F821 (nbgrader provides it)
_repository_config = {repository_config!r}
if not os.path.exists(_repository_config):  # load_subconfig would skip a missing file without a word
    # SystemExit, not an error nbgrader would log and pass over: its defaults release checks.py and reference.py
    raise SystemExit(f"the course configuration {{_repository_config}} is missing: nothing was done")
load_subconfig(_repository_config)  # noqa: F821
c.CourseDirectory.root = {root!r}
'''

INSTRUCTOR = '''"""nbgrader's configuration of this course: yours. autograder wrote it because it was missing, and never
writes it again.

Its first lines load autograder_config.py, which autograder writes again on every run (the grading chain, this
folder as the course root, the gradebook a run was given with --db, the cell limit of --cell-timeout); every line
below them overrides it, for nbgrader's commands, Formgrader, the class run and the grading service alike."""
import os

c = get_config()  # noqa: F821 (nbgrader provides it)
_generated = os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograder_config.py")
if not os.path.exists(_generated):  # load_subconfig would skip a missing file without a word
    # SystemExit, not an error nbgrader would log and pass over: its defaults release checks.py and reference.py
    raise SystemExit(f"{{_generated}} is missing: run python -m autograder.course on this course; nothing was done")
load_subconfig(_generated)  # noqa: F821

# Keep every line below one that runs: nbgrader logs an error in this file and carries on with its own defaults,
# which release checks.py and reference.py beside the notebook (python -m autograder.validate --release finds them).

# Your settings go below. The grading service's policy for instant checks (read again when this file changes):
# c.InstantChecks.attempts = 3             # Submits checked per student per period; later ones are queued
# c.InstantChecks.period = 3600            # seconds
# c.InstantChecks.before_due = "verdicts"  # what a checked Submit shows: "verdicts", "score" or "nothing"
# c.InstantChecks.after_due = "score"
# c.InstantChecks.check_after_due = False  # Submits after the due date (the gradebook's) are not checked
# nbgrader's exchange (release, collect, feedback):
# c.Exchange.root = "/usr/local/share/nbgrader/exchange"
{kept}'''

LOAD_LINE = 'load_subconfig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograder_config.py"))'
KEPT = "\n# Kept from the nbgrader_config.py an earlier version of autograder wrote ({backup} holds it whole):\n"

# The lines earlier versions generated in nbgrader_config.py (the docstring aside); each of the last two only
# right after its comment line
OLD_MARKS = ("Written by autograder; grading does not read it.", "_repository_config")
OLD_LINES = re.compile(
    r"^(import os"
    r"|c = get_config\(\).*"
    r"|_repository_config = .*"
    r"|if not os\.path\.exists\(_repository_config\):.*"
    r"|\s+raise FileNotFoundError\(f\"the course configuration .*"
    r"|load_subconfig\((_repository_config|'[^']*nbgrader_config\.py')\).*"
    r"|c\.CourseDirectory\.root = .*"
    r"|# --cell-timeout|# --db: .*)$"
)
OLD_AFTER = {
    "# --cell-timeout": re.compile(r"^c\.SurvivingExecute\.timeout = \d+$"),
    "# --db": re.compile(r"^c\.CourseDirectory\.db_url = .*$"),
}


def find_alembic() -> None:
    """nbgrader runs ``alembic`` by name when it makes a gradebook (nbgrader.api.get_alembic_version): when no
    alembic is on PATH, the folder of this Python (a virtual environment's bin/, where pip put alembic) is put first
    on this process's PATH, so that `.venv/bin/nbgrader ...` and the class command work from any shell. The
    repository's nbgrader_config.py calls it for nbgrader's commands; the class command before each gradebook."""
    if shutil.which("alembic") is None:
        os.environ["PATH"] = os.pathsep.join(filter(None, [os.path.dirname(sys.executable), os.environ.get("PATH")]))


def generated_text(course: Path, *, db: str | None = None, cell_timeout: int | None = None) -> str:
    """autograder_config.py: the repository's chain rooted at ``course``, the gradebook ``db`` unless it is the
    course's gradebook.db, the cell limit when one was given."""
    text = GENERATED.format(repository_config=str(REPOSITORY / "nbgrader_config.py"), root=str(course))
    if cell_timeout is not None:
        text += f"\n# --cell-timeout\nc.SurvivingExecute.timeout = {int(cell_timeout)}\n"
    if db is not None and db != sqlite_url(course):
        text += (
            f"\n# --db: the gradebook, for nbgrader's commands and Formgrader too\nc.CourseDirectory.db_url = {db!r}\n"
        )
    return text


def is_old(text: str) -> bool:
    """Whether an nbgrader_config.py was written whole by an earlier version of the project."""
    return GENERATED_FILE not in text and any(mark in text for mark in OLD_MARKS)


def instructor_lines(old: str) -> list[str]:
    """The lines of an old generated nbgrader_config.py that the project did not write (the instructor's)."""
    if old.startswith('"""'):  # the generated docstring, when it says so
        end = old.find('"""', 3)
        if end > 0 and "Written by autograder" in old[:end]:
            old = old[end + 3 :]
    kept, after = [], None
    lines = old.splitlines()
    for line in lines:
        if after is not None and after.match(line):
            after = None
            continue
        after = next((pattern for mark, pattern in OLD_AFTER.items() if line.startswith(mark)), None)
        if not OLD_LINES.match(line):
            kept.append(line)
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept


def backup_path(course: Path) -> Path:
    path = course / f"{INSTRUCTOR_FILE}.bak"
    number = 1
    while path.exists():
        path, number = course / f"{INSTRUCTOR_FILE}.bak{number}", number + 1
    return path


def instructor_text(kept: list[str] = (), backup: str = "") -> str:
    return INSTRUCTOR.format(kept=KEPT.format(backup=backup) + "\n".join(kept) + "\n" if kept else "")


def migrate(course: Path) -> Path | None:
    """An nbgrader_config.py an earlier version wrote whole, rewritten once as the instructor's (their lines kept,
    the old file kept whole beside it); returns the backup's path, None when there was nothing to migrate."""
    path = course / INSTRUCTOR_FILE
    old = path.read_text(encoding="utf-8")
    if not is_old(old):
        return None
    backup = backup_path(course)
    write_atomic(backup, old)
    write_atomic(path, instructor_text(instructor_lines(old), backup.name))
    return backup


def recorded(course: Path) -> tuple[str | None, int | None]:
    """(gradebook, cell limit) that earlier runs were given (--db, --cell-timeout) and the generated file records
    (or, for a course an earlier version made, its nbgrader_config.py), None for what none was given."""
    generated, instructor = course / GENERATED_FILE, course / INSTRUCTOR_FILE
    if generated.is_file():
        try:
            config = own_lines(generated)
        except SettingsError as error:
            raise SettingsError(
                f"{error}. It is autograder's own file: delete it and run again (with --db URL when the course's "
                "gradebook is not its gradebook.db, and --cell-timeout when it had one)"
            ) from None
    elif instructor.is_file() and is_old(instructor.read_text(encoding="utf-8")):
        config = own_lines(instructor)
    else:
        return None, None
    db = config.CourseDirectory.get("db_url") if "CourseDirectory" in config else None
    timeout = config.SurvivingExecute.get("timeout") if "SurvivingExecute" in config else None
    return (str(db) if db else None), (None if timeout is None else int(timeout))


def refuse_contradiction(course: Path, db: str | None, cell_timeout: int | None) -> None:
    """SettingsError when --db or --cell-timeout differs from a line of the instructor's nbgrader_config.py, which
    would override it for nbgrader's commands and Formgrader (the run and they would then differ)."""
    path = course / INSTRUCTOR_FILE
    if not path.is_file() or is_old(path.read_text(encoding="utf-8")):
        return
    mine = own_lines(path)
    named = {
        "--db": (
            db,
            mine.CourseDirectory.get("db_url") if "CourseDirectory" in mine else None,
            "CourseDirectory.db_url",
        ),
        "--cell-timeout": (
            cell_timeout,
            mine.SurvivingExecute.get("timeout") if "SurvivingExecute" in mine else None,
            "SurvivingExecute.timeout",
        ),
    }
    for flag, (given, written, trait) in named.items():
        if given is not None and written is not None and str(given) != str(written):
            raise SettingsError(
                f"{flag} {given} differs from c.{trait} = {written!r} in {path}, which nbgrader's commands and "
                f"Formgrader read: change or remove that line, or run without {flag}"
            )


def write_course_files(course: Path, *, db: str | None = None, cell_timeout: int | None = None) -> list[str]:
    """autograder_config.py written again with ``db`` and ``cell_timeout`` (None: what earlier runs were given);
    the instructor's nbgrader_config.py written when missing, or migrated once from an earlier version's. Returns
    notes for the instructor (a migration, a file that does not load the generated one); SettingsError when a
    given value contradicts a line of the instructor's."""
    course = Path(course).absolute()
    try:
        earlier_db, earlier_timeout = recorded(course)
    except SettingsError:
        if db is None:  # it may have named the course's gradebook: never guessed
            raise
        earlier_db, earlier_timeout = None, None
    if not (course / GENERATED_FILE).exists():  # the instructor's file refuses to be read without it
        write_atomic(course / GENERATED_FILE, generated_text(course))
    refuse_contradiction(course, db, cell_timeout)
    db = db or earlier_db
    cell_timeout = earlier_timeout if cell_timeout is None else cell_timeout
    write_atomic(course / GENERATED_FILE, generated_text(course, db=db, cell_timeout=cell_timeout))
    path, notes = course / INSTRUCTOR_FILE, []
    if not path.exists():
        write_atomic(path, instructor_text())
    else:
        backup = migrate(course)
        if backup is not None:
            notes.append(
                f"{path} is yours from now on (autograder writes {GENERATED_FILE} instead); your lines are kept in "
                f"it, and the file as it was in {backup.name}"
            )
        if GENERATED_FILE not in path.read_text(encoding="utf-8"):
            notes.append(
                f"{path} does not load {GENERATED_FILE}: nbgrader's commands and Formgrader will not run the course's "
                f"grading chain; add this line near its top: {LOAD_LINE}"
            )
    return notes
