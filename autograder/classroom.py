"""A whole class through nbgrader: release, collect, autograde, feedback, export, and the class's grade table.

    python -m autograder.classroom                                   # course demo/, the bundled submissions
    python -m autograder.classroom --course /tmp/course --submissions examples/submissions
    python -m autograder.classroom --cell-timeout 20                 # a shorter per-cell limit in the kernel
    python -m autograder.classroom --jobs 2                          # two nbgrader autograde processes at once

Steps, each with nbgrader's own command line (the ``nbgrader`` next to this Python), each checked:

1. a fresh course folder: source/ copied from the repository, a ``nbgrader_config.py`` that loads the
   repository's one (traitlets' load_subconfig) and sets the course root, and ``lib`` linked in, so the
   notebooks' setup cell finds the course library as it does in the repository;
2. ``nbgrader db assignment add attention`` and ``nbgrader db student import`` (one row per submission folder);
3. ``nbgrader generate_assignment attention``: source/ -> release/;
4. collection by hand, as nbgrader documents it: each ``<submissions>/<student>/attention/`` is copied to
   ``submitted/<student>/attention/``;
5. ``nbgrader autograde attention``: each notebook runs in its own kernel, the hidden checks run outside it
   (autograder.preprocessor.ExternalVerdicts), the grades go to gradebook.db. With ``--jobs N``, N of them
   run at once, each leaving out the others' students (``--CourseDirectory.student_id_exclude``); the
   gradebook is SQLite, which serialises their short writes;
6. ``nbgrader generate_feedback attention``: feedback/<student>/attention/attention.html;
7. ``nbgrader export --to grades.csv`` (nbgrader's CSV, one row per student) and
   ``nbgrader export --exporter=autograder.export.ChecksExport --to checks.csv`` (one row per student per check);
8. the class's grade table, from checks.csv, with a note for each notebook whose kernel died or ran out of time.

The course folder is recreated on every run when it is one this command made (it holds ``.classroom``); any
other existing, non-empty folder is refused. Nothing is written under the repository's source/ or examples/.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
ASSIGNMENT = "attention"
NOTEBOOK = "attention"
MARKER = ".classroom"  # written into every course folder this command makes
COURSE_CONFIG = '''"""nbgrader configuration of this course folder, written by autograder.classroom: the repository's own
configuration ({repository_config}), with this folder as the course root."""
import os

c = get_config()  # noqa: F821 (nbgrader provides it)
_repository_config = {repository_config!r}
if not os.path.exists(_repository_config):  # load_subconfig would skip a missing file without a word
    raise FileNotFoundError(f"the course configuration {{_repository_config}} is missing")
load_subconfig(_repository_config)  # noqa: F821
c.CourseDirectory.root = {root!r}
'''


class PipelineError(RuntimeError):
    """A step failed; the message says which and why."""


# --- running nbgrader ------------------------------------------------------------------------------


def nbgrader_executable() -> str:
    """The nbgrader command installed next to this Python."""
    candidate = Path(sys.executable).parent / "nbgrader"
    if not candidate.exists():
        raise PipelineError(f"no nbgrader next to {sys.executable} (looked for {candidate}): "
                            "install the project into this environment, pip install -e .")
    return str(candidate)


def nbgrader_environment() -> dict:
    """This environment, with the venv's bin/ first on PATH (nbgrader runs alembic) and the repository importable."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPOSITORY), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("MPLBACKEND", "Agg")
    return env


def _nbgrader(course: Path, args: tuple, timeout: float, echo=None) -> tuple[int | None, str]:
    """(exit code, or None after a timeout; output) of ``nbgrader *args`` run in ``course``.

    echo: called with each line of output as it comes (progress), or None.
    """
    process = subprocess.Popen([nbgrader_executable(), *args], cwd=course, env=nbgrader_environment(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
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
            if echo is not None:
                echo(line)
        code = process.wait()
    finally:
        timer.cancel()
        process.stdout.close()
    return (None if expired.is_set() else code), "".join(lines)


def run_nbgrader_together(course: Path, commands: list[tuple], log: Path | None = None, timeout: float = 3600,
                          echo=None) -> list[str]:
    """Run the nbgrader commands (argument tuples) at the same time in ``course``; their outputs, in order.

    Each one's output goes to ``log``; if any fails, PipelineError says which, with the end of its output.
    echo: called with every line of output as it comes.
    """
    with ThreadPoolExecutor(max_workers=max(1, len(commands))) as pool:
        results = list(pool.map(lambda args: _nbgrader(course, args, timeout, echo), commands))
    failures = []
    for args, (code, output) in zip(commands, results):
        line = " ".join(args)
        if log is not None:
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(f"$ nbgrader {line}   (exit {code})\n{output}\n")
        if code is None:
            failures.append(f"`nbgrader {line}` did not finish in {timeout:g} s")
        elif code != 0:
            problems = [text for text in output.splitlines() if "| ERROR]" in text or "| CRITICAL]" in text]
            shown = "\n".join(problems[-15:]) or "\n".join(output.splitlines()[-25:])
            failures.append(f"`nbgrader {line}` failed (exit {code}) in {course}:\n{shown}")
    if failures:
        raise PipelineError("\n".join(failures) + (f"\n(full output in {log})" if log else ""))
    return [output for _, output in results]


def run_nbgrader(course: Path, *args: str, log: Path | None = None, timeout: float = 3600) -> str:
    """Run ``nbgrader *args`` in ``course``; return its output, raise PipelineError (with the output's end) if it fails."""
    return run_nbgrader_together(course, [args], log=log, timeout=timeout)[0]


def autograde_commands(students: list[str], jobs: int) -> list[tuple]:
    """``nbgrader autograde attention``, or ``jobs`` of them that share the students out (round robin), each
    leaving out the others' students with CourseDirectory.student_id_exclude."""
    groups = [students[k::jobs] for k in range(max(1, min(jobs, len(students))))]
    if len(groups) == 1:
        return [("autograde", ASSIGNMENT)]
    return [("autograde", ASSIGNMENT,
             f"--CourseDirectory.student_id_exclude={','.join(s for s in students if s not in group)}")
            for group in groups]


def write_course_config(course: Path, extra: str = "") -> Path:
    path = course / "nbgrader_config.py"
    path.write_text(COURSE_CONFIG.format(repository_config=str(REPOSITORY / "nbgrader_config.py"), root=str(course)) + extra)
    return path


def release_notebook(source: Path, scratch: Path) -> bytes:
    """The release version of ``source`` (an attention source folder), made by nbgrader generate_assignment in ``scratch``."""
    (scratch / "source").mkdir(parents=True)
    shutil.copytree(source, scratch / "source" / ASSIGNMENT)
    write_course_config(scratch)
    run_nbgrader(scratch, "generate_assignment", ASSIGNMENT, "--force")
    return (scratch / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_bytes()


# --- the steps -----------------------------------------------------------------------------------------


def say(message: str):
    print(message, flush=True)


STARTS_GRADING = re.compile(r"\| INFO\] Autograding \S*/autograded/(?P<student>[^/\s]+)/")


def autograde_progress(line: str):
    """Say which student's notebook nbgrader autograde has started on."""
    found = STARTS_GRADING.search(line)
    if found:
        say(f"      {found['student']}")


def prepare_course(course: Path, cell_timeout: int | None) -> None:
    resolved = course.resolve()
    inside = [folder for folder in (REPOSITORY / "source", REPOSITORY / "examples")
              if resolved == folder or folder in resolved.parents]
    if resolved == REPOSITORY or inside:
        raise PipelineError(f"refusing to use {course} as the course folder: it is the repository "
                            "or inside its source/ or examples/")
    if course.exists() and any(course.iterdir()):
        if not (course / MARKER).exists():
            raise PipelineError(f"{course} exists and is not a course folder made by autograder.classroom "
                                f"(no {MARKER} file in it): choose another --course, or empty it yourself")
        shutil.rmtree(course)
    course.mkdir(parents=True, exist_ok=True)
    (course / MARKER).write_text("made by python -m autograder.classroom; the next run deletes and recreates this folder\n")
    shutil.copytree(REPOSITORY / "source", course / "source", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    (course / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
    extra = ""
    if cell_timeout is not None:
        extra = f"\n# --cell-timeout\nc.SurvivingExecute.timeout = {int(cell_timeout)}\n"
    write_course_config(course, extra)


def find_submissions(submissions: Path) -> list[str]:
    """The student ids: folders of ``submissions`` that hold <student>/attention/attention.ipynb."""
    if not submissions.is_dir():
        raise PipelineError(f"no submissions folder {submissions}")
    students = sorted(folder.name for folder in submissions.iterdir()
                      if (folder / ASSIGNMENT / f"{NOTEBOOK}.ipynb").is_file())
    if not students:
        raise PipelineError(f"no submissions in {submissions}: expected <student>/{ASSIGNMENT}/{NOTEBOOK}.ipynb folders")
    return students


def add_students(course: Path, students: list[str], log: Path) -> None:
    roster = course / "students.csv"
    with open(roster, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["id", "first_name", "last_name", "email"])
        for student in students:
            writer.writerow([student, student.replace("_", " "), "", ""])
    run_nbgrader(course, "db", "student", "import", str(roster), log=log)


def collect(course: Path, submissions: Path, students: list[str]) -> None:
    """Manual collection: each student's assignment folder goes to submitted/<student>/attention/, byte for byte."""
    for student in students:
        target = course / "submitted" / student / ASSIGNMENT
        shutil.copytree(submissions / student / ASSIGNMENT, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))


def kernel_notes(course: Path, students: list[str]) -> dict[str, str]:
    """{student: note} for notebooks whose kernel died, or whose cells ran out of time, in nbgrader's kernel."""
    notes = {}
    for student in students:
        path = course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        if not path.exists():
            notes[student] = "not autograded (see nbgrader.log)"
            continue
        said = []
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells, start=1):
            names = {output.get("ename") for output in cell.get("outputs", []) if output.get("output_type") == "error"}
            if "DeadKernelError" in names:
                said.append(f"kernel died in cell {number}; later cells not run")
            elif names & {"CellTimeoutError", "KeyboardInterrupt"}:
                said.append(f"cell {number} timed out and was interrupted")
        if said:
            notes[student] = "; ".join(said)
    return notes


def grade_table(checks_csv: Path, notes: dict[str, str]):
    """The class's table (pandas DataFrame): one row per student, automatic points, written answers, each check."""
    import pandas as pd

    rows = pd.read_csv(checks_csv, dtype={"student_id": str})
    auto = rows[rows["cell_type"] == "code"]
    written = rows[rows["cell_type"] != "code"]
    order = list(dict.fromkeys(auto["grade_id"]))
    table = auto.pivot(index="student_id", columns="grade_id", values="score")[order]
    table.columns = [column.removeprefix("check_") for column in table.columns]
    by_student = auto.groupby("student_id")
    total, top = by_student["score"].sum(), by_student["max_score"].sum()
    summary = pd.DataFrame(index=table.index)
    summary["auto"] = [f"{total[s]:g} / {top[s]:g}" for s in table.index]
    pending = written.groupby("student_id")["needs_manual_grade"].sum()
    written_points = written.groupby("student_id")["score"].sum()
    written_top = written.groupby("student_id")["max_score"].sum()
    summary["written"] = [f"{int(pending.get(s, 0))} to grade" if pending.get(s, 0) else
                          f"{written_points.get(s, 0):g} / {written_top.get(s, 0):g}" for s in table.index]
    result = summary.join(table.map(lambda points: f"{points:g}"))
    result["note"] = [notes.get(s, "") for s in table.index]
    result.index.name = "student"
    return result


def show(table) -> str:
    import pandas as pd

    with pd.option_context("display.width", 400, "display.max_columns", None, "display.max_colwidth", 80):
        return table.to_string()


def run_pipeline(course: Path, submissions: Path, cell_timeout: int | None = None, jobs: int = 1) -> dict:
    """Every step; returns {"students", "table", "notes", "seconds"}. Raises PipelineError when a step fails."""
    course, submissions = course.absolute(), submissions.absolute()
    students = find_submissions(submissions)
    log = course / "nbgrader.log"
    seconds = {}

    def step(number: int, title: str):
        say(f"[{number}/8] {title}")
        return time.monotonic()

    started = step(1, f"preparing a fresh course folder {course}")
    prepare_course(course, cell_timeout)
    seconds["prepare"] = time.monotonic() - started

    started = step(2, f"adding the assignment and {len(students)} students to the gradebook")
    run_nbgrader(course, "db", "assignment", "add", ASSIGNMENT, log=log)
    add_students(course, students, log)
    seconds["gradebook"] = time.monotonic() - started

    started = step(3, "releasing: nbgrader generate_assignment")
    run_nbgrader(course, "generate_assignment", ASSIGNMENT, log=log)
    seconds["release"] = time.monotonic() - started

    started = step(4, f"collecting {len(students)} submissions from {submissions} into submitted/")
    collect(course, submissions, students)
    seconds["collect"] = time.monotonic() - started

    commands = autograde_commands(students, jobs)
    started = step(5, "autograding: nbgrader autograde (each notebook in its own kernel, hidden checks outside it)"
                   + (f", {len(commands)} at a time" if len(commands) > 1 else ""))
    try:
        run_nbgrader_together(course, commands, log=log, echo=autograde_progress)
    except PipelineError as error:
        done = [s for s in students if (course / "autograded" / s / ASSIGNMENT / f"{NOTEBOOK}.ipynb").exists()]
        missing = sorted(set(students) - set(done))
        raise PipelineError(f"{error}\nautograded: {len(done)} of {len(students)}; not autograded: {', '.join(missing) or 'none'}") from None
    seconds["autograde"] = time.monotonic() - started

    started = step(6, "feedback: nbgrader generate_feedback (HTML per student)")
    run_nbgrader(course, "generate_feedback", ASSIGNMENT, log=log)
    missing = [s for s in students if not (course / "feedback" / s / ASSIGNMENT / f"{NOTEBOOK}.html").exists()]
    if missing:
        raise PipelineError(f"generate_feedback wrote no HTML for {', '.join(missing)}")
    seconds["feedback"] = time.monotonic() - started

    started = step(7, "exporting grades.csv (nbgrader's) and checks.csv (autograder.export.ChecksExport)")
    run_nbgrader(course, "export", "--to", str(course / "grades.csv"), log=log)
    run_nbgrader(course, "export", "--exporter=autograder.export.ChecksExport", "--to", str(course / "checks.csv"), log=log)
    seconds["export"] = time.monotonic() - started

    step(8, "the class's grades")
    notes = kernel_notes(course, students)
    table = grade_table(course / "checks.csv", notes)
    return {"students": students, "table": table, "notes": notes, "seconds": seconds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.classroom", description=__doc__.split("\n\n")[0])
    parser.add_argument("--course", type=Path, default=REPOSITORY / "demo",
                        help="the course folder to (re)create (default: demo/ in the repository, not committed)")
    parser.add_argument("--submissions", type=Path, default=REPOSITORY / "examples" / "submissions",
                        help="folder of <student>/attention/attention.ipynb (default: examples/submissions)")
    parser.add_argument("--cell-timeout", type=int, default=None,
                        help="seconds per cell in the student's kernel (default: nbgrader_config.py's)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="autograde with this many nbgrader processes at once, each with its share of the students "
                             "(default 1: one `nbgrader autograde attention`)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        result = run_pipeline(args.course, args.submissions, args.cell_timeout, args.jobs)
    except PipelineError as error:
        print(f"FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    say("")
    say(show(result["table"]))
    say("")
    course = args.course.absolute()
    say(f"gradebook {course / 'gradebook.db'}; grades {course / 'grades.csv'}; per check {course / 'checks.csv'}; "
        f"feedback {course / 'feedback'}/<student>/{ASSIGNMENT}/{NOTEBOOK}.html")
    steps = ", ".join(f"{name} {value:.0f} s" for name, value in result["seconds"].items())
    say(f"done in {time.monotonic() - started:.0f} s ({steps})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
