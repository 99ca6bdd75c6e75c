"""The course on JupyterHub, on this machine: one instructor, N students, nbgrader's exchange.

    make hub                                             # installs JupyterHub and the proxy, then this
    python -m autograder.hub                             # http://127.0.0.1:8000, instructor + student1..3
    python -m autograder.hub --students 30 --port 8010 --due "2026-12-14 17:00"
    python -m autograder.hub --fresh                     # forget the hub's state (course, homes, exchange)

JupyterHub (from PyPI, the ``hub`` extra) runs with ``hub/jupyterhub_config.py``, behind configurable-http-proxy
(from npm: ``make hub`` installs it into .hub/node/), on 127.0.0.1 only. Any password logs in (a sample for one
machine: the configuration file says what to change for a real server).

The state folder (default .hub/state/) holds everything the hub keeps: each account's home
(``home/<name>/``), nbgrader's exchange (``exchange/``), and the instructor's course,
``home/instructor/attention/``, made as ``python -m autograder.classroom`` makes a course folder (the
repository's nbgrader configuration, the assignment's source), so that after ``nbgrader collect`` (Formgrader's
Collect) the instructor grades the class with

    python -m autograder.classroom --course .hub/state/home/instructor/attention \\
        --submissions .hub/state/home/instructor/attention/submitted

The instructor's server shows Formgrader, Create Assignment and the course list; a student's shows the
assignment list and Validate only, and runs in bubblewrap (autograder.sandbox), which shows it the student's home,
the course library and the course's exchange folders, nothing of the repository or the instructor's course; without
bubblewrap a student's server does not start and says why. Stopping (Ctrl-C, SIGTERM) stops the hub, which stops
the proxy and every server it started; anything it started that is still running afterwards is stopped too, so
nothing is left.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from autograder import REPOSITORY, sandbox

CONFIG = REPOSITORY / "hub" / "jupyterhub_config.py"
PROXY = "configurable-http-proxy"
LOCAL_PROXY = REPOSITORY / ".hub" / "node" / "node_modules" / ".bin" / PROXY  # make hub's npm install
INSTRUCTOR = "instructor"
ASSIGNMENT = "attention"  # the assignment, and the course id its exchange folder is named by


class HubError(RuntimeError):
    """The hub cannot start; the message says what is missing and how to get it."""


def proxy_program() -> Path:
    """configurable-http-proxy: $ATTENTION_HUB_PROXY, make hub's .hub/node/, or one on PATH."""
    named = os.environ.get("ATTENTION_HUB_PROXY")
    for candidate in (named, LOCAL_PROXY, shutil.which(PROXY)):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    raise HubError(
        f"{PROXY} is missing: `make hub` installs it with npm (npm install --prefix .hub/node {PROXY}); "
        "npm comes with Node.js (apt-get install nodejs npm)"
    )


def why_unavailable() -> str | None:
    """Why the hub cannot start on this machine (None: it can)."""
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "JupyterHub is not installed: pip install -e '.[hub]' (make hub does it)"
    if shutil.which("node") is None and shutil.which("nodejs") is None:
        return "Node.js is missing (configurable-http-proxy runs on it): apt-get install nodejs npm"
    try:
        proxy_program()
    except HubError as error:
        return str(error)
    return None


def student_names(count: int) -> list[str]:
    return [f"student{number}" for number in range(1, count + 1)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def prepare(state: Path, students: list[str], due: datetime.datetime | None = None) -> Path:
    """The state folder: a home per account, the exchange, and the instructor's course (made and kept as
    autograder.classroom makes a course folder, with the assignment's source). Returns the course folder."""
    from autograder.assignments import find
    from autograder.course import prepare_course

    for name in [INSTRUCTOR, *students]:
        (state / "home" / name).mkdir(parents=True, exist_ok=True)
    (state / "exchange").mkdir(parents=True, exist_ok=True)
    (state / "exchange").chmod(0o777)  # nbgrader's exchange: every account writes its submissions there
    for folder, mode in (("outbound", 0o755), ("inbound", 0o733), ("feedback", 0o711)):  # nbgrader's own modes
        (state / "exchange" / ASSIGNMENT / folder).mkdir(parents=True, exist_ok=True)  # a student's sandbox shows them
        (state / "exchange" / ASSIGNMENT / folder).chmod(mode)
    (state / "exchange" / ASSIGNMENT).chmod(0o755)
    course = state / "home" / INSTRUCTOR / ASSIGNMENT
    layout = find(REPOSITORY / "source", ASSIGNMENT)
    prepare_course(course, source=REPOSITORY / "source", layout=layout)
    if due is not None:
        from nbgrader.api import Gradebook

        from autograder.course import course_db, nbgrader_environment

        os.environ["PATH"] = nbgrader_environment()["PATH"]  # a new gradebook runs alembic from PATH
        with Gradebook(course_db(course)) as gradebook:
            gradebook.update_or_create_assignment(ASSIGNMENT, duedate=due)
    return course


def processes_in(folder: Path) -> list[int]:
    """Processes whose working folder is ``folder`` or inside it (the hub, the proxy, servers, kernels)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if cwd == folder or folder in cwd.parents:
            found.append(int(entry.name))
    return found


class Hub:
    """JupyterHub on 127.0.0.1:``port`` for ``students`` and the instructor, its state in ``state``.
    ``start()`` returns once the hub answers; ``stop()`` leaves nothing it started running."""

    def __init__(self, state: Path, students: list[str], port: int = 8000, log: Path | None = None):
        self.state, self.students, self.port = Path(state).resolve(), students, port
        self.log = log or self.state / "jupyterhub.log"
        self.process: subprocess.Popen | None = None
        self.left_behind: list[int] = []  # what the hub started and left running when it stopped (then stopped)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environment(self) -> dict:
        bin_folder = str(Path(sys.executable).parent)  # jupyterhub-singleuser, alembic
        return {
            **os.environ,
            "PATH": os.pathsep.join([bin_folder, os.environ.get("PATH", "")]),
            "ATTENTION_HUB_STATE": str(self.state),
            "ATTENTION_HUB_PORT": str(self.port),
            "ATTENTION_HUB_PORTS": f"{free_port()},{free_port()}",
            "ATTENTION_HUB_PROXY": str(proxy_program()),
            "ATTENTION_HUB_INSTRUCTOR": INSTRUCTOR,
            "ATTENTION_HUB_STUDENTS": ",".join(self.students),
        }

    def start(self, timeout: float = 90) -> None:
        why = why_unavailable()
        if why is not None:
            raise HubError(why)
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                raise HubError(f"port {self.port} on 127.0.0.1 is taken: choose another with --port")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        program = Path(sys.executable).parent / "jupyterhub"
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [str(program), "-f", str(CONFIG)],
                cwd=self.state,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stopped as one
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HubError(f"JupyterHub stopped at start (exit {self.process.returncode}): see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}/hub/api", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise HubError(f"JupyterHub did not answer on {self.url} within {timeout:.0f} s: see {self.log}")

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM to the hub (it stops the proxy and the servers), then to whatever it had started that is still
        running (the servers run in sessions of their own); SIGKILL after 5 s. Nothing else is touched."""
        started = []
        if self.process is not None and self.process.poll() is None:
            started = sandbox.descendants(self.process.pid)  # the proxy, each account's server and its kernels
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.left_behind = [pid for pid in started if sandbox.alive(pid)]
        deadline = time.monotonic() + 10
        while (left := [pid for pid in self.left_behind if sandbox.alive(pid)]) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGTERM if time.monotonic() < deadline - 5 else signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.5)

    def __enter__(self) -> Hub:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def parse_due(text: str) -> datetime.datetime:
    """A due date as nbgrader keeps it: UTC, without a time zone ('2026-12-14 17:00' is UTC; '...+01:00' converted)."""
    try:
        due = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date and time such as 2026-12-14 17:00") from None
    return due.astimezone(datetime.timezone.utc).replace(tzinfo=None) if due.tzinfo else due


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.hub", description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=3, help="student accounts student1..N (default 3)")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    parser.add_argument(
        "--state", type=Path, default=REPOSITORY / ".hub" / "state", help="the hub's state folder (default .hub/state)"
    )
    parser.add_argument(
        "--due",
        type=parse_due,
        default=None,
        help="the assignment's due date, UTC unless it says ('2026-12-14 17:00', '2026-12-14 17:00+01:00')",
    )
    parser.add_argument("--fresh", action="store_true", help="delete the state folder first (course, homes, exchange)")
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be at least 1")
    state = args.state.resolve()
    if args.fresh and state.exists():
        shutil.rmtree(state)
    students = student_names(args.students)
    from autograder.course import PipelineError

    try:
        course = prepare(state, students, args.due)
        hub = Hub(state, students, args.port)
        hub.start()
    except (HubError, PipelineError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # a --state that is a file, a folder that cannot be written
        print(f"FAILED: cannot use the state folder {state}: {error}", file=sys.stderr)
        return 1
    if sandbox.why_unprotected() is not None and not sandbox.unsandboxed_allowed():
        print(f"WARNING: students' servers will not start: {sandbox.refusal()}", file=sys.stderr, flush=True)
    print(
        f"The course's JupyterHub: {hub.url} (any password)\n"
        f"  instructor: {INSTRUCTOR} (Formgrader: Nbgrader > Formgrader; the course folder {course})\n"
        f"  students:   {', '.join(students)}\n"
        f"  log:        {hub.log}\n"
        "Ctrl-C stops it and everything it started.",
        flush=True,
    )
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    try:
        while not stopping and hub.process.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    hub.stop()
    print("stopped: nothing of the hub is running", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
