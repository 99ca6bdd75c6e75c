"""A whole class through nbgrader: release, collect, autograde with feedback in parallel, export, the grade table.

    python -m autograder.classroom                                   # course demo/, the bundled submissions
    python -m autograder.classroom --course /srv/attention --submissions /srv/collected
    python -m autograder.classroom --assignment positions --source /srv/assignments   # another assignment
    python -m autograder.classroom --jobs 8                          # 8 local worker processes (default: one per core)
    python -m autograder.classroom --scheduler tcp://10.0.0.5:8786   # on a Dask cluster
    python -m autograder.classroom --regrade                         # grade every submission again
    python -m autograder.classroom --cell-timeout 20                 # a shorter per-cell limit in the kernel

Steps, each checked:

1. the course folder: made on the first run (a ``nbgrader_config.py`` that loads the repository's one and
   sets the course root, ``lib`` linked in, so the notebooks' setup cell finds the course library as it
   does in the repository); later runs keep it and its gradebook; each run copies the assignment's folder
   (its notebook and checks.py) from ``--source`` (default: the repository's source/) into the course's
   source/, beside the other assignments graded there (``--fresh`` starts the course again from nothing);
2. the assignment and the new students in gradebook.db (nbgrader's Gradebook API, as ``nbgrader db
   assignment add`` and ``nbgrader db student import`` do);
3. ``generate_assignment`` (nbgrader's NbGraderAPI, in this process): source/ -> release/, skipped when
   source/ has not changed since the last release;
4. collection, as nbgrader documents it: each ``<submissions>/<student>/<assignment>/`` is copied to
   ``submitted/<student>/<assignment>/`` (only when it changed);
5. grading (autograder.class_grading): each new or changed submission is one task on a Dask worker, which runs
   nbgrader's Autograde and GenerateFeedback on it in a private folder, the notebook's kernel and the
   hidden checks in their sandboxes; each result is recorded in gradebook.db as it arrives, atomically;
6. grades.csv with nbgrader's CsvExportPlugin (what ``nbgrader export --to grades.csv`` writes, one row per
   student) and checks.csv with autograder.export.ChecksExport (one row per student per check), each
   written whole then renamed into place;
   nbgrader's own commands are started in this process rather than as ``nbgrader ...`` programs, which
   spend some 3 s each importing nbgrader;
7. the class's grade table, from checks.csv, with a note for each notebook whose kernel died, ran out of
   time or could not be read.

One run grades a course at a time: a second one stops, naming the running one (host, process, since when),
or waits for it with ``--wait``; the lock of a run that was killed is taken over (autograder.class_grading.CourseLock).
The gradebook is the course's gradebook.db (SQLite), or the database ``--db URL`` names (PostgreSQL:
``postgresql://user@host/db``), which is written into the course's nbgrader_config.py so that nbgrader's own
commands and Formgrader use it too; later runs read it from there.

An assignment is a folder of the source folder: its notebook and its hidden checks (checks.py), chosen with
``--assignment`` (default: the only one there); nothing here knows an assignment by name.

Every upload under the submissions folder is accounted for: each student's notebook (nbgrader's
<student>/<assignment>/<notebook>.ipynb, or the name in another case, a copy such as "attention (1).ipynb", the
notebook directly in the student's folder), and the rest listed as "NOT GRADED: <path>: why", in the table too.
Exit status: 0 all graded; 1 a step failed, or a student could not be graded; 2 every student graded, but some
uploads were not (other notebooks, copies).

Any existing, non-empty folder that this command did not make (no ``.classroom`` file in it) is refused as
the course folder. Nothing is written under the repository's source/ or examples/, nor into the submissions.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignments import Layout, NoAssignment, find
from autograder.class_grading import REPOSITORY, course_config
from autograder.students import id_problem

MARKER = ".classroom"  # written into every course folder this command makes


class PipelineError(RuntimeError):
    """A step failed; the message says which and why."""


# --- running nbgrader ------------------------------------------------------------------------------


def nbgrader_executable() -> str:
    """The nbgrader command installed next to this Python."""
    candidate = Path(sys.executable).parent / "nbgrader"
    if not candidate.exists():
        raise PipelineError(
            f"no nbgrader next to {sys.executable} (looked for {candidate}): "
            "install the project into this environment, pip install -e ."
        )
    return str(candidate)


def nbgrader_environment() -> dict:
    """This environment, with the venv's bin/ first on PATH (nbgrader runs alembic) and the repository importable."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPOSITORY), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("MPLBACKEND", "Agg")
    return env


def _nbgrader(course: Path, args: tuple, timeout: float) -> tuple[int | None, str]:
    """(exit code, or None after a timeout; output) of ``nbgrader *args`` run in ``course``."""
    process = subprocess.Popen(
        [nbgrader_executable(), *args],
        cwd=course,
        env=nbgrader_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    expired = threading.Event()

    def stop():
        expired.set()
        process.kill()

    timer = threading.Timer(timeout, stop)
    timer.start()
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
        code = process.wait()
    finally:
        timer.cancel()
        process.stdout.close()
    return (None if expired.is_set() else code), "".join(lines)


def run_nbgrader(course: Path, *args: str, log: Path | None = None, timeout: float = 3600) -> str:
    """Run ``nbgrader *args`` in ``course``; return its output, raise PipelineError (with the output's end) if it
    fails."""
    code, output = _nbgrader(course, args, timeout)
    line = " ".join(args)
    if log is not None:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"$ nbgrader {line}   (exit {code})\n{output}\n")
    if code is None:
        raise PipelineError(f"`nbgrader {line}` did not finish in {timeout:g} s")
    if code != 0:
        problems = [text for text in output.splitlines() if "| ERROR]" in text or "| CRITICAL]" in text]
        shown = "\n".join(problems[-15:]) or "\n".join(output.splitlines()[-25:])
        raise PipelineError(
            f"`nbgrader {line}` failed (exit {code}) in {course}:\n{shown}"
            + (f"\n(full output in {log})" if log else "")
        )
    return output


def write_course_config(course: Path, extra: str = "") -> Path:
    path = course / "nbgrader_config.py"
    path.write_text(course_config(course, "this course folder", extra))
    return path


def release_notebook(source: Path, scratch: Path) -> bytes:
    """The release version of the assignment folder ``source`` (source/<assignment>/), made by nbgrader
    generate_assignment in ``scratch``."""
    layout = find(source.parent, source.name)
    (scratch / "source").mkdir(parents=True)
    shutil.copytree(source, scratch / "source" / layout.name)
    write_course_config(scratch)
    run_nbgrader(scratch, "generate_assignment", layout.name, "--force")
    return (scratch / "release" / layout.name / f"{layout.notebook}.ipynb").read_bytes()


# --- the steps -----------------------------------------------------------------------------------------


def say(message: str):
    print(message, flush=True)


def check_course_folder(course: Path) -> None:
    """Refuse a --course that is a file, the repository, inside its source/ or examples/, or a folder that
    this command did not make."""
    if course.exists() and not course.is_dir():
        raise PipelineError(f"--course {course} is a file, not a folder: name a folder (made on the first run)")
    resolved = course.resolve()
    inside = [
        folder
        for folder in (REPOSITORY / "source", REPOSITORY / "examples")
        if resolved == folder or folder in resolved.parents
    ]
    if resolved == REPOSITORY or inside:
        raise PipelineError(
            f"refusing to use {course} as the course folder: it is the repository or inside its source/ or examples/"
        )
    if course.exists() and any(course.iterdir()):
        if not (course / MARKER).exists():
            raise PipelineError(
                f"{course} exists and is not a course folder made by autograder.classroom "
                f"(no {MARKER} file in it): choose another --course, or empty it yourself"
            )


def prepare_course(
    course: Path, source: Path, layout: Layout, cell_timeout: int | None, fresh: bool = False, db: str | None = None
) -> None:
    """Make the course folder, or keep the one an earlier run made (with its gradebook); copy the assignment's
    folder from ``source`` into its source/.
    ``db``: the gradebook's URL when it is not the course's gradebook.db (written into the course's
    nbgrader_config.py, so nbgrader's own commands and Formgrader use it too)."""
    from autograder.class_grading import LEDGER

    check_course_folder(course)
    if fresh and course.exists():  # everything but the lock this run holds
        for entry in course.iterdir():
            if entry.name == LEDGER:
                for inner in entry.iterdir():
                    if inner.name != "lock":
                        shutil.rmtree(inner) if inner.is_dir() and not inner.is_symlink() else inner.unlink()
            else:
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        if db is not None and not db.startswith("sqlite"):
            from autograder.class_grading import shown_url

            say(
                f"      --fresh: the gradebook at {shown_url(db)} is kept (only the course's own gradebook.db is"
                " deleted)"
            )
    course.mkdir(parents=True, exist_ok=True)
    (course / MARKER).write_text("made by python -m autograder.classroom; --fresh deletes and recreates this folder\n")
    shutil.rmtree(course / "source" / layout.name, ignore_errors=True)
    shutil.copytree(
        source / layout.name,
        course / "source" / layout.name,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    if not (course / "lib").is_symlink():
        (course / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
    write_course_config(course, timeout_config(cell_timeout) + db_config(course, db))


def db_config(course: Path, db: str | None) -> str:
    """nbgrader configuration lines for a gradebook other than the course's gradebook.db ("" for that one)."""
    from autograder.class_grading import sqlite_url

    if db is None or db == sqlite_url(course):
        return ""
    return f"\n# --db: the gradebook, for nbgrader's commands and Formgrader too\nc.CourseDirectory.db_url = {db!r}\n"


def course_db(course: Path, db: str | None = None) -> str:
    """The gradebook's URL (class_grading.course_db), a PipelineError when the course's configuration is broken."""
    from autograder.class_grading import GradingError
    from autograder.class_grading import course_db as named

    try:
        return named(course, db)
    except GradingError as error:
        raise PipelineError(str(error)) from None


def timeout_config(cell_timeout: int | None) -> str:
    """nbgrader configuration lines for --cell-timeout ("" for the repository's default)."""
    return "" if cell_timeout is None else f"\n# --cell-timeout\nc.SurvivingExecute.timeout = {int(cell_timeout)}\n"


def copy_pattern(notebook: str) -> re.Pattern:
    """A copy of the notebook as a browser or a file manager names it: "attention (1)", "attention-copy",
    "Attention 2"."""
    return re.compile(rf"{re.escape(notebook)}(?:\s*\(\d+\)|[ _-]?copy(?:\s*\d+)?|[ _-]\d+)?", re.IGNORECASE)


@dataclass
class Uploads:
    """What a submissions folder holds: the notebook graded for each student, and every upload that is not
    graded, with why (``not_graded``: {path under the submissions folder: why})."""

    folders: dict = field(default_factory=dict)  # {student: the folder handed in as submitted/<student>/<assignment>/}
    notebooks: dict = field(default_factory=dict)  # {student: the notebook's name in that folder}
    not_graded: dict = field(default_factory=dict)
    students_not_graded: dict = field(default_factory=dict)  # {student id: why none of their uploads is graded}

    @property
    def students(self) -> list[str]:
        return sorted(self.folders)

    def notes(self) -> dict[str, str]:
        """{student: "not graded: ..."} for the table."""
        notes = dict(self.students_not_graded)
        for path, why in self.not_graded.items():
            student = path.split("/", 1)[0]
            if student in self.folders:
                notes[student] = "; ".join(filter(None, [notes.get(student), f"{path.split('/', 1)[1]}: {why}"]))
        return {
            student: note if note.startswith("not graded") else f"not graded: {note}" for student, note in notes.items()
        }


def survey(submissions: Path, layout: Layout) -> Uploads:
    """Each student's notebook under ``submissions``, by nbgrader's layout (<student>/<assignment>/<notebook>.ipynb)
    and the course's own rules for what students actually hand in: the name in another case
    (``Attention.ipynb``, an ``Attention/`` folder), a copy (``attention (1).ipynb``) when it is the only one,
    the notebook directly in the student's folder. Every other upload is listed with why it is not graded.
    Names starting with a dot (.ipynb_checkpoints, .DS_Store) are not uploads and are left out."""
    if not submissions.is_dir():
        raise PipelineError(
            f"no submissions folder {submissions}" + (" (it is a file)" if submissions.exists() else "")
        )
    assignment, notebook, copy = layout.name, layout.notebook, copy_pattern(layout.notebook)
    expected = f"<student>/{assignment}/{notebook}.ipynb"
    found = Uploads()
    for entry in sorted(submissions.iterdir()):
        name = entry.name
        if name.startswith("."):
            continue
        if not entry.is_dir() or entry.is_symlink():
            found.not_graded[name] = f"not in a student's folder (expected {expected})"
            continue
        refused = id_problem(name)  # a student id reaches file names and pages: only a safe pattern
        if refused:
            found.students_not_graded[name] = f"not graded: {refused}"
            found.not_graded[name] = refused
            continue
        folder = entry / assignment
        if not folder.is_dir():
            same = [
                inner
                for inner in sorted(entry.iterdir())
                if inner.is_dir() and inner.name.lower() == assignment.lower()
            ]
            folder = same[0] if same else entry  # one level up: the notebook directly in the student's folder
        notebooks = sorted(
            path.name
            for path in folder.iterdir()
            if path.suffix.lower() == ".ipynb"
            and path.is_file()
            and not path.is_symlink()
            and not path.name.startswith(".")
        )
        exact = [n for n in notebooks if n == f"{notebook}.ipynb"]
        close = (
            exact
            or [n for n in notebooks if n[:-6].lower() == notebook.lower()]
            or [n for n in notebooks if copy.fullmatch(n[:-6])]
        )
        prefix = folder.relative_to(submissions).as_posix()
        if not close:
            uploads = sorted(
                path.relative_to(entry).as_posix()
                for path in entry.rglob("*")
                if path.is_file() and not any(part.startswith(".") for part in path.relative_to(entry).parts)
            )
            listed = ", ".join(uploads[:5]) + (f" and {len(uploads) - 5} more" if len(uploads) > 5 else "")
            why = f"no {notebook}.ipynb" + (f" (found {listed})" if uploads else " (the folder is empty)")
            found.students_not_graded[name] = f"not graded: {why}"
            found.not_graded[name] = why
            continue
        chosen = close[0] if len(close) == 1 or exact else max(close, key=lambda n: ((folder / n).stat().st_mtime, n))
        found.folders[name], found.notebooks[name] = folder, chosen
        for other in notebooks:
            if other == chosen:
                continue
            why = (
                f"another copy of the notebook ({chosen} is graded)"
                if other in close or copy.fullmatch(other[:-6])
                else f"not the assignment's notebook ({chosen} is graded)"
            )
            found.not_graded[f"{prefix}/{other}"] = why
    if not found.folders:
        raise PipelineError(
            f"no submissions in {submissions}: expected {expected} folders"
            + "".join(f"\n  not graded: {path}: {why}" for path, why in found.not_graded.items())
        )
    return found


def find_submissions(submissions: Path, layout: Layout) -> list[str]:
    """The ids of the students with a notebook to grade (see ``survey``)."""
    return survey(submissions, layout).students


def register(course: Path, layout: Layout, students: list[str], db: str | None = None) -> list[str]:
    """The assignment and the students in gradebook.db (nbgrader's Gradebook API, what ``nbgrader db assignment
    add`` and ``nbgrader db student import`` do); returns the students added."""
    from nbgrader.api import Gradebook

    os.environ["PATH"] = nbgrader_environment()["PATH"]  # a new gradebook runs alembic from PATH
    with Gradebook(db or course_db(course)) as gradebook:
        gradebook.update_or_create_assignment(layout.name)
        known = {student.id for student in gradebook.students}
        added = [student for student in students if student not in known]
        for student in added:
            gradebook.update_or_create_student(student, first_name=student.replace("_", " "))
    return added


def release(course: Path, layout: Layout) -> bool:
    """nbgrader generate_assignment (in-process, nbgrader's NbGraderAPI) when the assignment's source changed
    since its last release or its release is missing; returns whether it ran."""
    from autograder.class_grading import assignment_folder, digest, folder_files, nbgrader_api

    stamp = assignment_folder(course, layout.name) / "release.json"
    source = digest(folder_files(course / "source" / layout.name).items())
    released = course / "release" / layout.name / f"{layout.notebook}.ipynb"
    if released.exists() and stamp.exists() and json.loads(stamp.read_text()).get("source") == source:
        return False
    result = nbgrader_api(course).generate_assignment(layout.name, force=True)
    if not result.get("success"):
        raise PipelineError(
            "nbgrader generate_assignment failed in"
            f" {course}:\n{result.get('log', '')[-3000:]}\n{result.get('error', '')}"
        )
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({"source": source}))
    return True


def export(course: Path, db: str | None = None) -> None:
    """grades.csv (nbgrader's CsvExportPlugin, what ``nbgrader export`` writes) and checks.csv (ChecksExport)."""
    from nbgrader.api import Gradebook
    from nbgrader.plugins import CsvExportPlugin

    from autograder.export import ChecksExport

    with Gradebook(db or course_db(course)) as gradebook:
        for plugin, name in ((CsvExportPlugin(), "grades.csv"), (ChecksExport(course_root=str(course)), "checks.csv")):
            temporary = course / f".{name}.writing"
            plugin.to = str(temporary)
            try:
                plugin.export(gradebook)
                os.replace(temporary, course / name)
            except OSError as error:  # a full disk: the old file stays, the half-written one goes
                temporary.unlink(missing_ok=True)
                raise PipelineError(f"could not write {course / name}: {error}") from None


def collect(course: Path, submissions: Path, layout: Layout, students: list[str] | Uploads) -> list[str]:
    """Manual collection: each student's assignment folder goes to submitted/<student>/<assignment>/, byte for
    byte, when it differs from what is there (a new folder is swapped in whole), its notebook named as the
    assignment's and the other notebooks (copies, other names: not graded, see ``survey``) left out.
    ``students``: a survey, or ids laid out as nbgrader's <student>/<assignment>/<notebook>.ipynb. Returns the
    students copied."""
    from autograder.class_grading import folder_files

    named = f"{layout.notebook}.ipynb"
    if not isinstance(students, Uploads):
        students = Uploads({s: submissions / s / layout.name for s in students}, {s: named for s in students})
    copied = []
    for student in students.students:
        source, target = students.folders[student], course / "submitted" / student / layout.name
        notebook = students.notebooks[student]
        wanted = {
            (named if path == notebook else path): data
            for path, data in folder_files(source).items()
            if path == notebook or not path.lower().endswith(".ipynb") or "/" in path
        }
        if target.exists() and folder_files(target) == wanted:
            continue
        fresh = target.with_name(f".{layout.name}.collecting")
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(
            source,
            fresh,
            symlinks=True,  # links stay links
            ignore=lambda folder, names: [
                n
                for n in names
                if n == ".ipynb_checkpoints"
                or (Path(folder) == source and n.lower().endswith(".ipynb") and n != notebook)
            ],
        )
        if notebook != named:
            os.replace(fresh / notebook, fresh / named)
        if target.exists():
            shutil.rmtree(target)
        os.replace(fresh, target)
        copied.append(student)
    return copied


def kernel_notes(course: Path, layout: Layout, students: list[str]) -> dict[str, str]:
    """{student: note} for notebooks whose kernel died, or whose cells ran out of time, in nbgrader's kernel."""
    notes = {}
    for student in students:
        path = course / "autograded" / student / layout.name / f"{layout.notebook}.ipynb"
        if not path.exists():
            notes[student] = "not autograded"
            continue
        said = []
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells, start=1):
            errors = {
                output.get("ename"): output.get("evalue", "")
                for output in cell.get("outputs", [])
                if output.get("output_type") == "error"
            }
            names = set(errors)
            if "DeadKernelError" in names:
                why = " (too many processes)" if "processes" in errors["DeadKernelError"] else ""
                said.append(f"kernel died in cell {number}{why}; later cells not run")
            elif "NotebookTimeoutError" in names:
                said.append(f"the notebook ran out of time at cell {number}")
            elif names & {"CellTimeoutError", "KeyboardInterrupt"}:
                said.append(f"cell {number} timed out and was interrupted")
        if said:
            notes[student] = "; ".join(said)
    return notes


def grade_table(checks_csv: Path, notes: dict[str, str], assignment: str | None = None):
    """The class's closing table (pandas DataFrame): one row per student, the automatic total, the written
    answers, the functions that lost points (short names) and a note. Every check's points are in checks.csv
    and the report (reports/<assignment>.html)."""
    import pandas as pd

    rows = pd.read_csv(checks_csv, dtype={"student_id": str})
    if assignment is not None:
        rows = rows[rows["assignment"] == assignment]
    auto = rows[rows["cell_type"] == "code"]
    written = rows[rows["cell_type"] != "code"]
    order = list(dict.fromkeys(auto["grade_id"]))
    students = sorted(set(rows["student_id"]))
    by_student = auto.groupby("student_id")
    total, top = by_student["score"].sum(), by_student["max_score"].sum()
    short = {grade_id: grade_id.removeprefix("check_") for grade_id in order}
    lost = auto[auto["score"] < auto["max_score"] - 1e-9].groupby("student_id")["grade_id"].apply(set)
    pending = written.groupby("student_id")["needs_manual_grade"].sum()
    written_points = written.groupby("student_id")["score"].sum()
    written_top = written.groupby("student_id")["max_score"].sum()
    result = pd.DataFrame(index=pd.Index(students, name="student"))
    result["auto"] = [f"{total.get(s, 0):g} / {top.get(s, 0):g}" for s in students]
    result["written"] = [
        (
            f"{int(pending.get(s, 0))} to grade"
            if pending.get(s, 0)
            else f"{written_points.get(s, 0):g} / {written_top.get(s, 0):g}"
        )
        for s in students
    ]
    result["lost"] = [
        (
            "every check"
            if len(lost.get(s, ())) == len(order) and order
            else " ".join(short[g] for g in order if g in lost.get(s, ()))
        )
        for s in students
    ]
    result["note"] = [notes.get(s, "") for s in students]
    return result


def show(table, width: int = 120) -> str:
    """The table as text at most ``width`` columns wide: long ids, lists of functions and notes are cut (…)."""

    def cut(text, room: int) -> str:
        text = "" if text is None else str(text)
        return text if len(text) <= room else text[: max(room - 1, 0)] + "…"

    columns = list(table.columns)
    cells = [[cut(index, 32), *(str(table.at[index, c]) for c in columns)] for index in table.index]
    header = [table.index.name or "", *columns]
    widths = [max([len(header[i]), *(len(row[i]) for row in cells)]) for i in range(len(header))]
    flexible = [i for i, name in enumerate(header) if name in ("lost", "note")]
    room = width - sum(w for i, w in enumerate(widths) if i not in flexible) - (len(header) - 1) * 2
    for i in flexible:  # the lost functions first, the note gets what is left (at least 20 when it has any)
        others = sum(min(widths[j], max(20, room // 2)) for j in flexible if j > i)
        widths[i] = max(len(header[i]), min(widths[i], room - others - 2 * (len(flexible) - 1 - flexible.index(i))))
        room -= widths[i]
    lines = ["  ".join(cut(text, w).ljust(w) for text, w in zip(row, widths)).rstrip() for row in [header, *cells]]
    return "\n".join(lines)


def run_pipeline(
    course: Path,
    submissions: Path,
    cell_timeout: int | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    regrade: bool = False,
    fresh: bool = False,
    progress: bool = True,
    db: str | None = None,
    wait: bool = False,
    assignment: str | None = None,
    source: Path | None = None,
) -> dict:
    """Every step, holding the course's lock (one run per course at a time; ``wait``: wait for a running one
    instead of refusing), for ``assignment`` of the folder ``source`` (default: the repository's source/, and
    the only assignment there). Returns {"students", "table", "notes", "summary", "seconds", "uploads",
    "layout", ...}. Raises PipelineError when a step fails."""
    from autograder.class_grading import LEDGER, CourseLock, GradingError

    course, submissions = course.absolute(), submissions.absolute()
    source = (source or REPOSITORY / "source").absolute()
    try:
        layout = find(source, assignment)
    except NoAssignment as error:
        raise PipelineError(str(error)) from None
    uploads = survey(submissions, layout)
    check_course_folder(course)
    (course / LEDGER).mkdir(parents=True, exist_ok=True)
    if not (course / MARKER).exists():
        (course / MARKER).write_text(
            "made by python -m autograder.classroom; --fresh deletes and recreates this folder\n"
        )
    try:
        lock = CourseLock(course, wait=wait, say=lambda message: say(f"      {message}"))
        lock.__enter__()
    except GradingError as error:
        raise PipelineError(str(error)) from None
    try:
        result = _run_locked(
            course, submissions, source, layout, uploads, cell_timeout, jobs, scheduler, regrade, fresh, progress, db
        )
    finally:
        lock.__exit__(None, None, None)
    return result


def _run_locked(
    course, submissions, source, layout, uploads, cell_timeout, jobs, scheduler, regrade, fresh, progress, db
) -> dict:
    from autograder.class_grading import GradingError, grade_class, shown_url

    students = uploads.students
    db = course_db(course, db)  # before the course's configuration is written again
    seconds = {}

    def step(number: int, title: str):
        say(f"[{number}/7] {title}")
        return time.monotonic()

    started = step(1, f"the course folder {course}, assignment {layout.name}")
    prepare_course(course, source, layout, cell_timeout, fresh, db)
    seconds["prepare"] = time.monotonic() - started

    started = step(2, f"the assignment and {len(students)} students in the gradebook {shown_url(db)}")
    added = register(course, layout, students, db)
    say(f"      {len(added)} new students")
    seconds["gradebook"] = time.monotonic() - started

    started = step(3, "releasing: nbgrader generate_assignment")
    say("      released" if release(course, layout) else f"      source/{layout.name} unchanged since the last release")
    seconds["release"] = time.monotonic() - started

    started = step(4, f"collecting {len(students)} submissions from {submissions} into submitted/")
    copied = collect(course, submissions, layout, uploads)
    say(f"      {len(copied)} new or changed")
    seconds["collect"] = time.monotonic() - started

    where = f"the Dask scheduler {scheduler}" if scheduler else f"{jobs or os.cpu_count()} local workers"
    started = step(
        5,
        f"grading new and changed submissions on {where}: nbgrader autograde and feedback, "
        "each notebook in its own sandboxed kernel, the hidden checks outside it",
    )
    try:
        summary = grade_class(
            course,
            layout.name,
            students,
            scheduler=scheduler,
            jobs=jobs,
            config=timeout_config(cell_timeout),
            progress=progress,
            regrade=regrade,
            db=db,
        )
    except GradingError as error:
        raise PipelineError(str(error)) from None
    for student, what in summary.repaired.items():
        say(f"      repaired what a stopped run left of {student}: {what}")
    for worker, why in summary.refused_workers.items():
        say(f"      worker {worker} not used: {why}")
    say(f"      graded {len(summary.graded)}, up to date {len(summary.skipped)}, failed {len(summary.failed)}")
    regenerated = refresh_feedback(course, layout.name, db)
    say(f"      feedback regenerated for {len(regenerated)} students (hand grades changed)")
    seconds["grade"] = time.monotonic() - started

    started = step(6, "exporting grades.csv (nbgrader's CSV) and checks.csv (autograder.export.ChecksExport)")
    export(course, db)
    seconds["export"] = time.monotonic() - started

    step(7, "the class's grades")
    notes = kernel_notes(course, layout, [s for s in students if s not in summary.failed])
    for student, note in summary.notes.items():
        notes[student] = "; ".join(filter(None, [note, notes.get(student)]))
    for student, note in uploads.notes().items():
        notes[student] = "; ".join(filter(None, [notes.get(student), note]))
    table = grade_table(course / "checks.csv", notes, layout.name)
    for student in sorted(uploads.students_not_graded):  # a row each, with why
        table.loc[student] = ""
        table.loc[student, "note"] = uploads.students_not_graded[student]
    started = time.monotonic()
    try:  # the instructor's report (autograder.report): a failure to write it loses no grade
        from autograder.report import ReportOptions, write_report

        report = write_report(course=course, assignment=layout.name, options=ReportOptions(db=db)).summary()
    except Exception as error:  # noqa: BLE001 - said in the closing lines, the grades are recorded
        report = f"not written ({type(error).__name__}: {error})"
    seconds["report"] = time.monotonic() - started
    return {
        "students": students,
        "table": table,
        "notes": notes,
        "summary": summary,
        "seconds": seconds,
        "uploads": uploads,
        "db": db,
        "report": report,
        "layout": layout,
    }


def refresh_feedback(course: Path, assignment: str, db: str | None) -> list[str]:
    """The feedback pages made again where hand grades changed since they were made (autograder.feedback.refresh)."""
    from autograder.feedback import refresh

    try:
        return refresh(course, assignment, db)
    except Exception as error:  # noqa: BLE001 - nbgrader's template or the gradebook: say which
        raise PipelineError(f"regenerating the feedback: {type(error).__name__}: {error}") from None


def feedback_only(course: Path, source: Path, assignment: str | None, db: str | None, wait: bool) -> int:
    """--feedback-only: after hand grading in Formgrader, the pages of exactly the students whose hand grades
    changed, holding the course's lock; nothing is graded, released or collected."""
    from autograder.class_grading import CourseLock, GradingError

    course = course.absolute()
    try:
        if not (course / MARKER).exists():
            raise PipelineError(f"{course} is not a course folder made by python -m autograder.classroom")
        name = find(source.absolute(), assignment).name
        with CourseLock(course, wait=wait, say=say):
            students = refresh_feedback(course, name, db)
    except (PipelineError, NoAssignment, GradingError) as error:
        print(f"FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    say(
        f"feedback regenerated for {len(students)} students (hand grades changed)"
        + (f": {', '.join(students)}" if students else "")
    )
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.classroom", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--course",
        type=Path,
        default=REPOSITORY / "demo",
        help="the course folder, made on the first run and kept (default: demo/ in the repository, not committed)",
    )
    parser.add_argument(
        "--submissions",
        type=Path,
        default=REPOSITORY / "examples" / "submissions",
        help="folder of <student>/<assignment>/<notebook>.ipynb (default: examples/submissions)",
    )
    parser.add_argument(
        "--assignment",
        default=None,
        help=(
            "the assignment to grade: a folder of --source with its notebook and checks.py "
            "(default: the only one there)"
        ),
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=REPOSITORY / "source",
        help="the folder holding the assignments (default: the repository's source/)",
    )
    parser.add_argument(
        "--cell-timeout",
        type=int,
        default=None,
        help="seconds per cell in the student's kernel (default: nbgrader_config.py's)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="local worker processes, each grading one notebook at a time (default: one per core)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        help="address of a Dask scheduler (tcp://host:8786) whose workers grade; default: this machine",
    )
    parser.add_argument(
        "--regrade", action="store_true", help="grade every submission again, not only new or changed ones"
    )
    parser.add_argument(
        "--fresh", action="store_true", help="delete the course folder (gradebook included) and start again"
    )
    parser.add_argument(
        "--db",
        default=None,
        metavar="URL",
        help=(
            "the gradebook's database (nbgrader's CourseDirectory.db_url), e.g. "
            "postgresql://grader@dbhost/attention; default: the one the course's nbgrader_config.py "
            "names, else the course's gradebook.db (SQLite)"
        ),
    )
    parser.add_argument(
        "--wait", action="store_true", help="when another run is grading this course, wait for it instead of stopping"
    )
    parser.add_argument(
        "--unsandboxed",
        action="store_true",
        help=(
            "grade even without bubblewrap: every student's code can then read and change anything "
            "your user can (the reference, the hidden checks, the gradebook, other submissions)"
        ),
    )
    parser.add_argument(
        "--feedback-only",
        action="store_true",
        help=(
            "only make the feedback pages again of the students whose hand grades (Formgrader) changed since "
            "their pages were made; every run does this after grading"
        ),
    )
    parser.add_argument("--export", choices=("canvas", "moodle"), help="only write lms/<LMS>.csv (autograder.lms)")
    parser.add_argument("--roster", type=Path, help="--export's roster CSV (default: <course>/roster.csv)")
    parser.add_argument(
        "--lti", type=Path, metavar="CONFIG", help="after grading, send scores to the LMS (autograder.lti)"
    )
    args = parser.parse_args(argv)
    if args.export:  # reads the gradebook only: no sandbox needed
        from autograder.lms import ExportOptions, export_command

        return export_command(ExportOptions(course=args.course, lms=args.export, db=args.db, roster=args.roster))
    if args.feedback_only:  # runs no student code: no sandbox needed
        return feedback_only(args.course, args.source, args.assignment, args.db, args.wait)
    from autograder import sandbox

    if sandbox.why_unprotected() is not None:
        if not (args.unsandboxed or sandbox.unsandboxed_allowed()):  # the flag, or ATTENTION_UNSANDBOXED=1
            print(f"REFUSED: {sandbox.refusal()}", file=sys.stderr, flush=True)
            return 3
        os.environ[sandbox.UNSANDBOXED] = "1"  # read by the kernels and runners this run starts, and its local workers
        sandbox.warn_once()
    started = time.monotonic()
    try:
        result = run_pipeline(
            args.course,
            args.submissions,
            args.cell_timeout,
            args.jobs,
            args.scheduler,
            args.regrade,
            args.fresh,
            db=args.db,
            wait=args.wait,
            assignment=args.assignment,
            source=args.source,
        )
    except PipelineError as error:
        print(f"FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    say("")
    say(show(result["table"]))
    say("")
    course = args.course.absolute()
    failed = result["summary"].failed
    for student, why in failed.items():
        say(f"NOT GRADED: {student}: {why}")
    uploads = result["uploads"]
    for path, why in uploads.not_graded.items():
        say(f"NOT GRADED: {path}: {why}")
    from autograder.class_grading import shown_url

    say(
        f"gradebook {shown_url(result['db'])}; grades {course / 'grades.csv'}; per check {course / 'checks.csv'}; "
        f"feedback {course / 'feedback'}/<student>/{result['layout'].name}/{result['layout'].notebook}.html"
    )
    say(f"report {result['report']}")
    if args.lti:  # the scores to the LMS's line items; what cannot be sent stays in the course's outbox
        from autograder.lti.passback import passback_lines

        for line in passback_lines(args.lti, course, result["db"]):
            say(line)
    steps = ", ".join(f"{name} {value:.0f} s" for name, value in result["seconds"].items())
    say(f"done in {time.monotonic() - started:.0f} s ({steps})")
    return 1 if failed or uploads.students_not_graded else 2 if uploads.not_graded else 0


if __name__ == "__main__":
    sys.exit(main())
