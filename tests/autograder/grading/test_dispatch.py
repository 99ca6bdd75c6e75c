"""autograder.grading (dispatch, ledger): a Dask cluster of separate processes, re-runs that grade only
what changed, a run killed half-way, and the gradebook written one whole submission at a time.

The class here is small and quick (notebooks whose kernel stops early or whose answers are stubs), so the
grading itself takes seconds; most of the time is nbgrader's own commands starting up.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import grade_folder
from gradebooks import DIES_ONCE, dies_once, synthetic_course
from nbgrader.api import Gradebook

from autograder.assignments import Layout
from autograder.grading import dispatch, task
from autograder.grading import gradebook as gradebook_writer
from autograder.grading import ledger as books

REPOSITORY = Path(__file__).resolve().parents[3]
ATTENTION = Layout("attention", "attention")
BUNDLED = REPOSITORY / "examples" / "submissions"
ASSIGNMENT = NOTEBOOK = "attention"
EXPECTED = json.loads((REPOSITORY / "examples" / "expected.json").read_text())

pytestmark = pytest.mark.skipif(
    not (Path(sys.executable).parent / "nbgrader").exists(), reason="nbgrader is not installed next to this Python"
)


def hand_in(submissions: Path, student: str, notebook: bytes):
    folder = submissions / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{NOTEBOOK}.ipynb").write_bytes(notebook)


def bundled(student: str) -> bytes:
    """The bundled submission, with a scratch cell right after the setup cell that ends its kernel: the hidden
    checks grade every answer as usual, and the notebook takes seconds instead of 20 (kernel_crash's points
    for kernel_crash, the blank release's for blank_release)."""
    import hostile

    return hostile.write(hostile.add_cell(hostile.load(student), "setup", "import os\nos._exit(0)", "scratch-quick"))


def automatic_points(course: Path) -> dict:
    """{student: {grade_id: auto_score}} from the gradebook."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {
            submission.student.id: {grade.name: grade.auto_score for grade in submission.notebooks[0].grades}
            for submission in gradebook.find_assignment(ASSIGNMENT).submissions
        }


def check_points(points: dict, student: str, like: str):
    """``student`` holds the expected.json points of the bundled student ``like``."""
    for grade_id, want in EXPECTED["students"][like]["points"].items():
        assert points[student][grade_id] == (None if want is None else pytest.approx(want, abs=1e-9)), (
            student,
            grade_id,
        )


def start(command: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=REPOSITORY, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(process: subprocess.Popen):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Dask scheduler and two single-threaded workers, each a separate process, on loopback."""
    folder = tmp_path_factory.mktemp("dask")
    address_file = folder / "scheduler.json"
    processes = [
        start(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(address_file),
            ],
            folder / "scheduler.log",
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not address_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(address_file.read_text())["address"]
        for name in ("one", "two"):
            processes.append(
                start(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        address,
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--name",
                        name,
                    ],
                    folder / f"worker-{name}.log",
                )
            )
        from dask.distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address, {process.pid for process in processes[1:]}
    finally:
        for process in reversed(processes):
            stop(process)


def test_a_dask_cluster_grades_then_reruns_grade_only_what_changed(cluster, tmp_path):
    address, worker_pids = cluster
    course, submissions = tmp_path / "course", tmp_path / "submissions"
    hand_in(submissions, "ada", bundled("blank_release"))
    hand_in(submissions, "bo", bundled("kernel_crash"))
    hand_in(submissions, "cy", b"not a notebook")

    first = grade_folder(course, submissions, scheduler=address).summary
    points = automatic_points(course)
    check_points(points, "ada", "blank_release")
    check_points(points, "bo", "kernel_crash")
    check_points(points, "cy", "blank_release")
    workers = {student: books.ledger(course, "attention", student)["worker"] for student in ("ada", "bo", "cy")}
    pids = {int(worker.rsplit(":", 1)[1]) for worker in workers.values()}
    assert pids <= worker_pids, f"graded by {workers}, not by the cluster's workers {worker_pids}"
    assert (sorted(first.graded), first.skipped) == (["ada", "bo", "cy"], [])

    again = grade_folder(course, submissions).summary  # on this machine's cores; nothing changed
    assert (again.graded, sorted(again.skipped)) == ([], ["ada", "bo", "cy"])
    assert automatic_points(course) == points

    hand_in(submissions, "cy", bundled("kernel_crash"))  # a new version
    hand_in(submissions, "di", bundled("blank_release"))  # a new student
    third = grade_folder(course, submissions, jobs=2).summary
    assert (sorted(third.graded), sorted(third.skipped)) == (["cy", "di"], ["ada", "bo"])
    points = automatic_points(course)
    check_points(points, "cy", "kernel_crash")
    check_points(points, "di", "blank_release")
    check_points(points, "ada", "blank_release")
    assert books.ledger(course, "attention", "ada")["worker"] == workers["ada"], "ada was graded again"


def test_a_run_killed_half_way_keeps_what_it_finished(tmp_path):
    """Grade four quick notebooks with one worker; kill the whole run (SIGKILL) once two are recorded. Every
    recorded student is whole in the gradebook, no one is half there, and the next run grades only the rest."""
    course, submissions = tmp_path / "course", tmp_path / "submissions"
    students = [f"student_{n}" for n in range(4)]
    for student in students:
        hand_in(submissions, student, bundled("kernel_crash" if student.endswith(("1", "3")) else "blank_release"))
    from autograder.course import run as pipeline
    from autograder.course import uploads

    pipeline.prepare_course(course, source=REPOSITORY / "source", layout=ATTENTION)
    pipeline.register(course, ATTENTION, students)
    pipeline.release(course, ATTENTION)
    uploads.collect(course, submissions, ATTENTION, students)
    run = [
        sys.executable,
        "-c",
        "import sys; from pathlib import Path; from autograder.grading.dispatch import ClassOptions, grade_class; "
        "grade_class(Path(sys.argv[1]), 'attention', sys.argv[2:], options=ClassOptions(jobs=1, progress=False))",
        str(course),
        *students,
    ]

    process = start(run, tmp_path / "killed.log")
    deadline = time.monotonic() + 300
    while (
        len(list((course / ".grading").glob("assignments/attention/students/student_*.json"))) < 2
        and time.monotonic() < deadline
    ):
        assert process.poll() is None, (tmp_path / "killed.log").read_text()
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    recorded = sorted(path.stem for path in (course / ".grading").glob("assignments/attention/students/student_*.json"))
    assert 2 <= len(recorded) < len(students), recorded

    points = automatic_points(course)
    assert set(recorded) <= set(points), "a recorded student is missing from the gradebook"
    for student, grades in points.items():
        assert None not in [score for name, score in grades.items() if name.startswith("check_")], (
            f"{student} is half written"
        )
    for student in recorded:
        assert (course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").exists()

    ledgers = {student: books.ledger(course, "attention", student) for student in recorded}
    finished = subprocess.run(run, cwd=REPOSITORY, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    for student in recorded:
        assert books.ledger(course, "attention", student) == ledgers[student], f"{student} was graded again"
    points = automatic_points(course)
    for student in students:
        check_points(points, student, "kernel_crash" if student.endswith(("1", "3")) else "blank_release")
    leftovers = [
        path.name
        for folder in (course / ".grading" / "tmp", books.assignment_folder(course, "attention") / "journal")
        for path in folder.iterdir()
    ]
    assert not leftovers, f"a killed run's half-written files were not tidied: {leftovers}"


def test_record_in_gradebook_is_all_or_nothing(tmp_path, monkeypatch):
    """A failure in the middle of a submission's transaction leaves the gradebook as it was."""
    # a new gradebook runs `alembic` from PATH: the one next to this Python
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    course = tmp_path / "course"
    course.mkdir()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook(NOTEBOOK, ASSIGNMENT)
        gradebook.add_grade_cell("check_a", NOTEBOOK, ASSIGNMENT, max_score=2, cell_type="code")
        gradebook.add_grade_cell("check_b", NOTEBOOK, ASSIGNMENT, max_score=1, cell_type="code")
    before = automatic_points(course)
    outcome = task.Outcome(
        "ada",
        "f" * 64,
        "attention",
        grades=[
            {"notebook": NOTEBOOK, "name": "check_a", "auto_score": 2.0, "needs_manual_grade": False},
            {"notebook": NOTEBOOK, "name": "check_missing", "auto_score": 1.0, "needs_manual_grade": False},
        ],
    )
    with pytest.raises(Exception, match="check_missing"):
        gradebook_writer.record_in_gradebook(course, outcome)
    assert automatic_points(course) == before == {}

    outcome.grades[1]["name"] = "check_b"
    gradebook_writer.record_in_gradebook(course, outcome)
    assert automatic_points(course) == {"ada": {"check_a": 2.0, "check_b": 1.0}}


def test_a_worker_that_dies_is_started_again_and_given_work(tmp_path, monkeypatch):
    """A local worker whose process dies (here it exits while grading s03) is started again by its nanny, under a
    new address; the new one must be given tasks like the others, and every student is graded. (The tasks were
    once held to the workers found at the start: a class of 200 then ran on one core after a worker died.)"""
    marker = tmp_path / "died"
    monkeypatch.setenv(DIES_ONCE, str(marker))
    students = {f"s{n:02d}": str(n % 3) for n in range(24)}
    course, _ = synthetic_course(tmp_path, students)
    summary = dispatch.grade_class(
        course, "attention", list(students), options=dispatch.ClassOptions(jobs=2, progress=False, task=dies_once)
    )
    assert sorted(summary.graded) == sorted(students) and summary.failed == {}
    dead = int(marker.read_text())
    pids = {int(books.ledger(course, "attention", student)["worker"].rsplit(":", 1)[1]) for student in students}
    assert len(pids - {dead}) == 2, f"graded by {pids}: the worker started again ({dead} died) was given no task"
