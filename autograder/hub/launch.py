"""The course on JupyterHub, on this machine: one instructor and N students, each a system account, nbgrader's exchange.

    make hub                                             # installs JupyterHub and the proxy, then this
    python -m autograder.hub                             # http://localhost:8000, instructor + student1..3
    python -m autograder.hub --public-url https://hub.school.edu   # behind TLS: *.hub.school.edu to 127.0.0.1:8000
    python -m autograder.hub --students 30 --port 8010 --due "2026-12-14 17:00"
    python -m autograder.hub --source my-course/source --course-id ml101   # another course's assignments
    python -m autograder.hub --fresh                     # forget the hub's state (course, homes, exchange)

JupyterHub (from PyPI, the ``hub`` extra) runs with ``hub/jupyterhub_config.py``, behind configurable-http-proxy
(from npm: ``make hub`` installs it into .hub/node/), on 127.0.0.1 only, in the hub's runtime (``make install-hub``:
.hub/venv, a Python every account can run, autograder.hub.runtime). Any password logs in (a class server on one
machine: the configuration file says what to change for a public one). Each account's server, the grading service
and the hub are origins of their own: http://student1.localhost:8000, http://grading--service.localhost:8000,
http://localhost:8000 (browsers resolve *.localhost to the loopback).

It runs as root: each account (the instructor, student1..N) is a system account the hub makes with useradd
(``accounts``), and JupyterHub's LocalProcessSpawner starts each server as its account. The state folder (default
.hub/state/) holds everything the hub keeps:

- ``hub/`` (root's only): JupyterHub's database, cookie secret, pid files and log;
- ``home/<account>/`` (that account's only, mode 700): the instructor's holds the course, ``home/instructor/<course
  id>/``, made as ``python -m autograder.course`` makes a course folder, with every assignment of the course's
  source folder;
- ``exchange/`` (nbgrader's modes): ``<course id>/outbound`` readable by all, ``inbound`` writable but not
  listable (-wx, sticky: nobody removes another's submission), ``feedback`` not listable (each page named by a
  hash of its submission's secret, known only to its student).

Collect goes through ``autograder.hub.collect.OwnCollect`` (no links, no special files, no submission in another's
name). Students' servers run in bubblewrap with a network of their own (``autograder.hub.bridge``): the proxy's public
port is their one way out. After Collect the instructor grades the class as their own account:

    runuser -u instructor -- .venv/bin/python -m autograder.course \\
        --course .hub/state/home/instructor/attention --submissions .hub/state/home/instructor/attention/submitted

Stopping (Ctrl-C, SIGTERM) stops the hub, which stops the proxy and every server it started; anything it started
that is still running afterwards is stopped too, so nothing is left.
"""

from __future__ import annotations

import argparse
import datetime
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from nbgrader.api import Gradebook

import lib
from autograder import REPOSITORY, sandbox
from autograder.assignments import find, names
from autograder.course.run import PipelineError, check_course_folder, course_db, nbgrader_environment, prepare_course
from autograder.hub import folders, limits
from autograder.hub import runtime as hub_runtime
from autograder.lms.lti.store import roster_learners

CONFIG = REPOSITORY / "hub" / "jupyterhub_config.py"
PROXY = "configurable-http-proxy"
LOCAL_PROXY = REPOSITORY / ".hub" / "node" / "node_modules" / ".bin" / PROXY  # make hub's npm install
INSTRUCTOR = "instructor"
SOURCE = REPOSITORY / "source"  # the course's assignments, one folder each (a notebook and its checks.py)
COURSE_ID = "attention"  # the course's name: its folder in the instructor's home and in the exchange
ACCOUNT_NOTE = "attention course hub account"  # the comment (GECOS) of every account the hub makes
EXCHANGE_MODES = {"outbound": 0o755, "inbound": 0o3733, "feedback": 0o711}  # nbgrader's modes; inbound + sticky


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
    if not (runtime().parent / "jupyterhub").exists():
        return f"the hub's runtime {runtime()} has no JupyterHub: make install-hub (it makes .hub/venv)"
    return None


def runtime() -> Path:
    """The Python the hub, every account's server, their kernels and the grading service run: $ATTENTION_HUB_PYTHON,
    else ``make install-hub``'s .hub/venv (made from a Python open to all accounts: autograder.hub.runtime), else
    this process's own (which other accounts may not be able to run: why_unreachable says so)."""
    named = os.environ.get("ATTENTION_HUB_PYTHON")
    if named:
        return Path(named)
    made = hub_runtime.VENV / "bin" / "python"
    if (hub_runtime.VENV / hub_runtime.STAMP).is_file() and made.exists():
        return made
    return Path(sys.executable)


def student_names(count: int) -> list[str]:
    return [f"student{number}" for number in range(1, count + 1)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def why_no_accounts() -> str | None:
    """Why the hub cannot make and switch to system accounts here (None: it can)."""
    if os.geteuid() != 0:
        return (
            "the hub runs each account's server as a system account of its own, which only root can make and "
            "switch to: run it as root (sudo make hub, or sudo .venv/bin/python -m autograder.hub)"
        )
    for program in ("useradd", "usermod"):
        if shutil.which(program) is None:
            return f"{program} is missing: install it (apt-get install passwd), then start the hub again"
    return None


def ensure_account(name: str, home: Path) -> pwd.struct_passwd:
    """The system account ``name`` with ``home`` as its home: made with useradd (marked ACCOUNT_NOTE), or one the
    hub made before (its home moved to ``home``). An account of the same name that the hub did not make is refused:
    the hub never takes over someone's account."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        entry = None
    if entry is not None and entry.pw_gecos != ACCOUNT_NOTE:
        raise HubError(
            f"an account {name!r} already exists on this machine and was not made by the hub: remove it "
            f"(userdel {name}) or run the hub on a machine of its own"
        )
    why = why_no_accounts()
    if why is not None:
        raise HubError(why)
    if entry is None:
        command = ["useradd", "--no-create-home", "--home-dir", str(home), "--shell", "/bin/bash"]
        command += ["--comment", ACCOUNT_NOTE, "--user-group", name]
    elif entry.pw_dir != str(home):
        command = ["usermod", "--home", str(home), name]
    else:
        command = []
    if command:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise HubError(f"{' '.join(command)} failed: {done.stderr.strip()}")
    return pwd.getpwnam(name)


def join_groups(instructor: str, students: list[str]) -> None:
    """The instructor in each student's group: a submission is closed to other students (its files 640, its folders
    750: hub/student/nbgrader_config.py's PrivateSubmit) and open to the instructor's collect through the group."""
    done = subprocess.run(
        ["usermod", "--append", "--groups", ",".join(students), instructor], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise HubError(f"usermod --append --groups ... {instructor} failed: {done.stderr.strip()}")


def own(path: Path, account: pwd.struct_passwd, mode: int) -> None:
    """The folder ``path`` (whose parent is root's or the hub's, never an account's) handed to ``account`` with
    ``mode``, made when missing: the folder alone, through its descriptor, never a link, never what is in it."""
    parent = folders.open_folder(path.parent)
    try:
        os.close(folders.made(parent, path.name, uid=account.pw_uid, gid=account.pw_gid, mode=mode))
    except folders.Unsafe as error:
        raise HubError(f"{path.parent}/{error}: remove it (the hub makes {path.name} itself)") from None
    finally:
        os.close(parent)


STUDENTS_FOLDERS = ("submitted", "autograded", "feedback")  # nbgrader's folders of students' work in a course


def hand_over_course(course: Path, account: pwd.struct_passwd) -> int:
    """What root made in the instructor's course folder while preparing it (the entries root owns) handed to the
    instructor; the entries handed over. Walked with a stack of descriptors (no recursion), never through a link;
    nbgrader's folders of students' work (submitted/, autograded/, feedback/) are never entered, and anything another
    account owns is never changed."""
    handed = 0
    stack = [(folders.open_folder(course), True)]
    try:
        while stack:
            folder, top = stack.pop()
            try:
                if os.fstat(folder).st_uid == 0:
                    os.fchown(folder, account.pw_uid, account.pw_gid)
                    handed += 1
                with os.scandir(folder) as listing:
                    entries = [(entry.name, entry.stat(follow_symlinks=False)) for entry in listing]
                for name, status in entries:
                    if stat.S_ISDIR(status.st_mode):
                        if status.st_uid in (0, account.pw_uid) and not (top and name in STUDENTS_FOLDERS):
                            stack.append((os.open(name, folders.FOLDER, dir_fd=folder), False))
                    elif status.st_uid == 0:
                        os.chown(name, account.pw_uid, account.pw_gid, dir_fd=folder, follow_symlinks=False)
                        handed += 1
            finally:
                os.close(folder)
    finally:
        for folder, _ in stack:
            os.close(folder)
    return handed


def closed_folder(path: Path) -> Path | None:
    """The first folder above ``path`` that other accounts cannot pass through (mode without o+x), or None."""
    for folder in [path, *path.parents]:
        if folder.exists() and not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def why_unreachable(state: Path) -> str | None:
    """Why the accounts could not reach their homes in ``state``, the environment's Python (a venv's base
    included) or the course library (None: they can)."""
    python = runtime()
    for path in [python.parent.parent, python.resolve()]:  # the hub's environment, then its base interpreter
        closed = closed_folder(path.parent if path.is_file() else path)
        if closed is not None:
            return (
                f"the hub's Python {python} lives inside {closed}, closed to other accounts (mode "
                f"{stat.S_IMODE(closed.stat().st_mode):o}), and each account's server runs it: make install-hub "
                "makes the hub a runtime of its own from a Python open to all (.hub/venv, autograder.hub.runtime)"
            )
    for path in [state, Path(lib.__file__).resolve().parent]:
        closed = closed_folder(path.parent if path.is_file() else path)
        if closed is not None:
            return (
                f"{closed} is closed to other accounts (mode {stat.S_IMODE(closed.stat().st_mode):o}), so the "
                f"students' servers cannot reach {path}: open it (chmod o+x {closed}: passing through, not listing) "
                "or choose a --state and a checkout under folders open to all, e.g. /srv/attention-hub"
            )
    return None


def course_assignments(source: Path) -> list[str]:
    """The assignments the hub serves: every folder of the course's source folder with a notebook and checks.py."""
    found = names(source)
    unmarked = sorted(
        folder.name
        for folder in (source.iterdir() if source.is_dir() else ())
        if (folder / "checks").is_dir() and not (folder / "checks" / "__init__.py").is_file()
    )
    if unmarked:  # a package of checks without its __init__.py: the assignment would silently not be served
        raise HubError(
            f"{source}/{unmarked[0]}/checks/ has no __init__.py, so it is not a package of checks: add the "
            "__init__.py that defines CHECKS (or copy the assignment's folder whole)"
        )
    if not found:
        raise HubError(
            f"{source} holds no assignment (a folder with one notebook and its checks.py): name the course's "
            "source folder with --source"
        )
    return found


def prepare_exchange(state: Path, course_id: str, instructor: pwd.struct_passwd) -> Path:
    """nbgrader's exchange with its own permission model, made before the first release so that a student's
    sandbox can show its folders: the root open to all with the sticky bit, the course's folder and its three
    folders the instructor's, outbound readable, inbound writable but not listable (sticky: nobody removes
    another's submission), feedback not listable. Only these five folders are touched, each through its
    descriptor: nothing in them (a submission, its owner, its times) is changed by a start."""
    exchange = state / "exchange"
    root = folders.open_folder(state)
    try:
        exchange_folder = folders.made(root, "exchange", uid=0, gid=0, mode=0o1777)
    except folders.Unsafe as error:
        raise HubError(f"{state}/{error}: remove it (the hub makes the exchange itself)") from None
    finally:
        os.close(root)
    try:
        try:
            course = folders.made(exchange_folder, course_id, uid=instructor.pw_uid, gid=instructor.pw_gid, mode=0o755)
        except folders.Unsafe as error:  # made first by another account (the root is open to all): never taken over
            moved = folders.aside(exchange_folder, course_id)
            print(f"WARNING: {exchange}/{error}: moved aside to {moved}, made anew", file=sys.stderr, flush=True)
            course = folders.made(exchange_folder, course_id, uid=instructor.pw_uid, gid=instructor.pw_gid, mode=0o755)
        try:
            for folder, mode in EXCHANGE_MODES.items():
                try:
                    os.close(folders.made(course, folder, uid=instructor.pw_uid, gid=instructor.pw_gid, mode=mode))
                except folders.Unsafe as error:
                    raise HubError(f"{exchange / course_id}/{error}: remove it and start the hub again") from None
        finally:
            os.close(course)
    finally:
        os.close(exchange_folder)
    return exchange


def prepare(
    state: Path,
    students: list[str],
    due: datetime.datetime | None = None,
    *,
    source: Path = SOURCE,
    course_id: str = COURSE_ID,
) -> Path:
    """The state folder: an account and a home (its own, mode 700) per person, the exchange, and the instructor's
    course (made and kept as autograder.course.classroom makes a course folder, with every assignment of ``source``),
    readable by the instructor only. Returns the course folder."""

    assignments = course_assignments(source)
    course = state / "home" / INSTRUCTOR / course_id
    check_course_folder(course)  # before anything is touched: a state folder holding someone else's files
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o711)
    unreachable = why_unreachable(state)
    if unreachable is not None:
        raise HubError(unreachable)
    for private in ("hub", "home"):
        (state / private).mkdir(exist_ok=True)
    (state / "hub").chmod(0o700)
    (state / "home").chmod(0o711)
    accounts = {name: ensure_account(name, state / "home" / name) for name in [INSTRUCTOR, *students]}
    join_groups(INSTRUCTOR, students)
    for name, account in accounts.items():  # each home itself, never what its account put in it
        own(state / "home" / name, account, 0o700)
    prepare_exchange(state, course_id, accounts[INSTRUCTOR])
    for assignment in assignments:
        prepare_course(course, source=source, layout=find(source, assignment))
    os.environ["PATH"] = nbgrader_environment()["PATH"]  # a new gradebook runs alembic from PATH
    with Gradebook(course_db(course)) as gradebook:  # nbgrader's tables first, stamped by alembic (the service
        for assignment in assignments:  # adds its own beside them): a plain start then the class command works
            gradebook.update_or_create_assignment(assignment, **({"duedate": due} if due is not None else {}))
    hand_over_course(course, accounts[INSTRUCTOR])
    own(course, accounts[INSTRUCTOR], 0o700)
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
    ``start()`` returns once the hub answers; ``stop()`` leaves nothing it started running.

    Each person's server, the grading service and the hub are origins of their own (JupyterHub's subdomain_host):
    the hub at ``public_url`` (default http://localhost:PORT), ``name``'s server at http://name.localhost:PORT, the
    grading service at http://grading--service.localhost:PORT. Browsers resolve every *.localhost name to the
    loopback; on a real domain the public URL is https://hub.school.edu, with a wildcard DNS record and certificate
    for *.hub.school.edu in front of 127.0.0.1:PORT."""

    def __init__(
        self,
        state: Path,
        students: list[str],
        port: int = 8000,
        log: Path | None = None,
        course_id: str = COURSE_ID,
        public_url: str | None = None,
    ):
        self.state, self.students, self.port = Path(state).resolve(), students, port
        self.course_id = course_id
        self.public_url = (public_url or f"http://localhost:{port}").rstrip("/")
        self.log = log or self.state / "hub" / "jupyterhub.log"
        self.api_port, self.proxy_api_port = free_port(), free_port()  # the hub's API, the proxy's API
        self.service_port = free_port()  # the grading service (autograder.service.app), behind the proxy
        self.process: subprocess.Popen | None = None
        self.left_behind: list[int] = []  # what the hub started and left running when it stopped (then stopped)

    @property
    def url(self) -> str:
        """The hub's own origin (its login, its API, the LTI hand-off)."""
        return self.public_url

    def origin_of(self, name: str, kind: str = "user") -> str:
        """The origin of ``name``'s server (kind "user") or of the service ``name`` (kind "service"): a subdomain
        of the hub's, as JupyterHub's default subdomain hook names it (the account names here need no escaping)."""
        scheme, _, host = self.public_url.partition("://")
        return f"{scheme}://{name}{'' if kind == 'user' else '--' + kind}.{host}"

    def user_url(self, name: str) -> str:
        return f"{self.origin_of(name)}/user/{name}/"

    def service_url(self, name: str = "grading") -> str:
        return f"{self.origin_of(name, 'service')}/services/{name}/"

    def environment(self) -> dict:
        bin_folder = str(runtime().parent)  # jupyterhub, jupyterhub-singleuser, alembic: the runtime open to all
        return {
            **os.environ,
            "PATH": os.pathsep.join([bin_folder, os.environ.get("PATH", "")]),
            "ATTENTION_HUB_STATE": str(self.state),
            "ATTENTION_HUB_PORT": str(self.port),
            "ATTENTION_HUB_PUBLIC_URL": self.public_url,
            "ATTENTION_HUB_PORTS": f"{self.api_port},{self.proxy_api_port},{self.service_port}",
            "ATTENTION_HUB_COURSE_ID": self.course_id,
            "ATTENTION_HUB_PROXY": str(proxy_program()),
            "ATTENTION_HUB_INSTRUCTOR": INSTRUCTOR,
            "ATTENTION_HUB_STUDENTS": ",".join(self.students),
        }

    def start(self, timeout: float = 90) -> None:
        why = why_unavailable() or why_no_accounts()
        if why is not None:
            raise HubError(why)
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                raise HubError(f"port {self.port} on 127.0.0.1 is taken: choose another with --port")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        program = runtime().parent / "jupyterhub"
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
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/hub/api", timeout=2) as answer:
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
        self.stop_left_behind()
        limits.remove_groups()  # the servers' memory groups, each empty once its server has ended

    def stop_left_behind(self) -> None:
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


def server_limits() -> str:
    """What each student's server may take, in a line (the README's list says the same)."""
    return f"{limits.stated()}; /dev/shm {sandbox.SHARED_MEMORY // 2**20} MiB"


def parse_due(text: str) -> datetime.datetime:
    """A due date as nbgrader keeps it: UTC, without a time zone ('2026-12-14 17:00' is UTC; '...+01:00' converted)."""
    try:
        due = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date and time such as 2026-12-14 17:00") from None
    return due.astimezone(datetime.timezone.utc).replace(tzinfo=None) if due.tzinfo else due


def forget_state(state: Path) -> None:
    """--fresh: the state folder deleted, however deep the trees students left in their homes (coreutils' rm walks
    without recursion and never follows a link or leaves the file system; Python's rmtree recurses)."""
    done = subprocess.run(["rm", "-rf", "--one-file-system", "--", str(state)], capture_output=True, text=True)
    if done.returncode != 0:
        raise HubError(f"--fresh could not delete {state}: {done.stderr.strip()[:300]}")


def command_line() -> argparse.ArgumentParser:
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
    parser.add_argument(
        "--source",
        type=Path,
        default=SOURCE,
        help="the course's assignments, a folder each (default source/)",
    )
    parser.add_argument(
        "--course-id",
        default=COURSE_ID,
        help=f"the course's name in the exchange (default {COURSE_ID})",
    )
    parser.add_argument(
        "--public-url",
        default=None,
        help="the hub's address in browsers (default http://localhost:PORT); each account's server is on a subdomain "
        "of it (http://student1.localhost:PORT), so a real domain needs a wildcard DNS record and certificate",
    )
    parser.add_argument("--fresh", action="store_true", help="delete the state folder first (course, homes, exchange)")
    parser.add_argument(
        "--roster",
        action="store_true",
        help="the students are the course's active learners from the LMS (lti.json, python -m autograder.hub.roster "
        "makes their accounts), not student1..N",
    )
    return parser


def main(argv=None) -> int:
    parser = command_line()
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be at least 1")
    state = args.state.resolve()
    students = student_names(args.students)
    if args.roster:
        active = roster_learners(state / "home" / INSTRUCTOR / args.course_id, refused=(INSTRUCTOR,)).active
        if not active:
            parser.error(
                "--roster: the course's lti.json lists no active learner: run python -m autograder.lms.lti "
                "roster first, then python -m autograder.hub.roster"
            )
        students = active
    try:
        if args.fresh and state.exists():
            forget_state(state)
        course = prepare(state, students, args.due, source=args.source.resolve(), course_id=args.course_id)
        hub = Hub(state, students, args.port, course_id=args.course_id, public_url=args.public_url)
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
        f"  instructor: {INSTRUCTOR} at {hub.origin_of(INSTRUCTOR)} (Formgrader: Nbgrader > Formgrader; the course "
        f"folder {course})\n"
        f"  each account's server on an origin of its own: {hub.origin_of(students[0])}, ...; "
        f"checks: {hub.service_url()}\n"
        f"  assignments: {', '.join(course_assignments(args.source.resolve()))}\n"
        f"  students:   {', '.join(students)}\n"
        f"  limits:     {server_limits()}\n"
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
