"""A class graded across machines that share nothing but the network (issue 36): a Dask scheduler, three workers and
the coordinator (the class command), each in a network namespace of its own on a private bridge (10.77.0.0/24, made
by the test), each worker with a private /tmp and home (a tmpfs: no folder of the coordinator's is visible to it).
Submissions travel to the workers as bytes and outcomes come back as bytes. The grades are the bundled examples'
(examples/expected.json, what a local run gives), and a worker killed mid-class loses nothing and grades nothing
twice."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autograder import REPOSITORY, sandbox
from autograder.grading import ledger as books

EXPECTED = json.loads((REPOSITORY / "examples" / "expected.json").read_text())
STUDENTS = {  # student: the bundled submission they hand in (each made quick: its kernel ends after the setup cell)
    "ada": "full_solution",
    "bo": "no_sqrt_scaling",
    "cy": "mask_after_softmax",
    "di": "split_heads_reshape_order",
    "ed": "previous_token_off_by_one",
    "flo": "blank_release",
}
SUBNET = "10.77.0"
SCHEDULER = f"{SUBNET}.1"


def why_no_namespaces() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces are made by root"
    if shutil.which("ip") is None:
        return "iproute2's ip is missing (apt-get install iproute2)"
    if sandbox.bubblewrap() is None:
        return f"bubblewrap is not available ({sandbox.INSTALL}): a worker grades only inside it"
    probe = f"agprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"this machine cannot make network namespaces ({made.stderr.strip()})"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr}"


class Network:
    """Namespaces on one bridge (in a namespace of its own): ``add(name, host)`` gives one SUBNET.host."""

    def __init__(self):
        self.tag = f"ag{os.getpid() % 100000}"
        self.lan = f"{self.tag}lan"
        self.names: list[str] = []
        ip("netns", "add", self.lan)
        ip("-n", self.lan, "link", "add", "br0", "type", "bridge")
        ip("-n", self.lan, "link", "set", "br0", "up")

    def add(self, name: str, host: int) -> str:
        namespace = f"{self.tag}{name}"
        ip("netns", "add", namespace)
        self.names.append(namespace)
        inside, outside = f"{self.tag}i{host}", f"{self.tag}o{host}"
        ip("link", "add", inside, "type", "veth", "peer", "name", outside)
        ip("link", "set", inside, "netns", namespace)
        ip("link", "set", outside, "netns", self.lan)
        ip("-n", self.lan, "link", "set", outside, "master", "br0", "up")
        ip("-n", namespace, "addr", "add", f"{SUBNET}.{host}/24", "dev", inside)
        ip("-n", namespace, "link", "set", inside, "up")
        ip("-n", namespace, "link", "set", "lo", "up")
        return namespace

    def pids(self, namespace: str) -> list[int]:
        listed = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout
        return [int(pid) for pid in listed.split()]

    def close(self) -> None:
        for namespace in self.names:
            for pid in self.pids(namespace):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        time.sleep(0.5)
        for namespace in [*self.names, self.lan]:
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)


def private(namespace: str, command: str, log: Path) -> subprocess.Popen:
    """``command`` (a shell line) in ``namespace``, with a tmpfs of its own on /tmp and its home there."""
    line = f"mount -t tmpfs tmpfs /tmp && mkdir -p /tmp/home && export HOME=/tmp/home TMPDIR=/tmp && exec {command}"
    return subprocess.Popen(
        ["ip", "netns", "exec", namespace, "sh", "-c", line],
        cwd=REPOSITORY,
        stdout=open(log, "w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    why = why_no_namespaces()
    if why:
        pytest.skip(why)
    logs = tmp_path_factory.mktemp("machines")
    network = Network()
    try:
        python = sys.executable
        network.add("sched", 1)
        scheduler = private(
            f"{network.tag}sched",
            f"{python} -m distributed.cli.dask_scheduler --host {SCHEDULER} --port 8786 --no-dashboard",
            logs / "scheduler.log",
        )
        workers = {}
        for number in (1, 2, 3):
            namespace = network.add(f"w{number}", 10 + number)
            workers[namespace] = private(
                namespace,
                f"{python} -m distributed.cli.dask_worker tcp://{SCHEDULER}:8786 --nthreads 1 --nworkers 1 "
                f"--no-nanny --no-dashboard --host {SUBNET}.{10 + number} --local-directory /tmp/dask",
                logs / f"worker{number}.log",
            )
        coordinator = network.add("coord", 100)
        yield network, coordinator, workers, logs
        for process in [scheduler, *workers.values()]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    finally:
        network.close()


COORDINATOR = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from dask.distributed import Client
    from autograder.course.run import CourseOptions, grade_course
    course, submissions, workers = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    with Client("tcp://{scheduler}:8786", timeout=60) as client:  # every worker in before the class starts
        client.wait_for_workers(workers, timeout=120)
    started = time.monotonic()
    run = grade_course(CourseOptions(course=course, submissions=submissions, scheduler="tcp://{scheduler}:8786"))
    not_graded = {{**run.uploads.students_not_graded, **run.uploads.not_graded}}
    seconds = time.monotonic() - started
    print(json.dumps({{"graded": run.summary.graded, "failed": run.summary.failed, "seconds": seconds,
                      "not_graded": not_graded}}))
    """
).format(scheduler=SCHEDULER)


def hand_in(submissions: Path) -> None:
    import hostile

    for student, like in STUDENTS.items():
        folder = submissions / student / "attention"
        folder.mkdir(parents=True)
        quick = hostile.add_cell(hostile.load(like), "setup", "import os\nos._exit(0)", "scratch-quick")
        (folder / "attention.ipynb").write_bytes(hostile.write(quick))


def automatic_points(course: Path) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {
            submission.student.id: {grade.name: grade.auto_score for grade in submission.notebooks[0].grades}
            for submission in gradebook.find_assignment("attention").submissions
        }


def test_a_class_graded_across_namespaced_workers_gets_the_local_grades_and_survives_a_killed_worker(
    machines, tmp_path
):
    network, coordinator, workers, logs = machines
    course, submissions = tmp_path / "course", tmp_path / "submissions"
    hand_in(submissions)
    script = tmp_path / "coordinator.py"
    script.write_text(COORDINATOR)
    run = subprocess.Popen(
        ["ip", "netns", "exec", coordinator, sys.executable, str(script), str(course), str(submissions), "3"],
        cwd=REPOSITORY,
        stdout=subprocess.PIPE,
        stderr=open(logs / "coordinator.log", "w"),
        text=True,
        env={**os.environ, "ATTENTION_FORWARD_CACHE_HOME": str(tmp_path / "no-cache")},  # a class this small has none
    )
    victim = next(iter(workers))
    in_namespace = {pid: namespace for namespace in workers for pid in network.pids(namespace)}
    killed = []
    deadline = time.monotonic() + 480
    while run.poll() is None and time.monotonic() < deadline:
        if not killed and course.exists() and books.entries(course, "attention"):  # a first student recorded
            for pid in network.pids(victim):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        time.sleep(0.2)
    out, _ = run.communicate(timeout=30)
    assert run.returncode == 0, (logs / "coordinator.log").read_text()[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    assert killed, "the class ended before a worker could be killed mid-class"
    assert (result["failed"], result["not_graded"]) == ({}, {})
    assert sorted(result["graded"]) == sorted(STUDENTS), "a student lost or graded twice"
    points = automatic_points(course)
    for student, like in STUDENTS.items():
        for grade_id, want in EXPECTED["students"][like]["points"].items():
            assert points[student][grade_id] == (None if want is None else pytest.approx(want, abs=1e-9)), (
                student,
                grade_id,
            )
    graded_by = {int(books.ledger(course, "attention", s)["worker"].rsplit(":", 1)[1]) for s in STUDENTS}
    machines_used = {in_namespace.get(pid) for pid in graded_by}
    assert None not in machines_used, f"graded by {graded_by}, not by the namespaced workers {in_namespace}"
    assert len(machines_used) >= 2, f"graded on {machines_used} only: the class was not spread over the machines"
    print(
        f"class of {len(STUDENTS)} graded across {len(machines_used)} namespaced workers in {result['seconds']:.0f} s, "
        f"{victim} killed after the first student was recorded"
    )
