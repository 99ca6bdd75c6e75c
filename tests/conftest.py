"""Test-wide settings.

The store's model multiplies small matrices; on a 2-core machine several BLAS threads fight over the cores and
a forward pass measured up to 9x slower than with one. Set before NumPy is first imported.
"""

import os

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")


import concurrent.futures  # noqa: E402
import datetime  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import gradebooks  # noqa: E402 - tests/gradebooks.py, beside this file
import pytest  # noqa: E402

REPOSITORY = Path(__file__).resolve().parent.parent
BUNDLED = REPOSITORY / "examples" / "submissions"
CANARY_TEXT = "the instructor's file, untouched\n"


class Listener:
    """A TCP server on the grader's loopback that counts the connections it accepts."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()


@dataclass
class GradedClass:
    course: Path
    submissions: Path
    run: object  # autograder.course.run.CourseRun
    seconds: float
    before: dict  # {relative path: bytes} of every submitted file, before the run
    cases: dict  # {student: hostile.Case}
    canary: Path
    listener: Listener
    students: list = field(default_factory=list)


# --- the suite on two processes (pytest-xdist, -n 2 --dist loadgroup in pyproject.toml) ------------------------------
#
# xdist's own loadgroup reads a group that its workers append to each test's id, which pytest 9.2 no longer lets a
# plugin change: every module and group was split across the workers and the graded class graded on both (about
# 150 s, twice in a run). The groups are here, by path, and the controller's scheduler (pytest_xdist_make_scheduler)
# reads them from the test's id as it is.

HUB_ACCOUNTS = (  # start a hub: they make and use the same system accounts (instructor, student1..), one at a time
    "tests/autograder/hub/",
    "tests/autograder/lms/lti/test_identity.py",
    "tests/autograder/lms/lti/test_tool.py",
)

GRADED_CLASS = (  # read the session's graded class (fixtures graded_class, graded_course_copy): graded once per worker
    "tests/autograder/test_assignments.py",
    "tests/autograder/course/test_classroom.py",
    "tests/autograder/course/test_formgrader.py",
    "tests/autograder/notebook/test_feedback.py",
    "tests/autograder/report/test_report.py",
    "tests/end_to_end/test_hostile.py",
    "tests/end_to_end/test_inert_pages.py",
)


SPREAD = (  # modules without module-scoped fixtures whose tests are long and independent: each test a group of its own
    "tests/benchmarks/test_benchmarks.py",  # each benchmark's quick run (about 5 minutes in all, one worker before)
)


def xdist_group(nodeid: str) -> str:
    """The worker group of a test, from its id: every module that reads the graded class in one, every module that
    starts a hub in another, each test of a SPREAD module alone, else the test's module (its module-scoped fixtures,
    such as the mutants' grading, built once). A group runs whole on one worker."""
    path = nodeid.split("::", 1)[0]
    if path in GRADED_CLASS:
        return "graded_class"
    if path.startswith(HUB_ACCOUNTS):
        return "hub"
    if path in SPREAD:
        return nodeid
    return path


def pytest_xdist_make_scheduler(config, log):
    """With --dist loadgroup, xdist's scope scheduler over this file's groups (xdist_group): a group, not a test,
    is what is handed to a worker."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling  # here: only the controller of an xdist run needs it

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

    return ByGroup(config, log)


def hub_accounts_leftovers() -> list:
    """The processes still running as an account the hub made (autograder.hub.launch.ACCOUNT_NOTE): what an earlier
    hub test left behind that its hub did not start (the instructor's class run, its Dask workers)."""
    import pwd  # here: only the hub's tests need it

    import psutil  # here: only the hub's tests need it (Dask's dependency, present wherever the suite runs)

    from autograder.hub.launch import ACCOUNT_NOTE  # here: only the hub's tests need it

    uids = {entry.pw_uid for entry in pwd.getpwall() if entry.pw_gecos == ACCOUNT_NOTE}
    found = []
    for process in psutil.process_iter(["uids"]):
        try:
            if process.info["uids"] and process.info["uids"].real in uids:
                found.append(process)
        except psutil.Error:
            continue
    return found


@pytest.fixture(autouse=True)
def no_hub_leftovers(request):
    """Before each test that makes the hub's accounts (open_state, or test_launch's), what an earlier hub test left
    running as those accounts gets up to 30 s to end: a hub moves its accounts' homes (usermod), which an account's
    running process refuses. The group's other tests (the bridge, the runtime, LTI's identity) make no account and
    do not wait. Nothing is killed here: a process of those accounts may be another test's hub, on another worker."""
    makes_accounts = "open_state" in request.fixturenames or request.node.nodeid.startswith(
        "tests/autograder/hub/test_launch.py"
    )
    if makes_accounts:
        deadline = time.monotonic() + 30
        while hub_accounts_leftovers() and time.monotonic() < deadline:
            time.sleep(0.5)
    yield


LONGEST_FIRST = (  # the groups that take longest, handed out first (--no-loadscope-reorder): none is left for last
    "tests/benchmarks/test_benchmarks.py",
    "hub",
    "graded_class",
    "tests/benchmarks/test_service_rounds.py",
    "tests/autograder/answers/test_grading.py",
    "tests/autograder/grading/test_dispatch.py",
    "tests/source/test_mutants.py",
)


def pytest_collection_modifyitems(config, items):
    """A module that reads the graded class but is not in GRADED_CLASS would grade it again on another worker: the
    run stops and says to add it. On xdist's workers the longest groups come first (a stable sort: each module keeps
    its order; the controller hands groups out in that order, --no-loadscope-reorder)."""
    unlisted = sorted(
        {
            item.nodeid.split("::", 1)[0]
            for item in items
            if {"graded_class", "graded_course_copy"} & set(getattr(item, "fixturenames", ()))
            and xdist_group(item.nodeid) != "graded_class"
        }
    )
    if unlisted:
        listed = ", ".join(unlisted)
        raise pytest.UsageError(f"tests/conftest.py: add {listed} to GRADED_CLASS (they read the graded class)")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        rank = {group: number for number, group in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(xdist_group(item.nodeid).split("::", 1)[0], len(rank)))


@pytest.fixture(scope="session", autouse=True)
def trusted_code_may_run_unsandboxed():
    """On a machine without bubblewrap the suite runs only trusted code unsandboxed (the course's examples and the
    tests' own answers, as an instructor's --unsandboxed would); every hostile case is skipped there. The tests of
    the refusal itself take the permission away (tests/autograder/test_sandbox.py)."""
    from autograder import sandbox

    with pytest.MonkeyPatch.context() as patch:
        if sandbox.bubblewrap() is None:
            patch.setenv(sandbox.UNSANDBOXED, "1")
        yield


@pytest.fixture(scope="session", autouse=True)
def private_forward_cache(tmp_path_factory):
    """The class's forward cache in this session's temporary folder, not the user's ~/.cache: the suite leaves
    nothing behind (autograder.grading.forward.forward_cache_home). On pytest-xdist's workers, one folder for all of
    them (beside their own temporary folders): the cache is built once for the run, its lock makes the others wait."""
    from autograder.grading.forward import FORWARD_CACHE_HOME

    previous = os.environ.get(FORWARD_CACHE_HOME)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "forward-cache"
        shared.mkdir(exist_ok=True)
        os.environ[FORWARD_CACHE_HOME] = str(shared)
    else:
        os.environ[FORWARD_CACHE_HOME] = str(tmp_path_factory.mktemp("forward-cache"))
    yield
    if previous is None:
        os.environ.pop(FORWARD_CACHE_HOME, None)
    else:
        os.environ[FORWARD_CACHE_HOME] = previous


def grade_folder(course: Path, submissions: Path, **options):
    """autograder.course.run.grade_course, the library under ``python -m autograder.course``, on a course and a
    submissions folder (``options``: CourseOptions' other fields); returns its CourseRun. Every upload must be
    graded: a student left out, or an upload not graded, fails the test with the reasons."""
    from autograder.course.run import CourseOptions, grade_course

    run = grade_course(CourseOptions(course=course, submissions=submissions, **options))
    problems = {**run.summary.failed, **run.uploads.students_not_graded, **run.uploads.not_graded}
    assert not problems, "not graded:\n" + "\n".join(f"  {who}: {why}" for who, why in problems.items())
    return run


CHROMIUM = Path("/usr/bin/chromium")  # Debian's, driven by Playwright (no downloaded browser builds)


def playwright_or_skip():
    """Playwright's sync API, or the test skipped with what to install (chromium, or the `browser` extra)."""
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM}: apt-get install chromium")
    return pytest.importorskip("playwright.sync_api", reason="Playwright is not installed: pip install -e '.[browser]'")


def files_under(folder: Path) -> dict:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()
    }


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory) -> GradedClass:
    """One class graded by autograder.course.run.grade_course: the bundled submissions and every hostile case
    (tests/hostile.py), together, on the machine's cores. The slowest fixture of the suite (a few minutes).

    Without bubblewrap the hostile cases are left out (they would run with the grader's rights) and the
    bundled submissions, the course's own examples, are graded unsandboxed (trusted_code_may_run_unsandboxed)."""
    if not (Path(sys.executable).parent / "nbgrader").exists():
        pytest.skip("nbgrader is not installed next to this Python")
    import hostile

    from autograder import sandbox
    from autograder.notebook.pipeline import ChainOptions

    sandboxed = sandbox.bubblewrap() is not None

    root = tmp_path_factory.mktemp("class")
    course, submissions = root / "course", root / "submissions"
    shutil.copytree(BUNDLED, submissions, ignore=shutil.ignore_patterns("positions"))  # attention's class only
    canary = root / "instructor" / "canary.txt"
    canary.parent.mkdir()
    canary.write_text(CANARY_TEXT)
    listener = Listener()
    cases = hostile.build(hostile.Context(course=course, canary=canary, port=listener.port)) if sandboxed else {}
    for student, case in cases.items():
        (submissions / student / "attention").mkdir(parents=True)
        (submissions / student / "attention" / "attention.ipynb").write_bytes(case.notebook)
        for name, target in case.links.items():
            (submissions / student / "attention" / name).symlink_to(target)
    before = files_under(submissions)
    started = time.monotonic()
    # 30 s a cell, not the course's 60: never_ends's loop is interrupted after 30 s of a worker's time, not 60; the
    # slowest cell of a correct notebook takes under 3 s (the report's slow_cells.csv), the memory bomb's about 11
    # and a budget of 90 s for the notebook, not the course's 45: the rest of never_ends runs after its loop
    run = grade_folder(course, submissions, chain=ChainOptions(cell_timeout=30, notebook_budget=90))
    seconds = time.monotonic() - started
    print(f"\nclass of {len(list(submissions.iterdir()))} graded in {seconds:.0f} s")
    return GradedClass(
        course,
        submissions,
        run,
        seconds,
        before,
        cases,
        canary,
        listener,
        sorted(folder.name for folder in submissions.iterdir()),
    )


@pytest.fixture
def graded_course_copy(graded_class, tmp_path) -> Path:
    """A copy of the graded class's course folder (not its lock, nor the class's shared forward cache), the
    configuration the project generates (autograder_config.py) rooted there: for a test that changes the course."""
    from autograder.course.config import write_course_files

    copy = tmp_path / "course"
    shutil.copytree(graded_class.course, copy, symlinks=True, ignore=shutil.ignore_patterns("forward", "lock"))
    write_course_files(copy)
    return copy


# --- instant checks (tests/autograder/service/test_instant.py, tests/autograder/service/test_app.py) ------------------


class InlinePool:
    """A pool (concurrent.futures' submit) that runs each check at once, in the test's process, and counts them."""

    def __init__(self, function=None):
        self.calls, self.function = [], function

    def submit(self, function, **keywords):
        self.calls.append(keywords)
        future = concurrent.futures.Future()
        try:
            future.set_result((self.function or function)(**keywords))
        except Exception as error:  # noqa: BLE001 - handed to the checker as that check's failure
            future.set_exception(error)
        return future


def submit_to_inbound(inbound: Path, student: str, when: datetime.datetime, notebook: bytes | Path = b"{}") -> str:
    """A Submit as nbgrader's submit lays it out in an exchange's inbound folder; returns its folder's name."""
    key = f"{student}+attention+{when:%Y-%m-%d %H:%M:%S.%f} UTC+{abs(hash((student, when))) % 10**6}"
    folder = inbound / key
    folder.mkdir(parents=True)
    if isinstance(notebook, Path):
        shutil.copy(notebook, folder / "attention.ipynb")
    else:
        (folder / "attention.ipynb").write_bytes(notebook)
    return key


@pytest.fixture
def inline_pool():
    """InlinePool, to make one with the check function a test wants."""
    return InlinePool


@pytest.fixture
def inbound_submit():
    """submit_to_inbound(inbound, student, when, notebook=b"{}")."""
    return submit_to_inbound


# --- the hub (tests/autograder/hub/test_launch.py, tests/autograder/lms/lti/test_tool.py) -----------------------------


def hub_module():
    from autograder.hub import launch as hub

    return hub


def accounts_or_skip():
    why = hub_module().why_no_accounts()
    if why is not None:
        pytest.skip(why)


@pytest.fixture
def open_state():
    """A state folder every account can reach (pytest's own temporary folders are closed to other accounts)."""
    accounts_or_skip()
    folder = Path(tempfile.mkdtemp(prefix="attention-hub-"))
    folder.chmod(0o711)
    why = hub_module().why_unreachable(folder)
    if why is not None:
        shutil.rmtree(folder)
        pytest.skip(why)
    yield folder / "state"
    shutil.rmtree(folder, ignore_errors=True)


# --- gradebooks (tests/gradebooks.py): nbgrader's alembic asked once, SQLite and PostgreSQL, a Dask cluster -------


@pytest.fixture(scope="session", autouse=True)
def alembic_version_once():
    """nbgrader asks the `alembic` program for its schema version each time it makes a new gradebook (about
    a second); the answer never changes within a session, so tests ask once."""
    from nbgrader import api

    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    version = api.get_alembic_version()
    original, api.get_alembic_version = api.get_alembic_version, lambda: version
    yield
    api.get_alembic_version = original


@pytest.fixture(scope="session")
def postgres_server():
    why = gradebooks.why_no_postgres()
    if why:
        pytest.skip(f"PostgreSQL tests skipped: {why}")
    server = gradebooks.Server().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request):
    """A function of a folder that gives a new, empty gradebook's URL: SQLite in that folder, or a new
    database on the session's throwaway PostgreSQL server."""
    if request.param == "sqlite":
        return lambda folder: f"sqlite:///{Path(folder) / 'course' / 'gradebook.db'}"
    server = request.getfixturevalue("postgres_server")
    return lambda folder: server.create_database()


@pytest.fixture(scope="module")
def cluster():
    """A Dask scheduler on 127.0.0.1, one worker thread in this process (it runs gradebooks.instant)."""
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=50,
    ) as running:
        yield running.scheduler_address


# --- Formgrader and HTTP (tests/autograder/course/test_formgrader.py, tests/end_to_end/test_inert_pages.py) -----------


def http_get(url: str) -> tuple[int, bytes]:
    """(status, body) of a GET, an HTTP error's included."""
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def start_formgrader(course: Path, *, port: int, token: str, args: tuple = (), env: dict | None = None):
    """`python -m autograder.course.formgrader` on ``course`` (its own session), returned once its API answers."""
    server = subprocess.Popen(
        [sys.executable, "-m", "autograder.course.formgrader", "--course", str(course), "--port", str(port)]
        + ["--token", token, "--no-browser", *args],
        cwd=REPOSITORY,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    started = time.monotonic()
    while True:
        assert server.poll() is None, server.stdout.read().decode()[-4000:]
        try:
            if http_get(f"http://127.0.0.1:{port}/formgrader/api/assignments?token={token}")[0] == 200:
                print(f"\nFormgrader answered after {time.monotonic() - started:.1f} s")
                return server
        except OSError:
            pass
        assert time.monotonic() - started < 90, "Formgrader did not answer within 90 s"
        time.sleep(0.5)


def stop_session(server: subprocess.Popen) -> None:
    """SIGTERM to the server's session, SIGKILL after 30 s."""
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    server.stdout.close()
