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
old file is kept whole beside it (nbgrader_config.py.bak), so no line of the instructor's is lost. A generated file
that names a module of the engine that has moved since (``autograder.pipeline``, autograder.notebook.pipeline since
the packages) is written again, its gradebook and cell limit read from its text; an instructor's file that names
one is refused, saying each line and where the name is now (``removed_names``). For nbgrader's own commands in
such a folder, ``python -m autograder.course.config --course DIR`` writes the configuration again without grading,
and the instructor's file stops nbgrader, saying to run it, when the generated file cannot be loaded.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

from autograder import REPOSITORY
from autograder.files import write_atomic
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
_again = f"python -m autograder.course.config --course {{os.path.dirname(_generated)}}"  # writes it again
if not os.path.exists(_generated):  # load_subconfig would skip a missing file without a word
    # SystemExit, not an error nbgrader would log and pass over: its defaults release checks.py and reference.py
    raise SystemExit(f"{{_generated}} is missing: run {{_again}}; nothing was done")
try:
    load_subconfig(_generated)  # noqa: F821
except Exception as _error:  # one an earlier version wrote, naming a module that has moved since: the same
    raise SystemExit(f"{{_generated}} cannot be loaded ({{type(_error).__name__}}: {{_error}}): run {{_again}}; "
                     "nothing was done") from None

# Keep every line below one that runs: nbgrader logs an error in this file and carries on without all of it (the
# environment's own file, python -m autograder.course.guard, still keeps checks.py and reference.py out of a release).

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


# The engine's modules before it was split into packages by stage (issue 25), and where each one is now: a course
# folder's configuration written by an earlier version may still name them
MOVED = {
    **{
        f"answer_{name}": f"answers.{name}" for name in ("budget", "grading", "process", "runner", "sandbox", "session")
    },
    "stand_ins": "answers.stand_ins",
    **{name: f"course.{name}" for name in ("assignments", "classroom", "export", "formgrader", "students", "table")},
    "uploads": "course.uploads",
    "course_config": "course.config",
    "bridge": "hub.bridge",
    "collect": "hub.collect",
    "hub_runtime": "hub.runtime",
    "lti": "lms.lti",
    "notebook_grading": "notebook.autograde",
    "student_kernel": "notebook.kernel",
    **{name: f"notebook.{name}" for name in ("feedback", "pipeline", "sanitise", "stubs")},
    "similarity": "report.similarity",
    **{name: f"service.{name}" for name in ("attempts", "instant", "policy")},
}
DOTTED = re.compile(r"autograder(?:\.[A-Za-z_]\w*)+")


def removed_names(path: Path) -> list[tuple[int, str, str]]:
    """(line, name, where it is now or "") for each name of the engine's that the configuration file ``path`` imports
    or sets as a value (``c.ExchangeFactory.collect = "autograder.collect.OwnCollect"``) and that no longer exists:
    ``autograder.pipeline`` is autograder.notebook.pipeline now. Read, never run; a file Python cannot parse has
    none (loading it says what is wrong)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, ValueError):
        return []
    named = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:  # a module, or a name in it
            named += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names if alias.name != "*"]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.fullmatch(node.value):
            named += [(node.lineno, node.value)]
    found = []
    for number, name in sorted(named):
        gone = first_missing(name) if name.split(".")[0] == "autograder" else None
        if gone is not None and (number, gone) not in [(n, g) for n, g, _ in found]:
            home = MOVED.get(gone.split(".")[1], "") if gone.count(".") == 1 else ""
            found.append((number, gone, f"autograder.{home}" if home else ""))
    return found


def first_missing(name: str) -> str | None:
    """The shortest part of the dotted ``name`` (autograder.x.y) that is neither a module of the engine nor a name in
    the package above it; None when the whole name can be found (a module, or a name inside one)."""
    parts = name.split(".")
    for end in range(2, len(parts) + 1):
        prefix, parent = ".".join(parts[:end]), ".".join(parts[: end - 1])
        try:
            if importlib.util.find_spec(prefix) is not None:
                continue
        except (ImportError, ValueError):  # the parent is a module, not a package: what follows are its names
            return None
        package = importlib.import_module(parent)  # a package of the engine (find_spec found it): its __init__ only
        return None if hasattr(package, parts[end - 1]) else prefix
    return None


def recovered(path: Path) -> tuple[str | None, int | None]:
    """(gradebook, cell limit) from the lines generated_text writes, read as text: for a generated file that cannot
    be loaded (it names a module that has moved since)."""
    text = path.read_text(encoding="utf-8")
    db = re.search(r"^c\.CourseDirectory\.db_url = (.+)$", text, re.M)
    timeout = re.search(r"^c\.SurvivingExecute\.timeout = (\d+)$", text, re.M)
    try:
        url = ast.literal_eval(db.group(1)) if db else None
    except (ValueError, SyntaxError):
        raise SettingsError(
            f"{path} names a module that no longer exists and its gradebook line cannot be read: delete the file "
            "and run again, with --db URL when the course's gradebook is not its gradebook.db"
        ) from None
    return (str(url) if url else None), (int(timeout.group(1)) if timeout else None)


def refuse_removed_names(path: Path) -> None:
    """SettingsError when the instructor's ``path`` names a module of the engine that no longer exists: nbgrader's
    commands would stop on it (or, before this check, run on nbgrader's defaults). Each line, and what to write."""
    found = removed_names(path) if path.is_file() else []
    if found:
        lines = "; ".join(
            f"line {number}: {name} " + (f"is {home} now" if home else "no longer exists")
            for number, name, home in found
        )
        raise SettingsError(
            f"{path} names modules of autograder that have moved ({lines}). This file is yours and is never rewritten:"
            f" change each name to where it is now, or delete a line that loads the grading chain ({GENERATED_FILE},"
            " which it loads first, brings it); then run the command again"
        )


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
    if generated.is_file() and removed_names(generated):  # written by an earlier version: its values, as text
        return recovered(generated)
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
    path = course / INSTRUCTOR_FILE
    if path.is_file() and not is_old(path.read_text(encoding="utf-8")):  # an old one is migrated, then checked
        refuse_removed_names(path)
    stale = removed_names(course / GENERATED_FILE) if (course / GENERATED_FILE).is_file() else []
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
    if stale:
        moved = ", ".join(sorted({name for _, name, _ in stale}))
        notes.append(
            f"{course / GENERATED_FILE} was written by an earlier version and named {moved}, which no longer exists: "
            "written again (its gradebook and cell limit kept)"
        )
    if not path.exists():
        write_atomic(path, instructor_text())
    else:
        backup = migrate(course)
        if backup is not None:
            notes.append(
                f"{path} is yours from now on (autograder writes {GENERATED_FILE} instead); your lines are kept in "
                f"it, and the file as it was in {backup.name}"
            )
        refuse_removed_names(path)
        if GENERATED_FILE not in path.read_text(encoding="utf-8"):
            notes.append(
                f"{path} does not load {GENERATED_FILE}: nbgrader's commands and Formgrader will not run the course's "
                f"grading chain; add this line near its top: {LOAD_LINE}"
            )
    return notes


def main(argv=None) -> int:
    """``python -m autograder.course.config --course DIR``: the course's configuration written again, nothing graded
    (what every class run and hub start does first); for nbgrader's own commands in a course folder an earlier
    version configured."""
    parser = argparse.ArgumentParser(
        prog="python -m autograder.course.config",
        description="Write a course folder's configuration again (autograder_config.py; nbgrader_config.py when it is "
        "missing or an earlier version wrote it whole), keeping its gradebook and cell limit; nothing is graded.",
    )
    parser.add_argument("--course", type=Path, required=True, help="the course folder")
    course = parser.parse_args(argv).course.absolute()
    if not course.is_dir():
        print(f"FAILED: no course folder {course}", file=sys.stderr)
        return 1
    try:
        notes = write_course_files(course)
    except SettingsError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    for note in notes:
        print(note)
    print(f"{course / GENERATED_FILE} written: nbgrader's commands and Formgrader can run in {course}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
