"""A class run against faults and odd input (issue 12, parts 3 and 7; the lock and the uploads alone are tested in
tests/autograder/grading/test_lock.py and tests/autograder/course/test_uploads.py): a course that is a file, student
ids that are globs or the grader's own names, a full disk and a failed
record, the private folders of killed workers, Dask workers that cannot import the project, a scheduler
without workers. The coordinator is the real one (grade_class on a Dask cluster); the grading task is an
instant one with synthetic results, so no kernel runs.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
from pathlib import Path

import hostile
import pytest
from gradebooks import hand_in, instant, scores, synthetic_course
from nbgrader.api import Gradebook

from autograder.assignments import Layout
from autograder.course import run as steps
from autograder.grading import dispatch, task, worker
from autograder.grading import gradebook as gradebook_writer
from autograder.grading import ledger as books
from autograder.notebook.pipeline import ChainOptions

ATTENTION = Layout("attention", "attention")  # the assignment these grade
REPOSITORY = Path(__file__).resolve().parents[3]

ASSIGNMENT = NOTEBOOK = "attention"


# --- a course that is a file; ids that are globs ---------------------------------------------------------------------


def test_a_course_that_is_a_file_is_refused_with_a_message(tmp_path):
    (tmp_path / "course").write_text("a file")
    (tmp_path / "submissions" / "ada" / ASSIGNMENT).mkdir(parents=True)
    (tmp_path / "submissions" / "ada" / ASSIGNMENT / "attention.ipynb").write_text("{}")
    with pytest.raises(steps.PipelineError, match="is a file, not a folder"):
        steps.grade_course(steps.CourseOptions(course=tmp_path / "course", submissions=tmp_path / "submissions"))
    assert (tmp_path / "course").read_text() == "a file"


ODD_IDS = [
    "x[1]",
    "release",
    "new-kid",
    "old-timer",
    "forward-pass",
    "lock",
    "tmp",
    "students",
    "journal",
    "a*b",
    "...",
    "assignments",
    "attention",
]


def test_ids_that_are_globs_or_the_graders_own_names_are_graded(tmp_path, cluster):
    course, url = synthetic_course(tmp_path, {student: str(n % 3) for n, student in enumerate(ODD_IDS)})
    stamp = books.assignment_folder(course, "attention") / "release.json"
    stamp.parent.mkdir(parents=True)
    stamp.write_text('{"source": "kept"}')
    summary = dispatch.grade_class(
        course,
        "attention",
        ODD_IDS,
        options=dispatch.ClassOptions(scheduler=cluster, progress=False, db=url, task=instant),
    )
    assert sorted(summary.graded) == sorted(ODD_IDS) and not summary.failed
    for n, student in enumerate(ODD_IDS):
        assert scores(url, student)["check_a"] == (float(n % 3), None), student
        assert books.ledger(course, "attention", student)["student"] == student
    assert stamp.read_text() == '{"source": "kept"}'
    again = dispatch.grade_class(
        course,
        "attention",
        ODD_IDS,
        options=dispatch.ClassOptions(scheduler=cluster, progress=False, db=url, task=instant),
    )
    assert sorted(again.skipped) == sorted(ODD_IDS), "a re-run graded odd ids again"


# --- a full disk, a failed record -------------------------------------------------------------------------


class FullDisk(dict):
    """The files of an outcome, whose writing runs out of disk after the first one."""

    def items(self):
        for number, item in enumerate(super().items()):
            if number == 1:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            yield item


def test_a_full_disk_or_a_failed_record_stops_that_student_only(tmp_path, cluster, monkeypatch):
    students = {"ada": "1", "bo": "2", "cy": "0", "di": "2"}
    course, url = synthetic_course(tmp_path, students)
    place = books.place_folder

    def failing_place(files, target, scratch):
        if "/bo/" in target.as_posix():  # bo: the disk fills while his feedback is written
            files = FullDisk({**files, "second.html": b"x"})
        place(files, target, scratch)

    real_write = gradebook_writer.GradebookWriter.write

    def failing_write(self, result, before_commit=None):
        if result.student == "cy":  # cy: the database refuses
            result.grades.append(
                {"notebook": NOTEBOOK, "name": "no_such_cell", "auto_score": 1.0, "needs_manual_grade": False}
            )
        real_write(self, result, before_commit=before_commit)

    monkeypatch.setattr(books, "place_folder", failing_place)
    monkeypatch.setattr(gradebook_writer.GradebookWriter, "write", failing_write)
    summary = dispatch.grade_class(
        course,
        "attention",
        list(students),
        options=dispatch.ClassOptions(scheduler=cluster, progress=False, db=url, task=instant),
    )
    assert sorted(summary.graded) == ["ada", "di"]
    assert "No space left on device" in summary.failed["bo"] and "graded again next run" in summary.failed["bo"]
    assert "no_such_cell" in summary.failed["cy"]
    assert scores(url, "bo") == {} and scores(url, "cy") == {}, "a failed student is half-recorded"
    assert scores(url, "ada")["check_a"] == (1.0, None) and scores(url, "di")["check_a"] == (2.0, None)
    assert not (course / "feedback" / "bo").exists() or not list((course / "feedback" / "bo").rglob("*.html"))
    assert books.ledger(course, "attention", "bo") == {} and books.ledger(course, "attention", "cy") == {}
    assert not list((course / ".grading" / "tmp").iterdir()) and not list(
        (books.assignment_folder(course, "attention") / "journal").iterdir()
    )

    monkeypatch.undo()  # space again: the next run grades bo and cy only
    again = dispatch.grade_class(
        course,
        "attention",
        list(students),
        options=dispatch.ClassOptions(scheduler=cluster, progress=False, db=url, task=instant),
    )
    assert sorted(again.graded) == ["bo", "cy"] and sorted(again.skipped) == ["ada", "di"]
    assert scores(url, "cy")["check_a"] == (0.0, None)


def test_private_folders_of_gone_processes_are_swept(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = socket.gethostname()
    left = tmp_path / f"attention-grading-{host}-{gone.pid}-abc123"
    live = tmp_path / f"attention-grading-{host}-{os.getpid()}-def456"
    elsewhere = tmp_path / f"attention-grading-another-host-{gone.pid}-ghi789"
    for folder in (left, live, elsewhere):
        (folder / "submitted").mkdir(parents=True)
    assert worker.sweep_temporary(tmp_path) == [left.name]
    assert not left.exists() and live.exists() and elsewhere.exists()
    assert task.temporary_prefix() == f"attention-grading-{host}-{os.getpid()}-"


# --- Dask ------------------------------------------------------------------------------------------------


def test_a_scheduler_without_workers_says_so(tmp_path):
    from dask.distributed import LocalCluster

    course, url = synthetic_course(tmp_path, {"ada": "1"})
    with LocalCluster(
        n_workers=0, processes=False, protocol="tcp://", host="127.0.0.1", dashboard_address=None, silence_logs=50
    ) as empty:
        with pytest.raises(task.GradingError, match="has no workers .none joined in 0.5 s.: start some"):
            dispatch.grade_class(
                course,
                "attention",
                ["ada"],
                options=dispatch.ClassOptions(
                    scheduler=empty.scheduler_address, progress=False, db=url, task=instant, wait_for_workers=0.5
                ),
            )
    assert scores(url, "ada") == {}


BLOCKER = '''"""A Dask worker preload: this worker cannot import the project, as on a machine where it is not
installed."""
import sys


class NoProject:
    def find_spec(self, name, path=None, target=None):
        if name == "autograder" or name.startswith("autograder."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, NoProject())
'''


def test_workers_that_cannot_import_the_project_are_named_and_left_out(tmp_path, cluster):
    from dask.distributed import Client

    (tmp_path / "no_project.py").write_text(BLOCKER)
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            cluster,
            "--nthreads",
            "1",
            "--no-nanny",
            "--no-dashboard",
            "--name",
            "bad",
            "--preload",
            str(tmp_path / "no_project.py"),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with Client(cluster, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
            bad_address = next(
                a for a, w in client.scheduler_info(n_workers=-1)["workers"].items() if w["name"] == "bad"
            )
            good, bad = dispatch.usable_workers(client, cluster)
            assert bad_address not in good and len(good) == 1
            assert list(bad) == [bad_address]
            assert "cannot import the project (ModuleNotFoundError: No module named 'autograder" in bad[bad_address]
            with pytest.raises(
                task.GradingError, match=f"no Dask worker of {cluster} can grade:\n  {bad_address}: cannot import"
            ):
                dispatch.usable_workers(FewerWorkers(client, bad_address), cluster)

        students = {f"s{n}": "1" for n in range(6)}
        course, url = synthetic_course(tmp_path, students)
        summary = dispatch.grade_class(
            course,
            "attention",
            list(students),
            options=dispatch.ClassOptions(scheduler=cluster, progress=False, db=url, task=instant),
        )
        assert sorted(summary.graded) == sorted(students) and not summary.failed
        assert list(summary.refused_workers) == [bad_address]
    finally:
        worker.terminate()
        worker.wait(30)


class FewerWorkers:
    """A client whose run() reaches only one worker (the bad one)."""

    def __init__(self, client, only):
        self.client, self.only = client, only

    def nthreads(self):
        return {self.only: 1}

    def run(self, *args, **kwargs):
        return self.client.run(*args, workers=[self.only], **kwargs)


# --- one real grading: an id that is a glob, a file that is not a notebook -------------------------------


@pytest.mark.skipif(
    not (Path(sys.executable).parent / "nbgrader").exists(), reason="nbgrader is not installed next to this Python"
)
def test_a_glob_id_is_graded_and_a_non_notebook_upload_is_escaped_in_the_page(tmp_path, monkeypatch):
    """nbgrader's autograde and feedback, for the student ``x[1]`` (nbgrader reads ids as file globs) who
    handed in an HTML snippet as the notebook: graded as blank, the reason quotes the file's first
    characters, and the feedback page shows them as text, not as a live tag."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    course = tmp_path / "course"
    steps.prepare_course(course, source=REPOSITORY / "source", layout=ATTENTION, cell_timeout=20)
    steps.register(course, ATTENTION, ["x[1]"])
    steps.release(course, ATTENTION)
    payload = b"<img src=x onerror=alert(document.cookie)> not a notebook"
    hand_in(course, "x[1]", payload.decode())
    assignment = dispatch.load_assignment(course, "attention", chain=ChainOptions(cell_timeout=20))
    result = worker.grade_submission(assignment, dispatch.load_submission(course, "x[1]", assignment))
    assert result.error == "" and result.student == "x[1]"
    assert result.note.startswith("graded as blank: the file is not a notebook") and "<img src=x" in result.note
    assert len([g for g in result.grades if g["name"].startswith("check_")]) == 16
    assert {g["auto_score"] for g in result.grades if g["name"].startswith("check_")} == {0.0}
    page = result.feedback[f"{NOTEBOOK}.html"].decode()
    assert "&lt;img src=x onerror=alert" in page
    assert "<img src=x" not in page and "onerror=alert(document.cookie)>" not in page


WRITES_FILES = """import os, pathlib
pathlib.Path('evil.html').write_text('<script>document.title = "ran"</script>')
os.makedirs('deep', exist_ok=True)
pathlib.Path('deep/evil.html').write_text('<script>document.title = "ran"</script>')
pathlib.Path('notes.txt').write_text('changed by the kernel')
pathlib.Path('timestamp.txt').write_text('2099-01-01 00:00:00.000000 UTC')
os._exit(0)"""


@pytest.mark.skipif(
    not (Path(sys.executable).parent / "nbgrader").exists(), reason="nbgrader is not installed next to this Python"
)
def test_files_the_kernel_writes_never_reach_autograded_or_feedback(tmp_path, monkeypatch):
    """Only what nbgrader made comes back from a worker: the graded notebook with the files the student handed
    in (as handed in), and the feedback page; not the pages the student's kernel wrote into its working folder
    (nbgrader's GenerateFeedback would copy them into feedback/, and release_feedback hand them out)."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    course = tmp_path / "course"
    steps.prepare_course(course, source=REPOSITORY / "source", layout=ATTENTION, cell_timeout=20)
    steps.register(course, ATTENTION, ["ada"])
    steps.release(course, ATTENTION)
    notebook = hostile.write(hostile.add_cell(hostile.load("full_solution"), "setup", WRITES_FILES, "scratch-files"))
    hand_in(course, "ada", notebook.decode())
    handed_in = course / "submitted" / "ada" / "attention"
    (handed_in / "notes.txt").write_text("handed in")
    (handed_in / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")  # as nbgrader's collect brings them
    (handed_in / "submission_secret.txt").write_text("s3cret")
    assignment = dispatch.load_assignment(course, "attention", chain=ChainOptions(cell_timeout=20))
    result = worker.grade_submission(assignment, dispatch.load_submission(course, "ada", assignment))
    assert result.error == "" and result.note == ""
    assert sorted(result.autograded) == [f"{NOTEBOOK}.ipynb", "notes.txt", "submission_secret.txt", "timestamp.txt"]
    assert result.autograded["notes.txt"] == b"handed in"
    # the page, and what release_feedback names it by, as handed in (not as the kernel rewrote them)
    assert sorted(result.feedback) == [f"{NOTEBOOK}.html", "submission_secret.txt", "timestamp.txt"]
    assert result.feedback["timestamp.txt"] == b"2026-12-01 10:00:00.000000 UTC"
    assert result.children_cpu > 0, "the kernel's and the runner's CPU time is measured"


# --- several assignments in one source folder; an nbgrader course folder of the instructor's ------------------------


def two_assignments(root: Path) -> Path:
    """A source folder holding two assignments (week1 and week2, each a copy of positions)."""
    for name in ("week1", "week2"):
        (root / "source" / name).mkdir(parents=True)
        for file in ("positions.ipynb", "checks.py"):
            (root / "source" / name / file).write_bytes((REPOSITORY / "source" / "positions" / file).read_bytes())
    return root / "source"


def options(root: Path, **given) -> steps.CourseOptions:
    return steps.CourseOptions(course=root / "course", submissions=root / "submissions", **given)


def test_the_assignment_graded_is_the_one_named_the_only_one_or_the_submissions(tmp_path):
    source = two_assignments(tmp_path)
    (tmp_path / "submissions" / "ada" / "week2").mkdir(parents=True)
    (tmp_path / "submissions" / "bob").mkdir()
    (tmp_path / "submissions" / "bob" / "positions (1).ipynb").write_text("{}")  # the notebook alone: both have it
    assert steps.assignments_to_grade(options(tmp_path, source=source, assignment="week1")) == ["week1"]
    assert steps.assignments_to_grade(options(tmp_path, source=source)) == ["week1", "week2"]
    (tmp_path / "submissions" / "bob" / "positions (1).ipynb").unlink()
    assert steps.assignments_to_grade(options(tmp_path, source=source)) == ["week2"]
    (tmp_path / "submissions" / "ada" / "week2").rmdir()
    with pytest.raises(steps.PipelineError, match=r"holds 2 assignments \(week1, week2\) and no student's folder"):
        steps.assignments_to_grade(options(tmp_path, source=source))
    with pytest.raises(steps.PipelineError, match="no assignment 'week3'"):
        steps.assignments_to_grade(options(tmp_path, source=source, assignment="week3"))
    # the repository's own source folder holds attention and positions, and the bundled students hand in both
    bundled = steps.CourseOptions(course=tmp_path / "demo", submissions=REPOSITORY / "examples" / "submissions")
    assert steps.assignments_to_grade(bundled) == ["attention", "positions"]


def test_grade_course_names_one_assignment_and_refuses_two_without_making_anything(tmp_path):
    source = two_assignments(tmp_path)
    for name in ("week1", "week2"):
        (tmp_path / "submissions" / "ada" / name).mkdir(parents=True)
    with pytest.raises(steps.PipelineError, match=r"hold 2 assignments \(week1, week2\): name one with --assignment"):
        steps.grade_course(options(tmp_path, source=source))
    assert not (tmp_path / "course").exists()


def instructors_course(root: Path) -> Path:
    """An nbgrader course folder as an instructor makes one: nbgrader_config.py, source/ with two assignments, notes."""
    course = root / "course"
    two_assignments(course)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = 'ml101'\n"
    )
    (course / "notes.md").write_text("my notes")
    return course


def test_an_nbgrader_course_folder_is_adopted_and_its_source_is_never_copied_over(tmp_path):
    course = instructors_course(tmp_path)
    before = {path: path.read_bytes() for path in sorted((course / "source").rglob("*")) if path.is_file()}
    steps.check_course_folder(course)  # not refused
    assert steps.is_adopted(course) and steps.default_source(course) == course / "source"
    settings = steps.prepare_course(course, source=course / "source", layout=Layout("week1", "positions"))
    assert settings.db == f"sqlite:///{course / 'gradebook.db'}"
    assert (course / steps.MARKER).read_text().startswith("adopted")
    assert steps.is_adopted(course) and steps.default_source(course) == course / "source"  # on every later run
    assert {path: path.read_bytes() for path in before} == before  # the instructor's source, untouched
    assert "CourseDirectory.course_id = 'ml101'" in (course / "nbgrader_config.py").read_text()  # theirs, kept
    (course / "submitted" / "ada").mkdir(parents=True)
    (course / "gradebook.db").write_text("")
    steps.forget(course, None)  # --fresh: only what the class command writes
    assert not (course / "submitted").exists() and not (course / "gradebook.db").exists()
    assert (course / "notes.md").read_text() == "my notes" and {p: p.read_bytes() for p in before} == before
    made = tmp_path / "made"
    steps.prepare_course(made, source=course / "source", layout=Layout("week1", "positions"))
    assert not steps.is_adopted(made) and steps.default_source(made) == REPOSITORY / "source"


def test_a_folder_that_is_neither_a_course_nor_an_nbgrader_course_is_still_refused(tmp_path):
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "notes.md").write_text("someone's")
    with pytest.raises(steps.PipelineError, match="nor an nbgrader course folder"):
        steps.check_course_folder(tmp_path / "course")
    with pytest.raises(steps.PipelineError, match="it is the repository"):
        steps.check_course_folder(REPOSITORY)


def test_the_export_step_names_a_malformed_source_notebook_of_the_course(tmp_path, monkeypatch):
    """The course's copy of a source notebook broken after grading: the export step stops with the file and what is
    wrong in it (a PipelineError the class command prints), not a TypeError; grades.csv is not half written."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    course = tmp_path / "course"
    (course / "source" / "week1").mkdir(parents=True)
    (course / "source" / "week1" / "week1.ipynb").write_text('{"cells": [{"metadata": []}]}')
    db = f"sqlite:///{course / 'gradebook.db'}"
    with Gradebook(db) as gradebook:
        gradebook.add_assignment("week1")
        gradebook.add_notebook("week1", "week1")
        gradebook.add_student("ada")
    with pytest.raises(steps.PipelineError) as stopped:
        steps.export(course, db)
    assert str(stopped.value) == (
        f"exporting checks.csv: {course / 'source' / 'week1' / 'week1.ipynb'}: cell 0's metadata is a list, not an "
        "object: restore the source notebook"
    )
    assert not (course / "grades.csv").exists() and not (course / "checks.csv").exists()
