"""A whole class through nbgrader: release, collect, autograde with feedback in parallel, export, the grade table.

    python -m autograder.classroom                                   # course demo/, the bundled submissions
    python -m autograder.classroom --course /srv/attention --submissions /srv/collected
    python -m autograder.classroom --jobs 8                          # 8 local worker processes (default: one per core)
    python -m autograder.classroom --scheduler tcp://10.0.0.5:8786   # on a Dask cluster
    python -m autograder.classroom --regrade                         # grade every submission again
    python -m autograder.classroom --cell-timeout 20                 # a shorter per-cell limit in the kernel

Steps, each checked:

1. the course folder: made on the first run (source/ copied from the repository, a ``nbgrader_config.py``
   that loads the repository's one and sets the course root, ``lib`` linked in, so the notebooks' setup
   cell finds the course library as it does in the repository); later runs keep it and its gradebook,
   and refresh source/ (``--fresh`` starts it again from nothing);
2. the assignment and the new students in gradebook.db (nbgrader's Gradebook API, as ``nbgrader db
   assignment add`` and ``nbgrader db student import`` do);
3. ``generate_assignment`` (nbgrader's NbGraderAPI, in this process): source/ -> release/, skipped when
   source/ has not changed since the last release;
4. collection, as nbgrader documents it: each ``<submissions>/<student>/attention/`` is copied to
   ``submitted/<student>/attention/`` (only when it changed);
5. grading (autograder.grading): each new or changed submission is one task on a Dask worker, which runs
   nbgrader's Autograde and GenerateFeedback on it in a private folder, the notebook's kernel and the
   hidden checks in their sandboxes; each result is recorded in gradebook.db as it arrives, atomically;
6. grades.csv with nbgrader's CsvExportPlugin (what ``nbgrader export --to grades.csv`` writes, one row per
   student) and checks.csv with autograder.export.ChecksExport (one row per student per check), each
   written whole then renamed into place;
   nbgrader's own commands are started in this process rather than as ``nbgrader ...`` programs, which
   spend some 3 s each importing nbgrader;
7. the class's grade table, from checks.csv, with a note for each notebook whose kernel died, ran out of
   time or could not be read.

Any existing, non-empty folder that this command did not make (no ``.classroom`` file in it) is refused as
the course folder. Nothing is written under the repository's source/ or examples/, nor into the submissions.
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


def _nbgrader(course: Path, args: tuple, timeout: float) -> tuple[int | None, str]:
    """(exit code, or None after a timeout; output) of ``nbgrader *args`` run in ``course``."""
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
        code = process.wait()
    finally:
        timer.cancel()
        process.stdout.close()
    return (None if expired.is_set() else code), "".join(lines)


def run_nbgrader(course: Path, *args: str, log: Path | None = None, timeout: float = 3600) -> str:
    """Run ``nbgrader *args`` in ``course``; return its output, raise PipelineError (with the output's end) if it fails."""
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
        raise PipelineError(f"`nbgrader {line}` failed (exit {code}) in {course}:\n{shown}" + (f"\n(full output in {log})" if log else ""))
    return output


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


def prepare_course(course: Path, cell_timeout: int | None, fresh: bool = False) -> None:
    """Make the course folder, or keep the one an earlier run made (with its gradebook) and refresh its source/."""
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
        if fresh:
            shutil.rmtree(course)
    course.mkdir(parents=True, exist_ok=True)
    (course / MARKER).write_text("made by python -m autograder.classroom; --fresh deletes and recreates this folder\n")
    shutil.rmtree(course / "source", ignore_errors=True)
    shutil.copytree(REPOSITORY / "source", course / "source", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    if not (course / "lib").is_symlink():
        (course / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
    write_course_config(course, timeout_config(cell_timeout))


def timeout_config(cell_timeout: int | None) -> str:
    """nbgrader configuration lines for --cell-timeout ("" for the repository's default)."""
    return "" if cell_timeout is None else f"\n# --cell-timeout\nc.SurvivingExecute.timeout = {int(cell_timeout)}\n"


def find_submissions(submissions: Path) -> list[str]:
    """The student ids: folders of ``submissions`` that hold <student>/attention/attention.ipynb."""
    if not submissions.is_dir():
        raise PipelineError(f"no submissions folder {submissions}")
    students = sorted(folder.name for folder in submissions.iterdir()
                      if (folder / ASSIGNMENT / f"{NOTEBOOK}.ipynb").is_file())
    if not students:
        raise PipelineError(f"no submissions in {submissions}: expected <student>/{ASSIGNMENT}/{NOTEBOOK}.ipynb folders")
    return students


def register(course: Path, students: list[str]) -> list[str]:
    """The assignment and the students in gradebook.db (nbgrader's Gradebook API, what ``nbgrader db assignment
    add`` and ``nbgrader db student import`` do); returns the students added."""
    from nbgrader.api import Gradebook

    os.environ["PATH"] = nbgrader_environment()["PATH"]  # a new gradebook runs alembic from PATH
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.update_or_create_assignment(ASSIGNMENT)
        known = {student.id for student in gradebook.students}
        added = [student for student in students if student not in known]
        for student in added:
            gradebook.update_or_create_student(student, first_name=student.replace("_", " "))
    return added


def release(course: Path) -> bool:
    """nbgrader generate_assignment (in-process, nbgrader's NbGraderAPI) when source/ changed since the last
    release or release/ is missing; returns whether it ran."""
    from autograder.grading import LEDGER, folder_files, digest, nbgrader_api

    stamp = course / LEDGER / "release.json"
    source = digest(folder_files(course / "source" / ASSIGNMENT).items())
    released = course / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    if released.exists() and stamp.exists() and json.loads(stamp.read_text()).get("source") == source:
        return False
    result = nbgrader_api(course).generate_assignment(ASSIGNMENT, force=True)
    if not result.get("success"):
        raise PipelineError(f"nbgrader generate_assignment failed in {course}:\n{result.get('log', '')[-3000:]}\n{result.get('error', '')}")
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(json.dumps({"source": source}))
    return True


def export(course: Path) -> None:
    """grades.csv (nbgrader's CsvExportPlugin, what ``nbgrader export`` writes) and checks.csv (ChecksExport)."""
    from nbgrader.api import Gradebook
    from nbgrader.plugins import CsvExportPlugin

    from autograder.export import ChecksExport

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for plugin, name in ((CsvExportPlugin(), "grades.csv"), (ChecksExport(course_root=str(course)), "checks.csv")):
            temporary = course / f".{name}.writing"
            plugin.to = str(temporary)
            plugin.export(gradebook)
            os.replace(temporary, course / name)


def collect(course: Path, submissions: Path, students: list[str]) -> list[str]:
    """Manual collection: each student's assignment folder goes to submitted/<student>/attention/, byte for byte,
    when it differs from what is there (a new folder is swapped in whole). Returns the students copied."""
    from autograder.grading import folder_files

    copied = []
    for student in students:
        source, target = submissions / student / ASSIGNMENT, course / "submitted" / student / ASSIGNMENT
        if target.exists() and folder_files(target) == folder_files(source):
            continue
        fresh = target.with_name(f".{ASSIGNMENT}.collecting")
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(source, fresh, symlinks=True, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))  # links stay links
        if target.exists():
            shutil.rmtree(target)
        os.replace(fresh, target)
        copied.append(student)
    return copied


def kernel_notes(course: Path, students: list[str]) -> dict[str, str]:
    """{student: note} for notebooks whose kernel died, or whose cells ran out of time, in nbgrader's kernel."""
    notes = {}
    for student in students:
        path = course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        if not path.exists():
            notes[student] = "not autograded"
            continue
        said = []
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells, start=1):
            errors = {output.get("ename"): output.get("evalue", "") for output in cell.get("outputs", [])
                      if output.get("output_type") == "error"}
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


def run_pipeline(course: Path, submissions: Path, cell_timeout: int | None = None, jobs: int | None = None,
                 scheduler: str | None = None, regrade: bool = False, fresh: bool = False, progress: bool = True) -> dict:
    """Every step; returns {"students", "table", "notes", "summary", "seconds"}. Raises PipelineError when a step fails."""
    from autograder.grading import GradingError, grade_class

    course, submissions = course.absolute(), submissions.absolute()
    students = find_submissions(submissions)
    seconds = {}

    def step(number: int, title: str):
        say(f"[{number}/7] {title}")
        return time.monotonic()

    started = step(1, f"the course folder {course}")
    prepare_course(course, cell_timeout, fresh)
    seconds["prepare"] = time.monotonic() - started

    started = step(2, f"the assignment and {len(students)} students in the gradebook")
    added = register(course, students)
    say(f"      {len(added)} new students")
    seconds["gradebook"] = time.monotonic() - started

    started = step(3, "releasing: nbgrader generate_assignment")
    say("      released" if release(course) else "      source/ unchanged since the last release")
    seconds["release"] = time.monotonic() - started

    started = step(4, f"collecting {len(students)} submissions from {submissions} into submitted/")
    copied = collect(course, submissions, students)
    say(f"      {len(copied)} new or changed")
    seconds["collect"] = time.monotonic() - started

    where = f"the Dask scheduler {scheduler}" if scheduler else f"{jobs or os.cpu_count()} local workers"
    started = step(5, f"grading new and changed submissions on {where}: nbgrader autograde and feedback, "
                      "each notebook in its own sandboxed kernel, the hidden checks outside it")
    try:
        summary = grade_class(course, students, scheduler=scheduler, jobs=jobs, config=timeout_config(cell_timeout),
                              progress=progress, regrade=regrade)
    except GradingError as error:
        raise PipelineError(str(error)) from None
    say(f"      graded {len(summary.graded)}, up to date {len(summary.skipped)}, failed {len(summary.failed)}")
    seconds["grade"] = time.monotonic() - started

    started = step(6, "exporting grades.csv (nbgrader's CSV) and checks.csv (autograder.export.ChecksExport)")
    export(course)
    seconds["export"] = time.monotonic() - started

    step(7, "the class's grades")
    notes = kernel_notes(course, [s for s in students if s not in summary.failed])
    for student, note in summary.notes.items():
        notes[student] = "; ".join(filter(None, [note, notes.get(student)]))
    table = grade_table(course / "checks.csv", notes)
    return {"students": students, "table": table, "notes": notes, "summary": summary, "seconds": seconds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.classroom", description=__doc__.split("\n\n")[0])
    parser.add_argument("--course", type=Path, default=REPOSITORY / "demo",
                        help="the course folder, made on the first run and kept (default: demo/ in the repository, not committed)")
    parser.add_argument("--submissions", type=Path, default=REPOSITORY / "examples" / "submissions",
                        help="folder of <student>/attention/attention.ipynb (default: examples/submissions)")
    parser.add_argument("--cell-timeout", type=int, default=None,
                        help="seconds per cell in the student's kernel (default: nbgrader_config.py's)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="local worker processes, each grading one notebook at a time (default: one per core)")
    parser.add_argument("--scheduler", default=None,
                        help="address of a Dask scheduler (tcp://host:8786) whose workers grade; default: this machine")
    parser.add_argument("--regrade", action="store_true", help="grade every submission again, not only new or changed ones")
    parser.add_argument("--fresh", action="store_true", help="delete the course folder (gradebook included) and start again")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        result = run_pipeline(args.course, args.submissions, args.cell_timeout, args.jobs, args.scheduler,
                              args.regrade, args.fresh)
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
    say(f"gradebook {course / 'gradebook.db'}; grades {course / 'grades.csv'}; per check {course / 'checks.csv'}; "
        f"feedback {course / 'feedback'}/<student>/{ASSIGNMENT}/{NOTEBOOK}.html")
    steps = ", ".join(f"{name} {value:.0f} s" for name, value in result["seconds"].items())
    say(f"done in {time.monotonic() - started:.0f} s ({steps})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
