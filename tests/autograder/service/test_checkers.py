"""Every assignment of a course checked by one grading service (autograder.service.checkers): each Submit judged by
its own assignment's checks, the queue and the window per student per assignment, a student's pages and api/latest
grouped by assignment and never another student's, an assignment whose own checks fail holding its Submits (its
students told why, the instructor what to fix) while the others are checked, and the hub starting one service for
every assignment of its course."""

import asyncio
import concurrent.futures
import contextlib
import datetime
import json
import os
import shutil
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("jupyterhub", reason="the grading service is a JupyterHub service: pip install -e '.[hub]'")

from conftest import InlinePool

from autograder import assignments, sandbox
from autograder.attempts import Attempts
from autograder.service import app as service
from autograder.service import checkers as checkers_module
from autograder.service import command as service_command
from autograder.service import instant
from autograder.service.checkers import MEMORY_FILE, Checkers, ProbeMemory, authoring_trouble, probe_digest
from autograder.service.instant import Checker, InstantChecks
from autograder.verdicts import Property, Verdict

REPOSITORY = Path(__file__).resolve().parents[3]
SOURCE = REPOSITORY / "source"
SOLVED = {
    "attention": REPOSITORY / "examples" / "submissions" / "full_solution" / "attention" / "attention.ipynb",
    "positions": SOURCE / "positions" / "positions.ipynb",  # the source notebook: the solution
}
T0 = datetime.datetime(2026, 12, 1, 10, 0, 0)
USERS = {name: {"name": name, "admin": False} for name in ("ada", "bo", "cy")} | {"prof": {"name": "prof"}}


def submit(inbound: Path, student: str, assignment: str, when: datetime.datetime, notebook: bytes | Path = b"{}"):
    """A Submit of ``assignment`` as nbgrader's submit lays it out in the inbound; its folder's name."""
    key = f"{student}+{assignment}+{when:%Y-%m-%d %H:%M:%S.%f} UTC+{abs(hash((student, assignment, when))) % 10**6}"
    folder = inbound / key
    folder.mkdir(parents=True)
    target = folder / f"{assignment}.ipynb"
    if isinstance(notebook, Path):
        shutil.copy(notebook, target)
    else:
        target.write_bytes(notebook)
    return key


def course(tmp_path: Path, names=("attention", "positions")) -> Path:
    """A course folder whose source/ holds ``names`` (copies of the repository's) and their releases."""
    for name in names:
        shutil.copytree(SOURCE / name, tmp_path / "course" / "source" / name, ignore=shutil.ignore_patterns("__py*"))
        shutil.copytree(REPOSITORY / "release" / name, tmp_path / "course" / "release" / name)
    return tmp_path / "course"


def checkers_of(
    folder: Path, inbound: Path, policy=None, slots=2, probe=None, students=("ada", "bo", "cy"), memory=None
) -> Checkers:
    """A checker per assignment of ``folder``'s source/, on one database, as service.make_checkers makes them (with
    ``memory``: passing probes remembered there, by probe_digest)."""
    store = Attempts(f"sqlite:///{folder / 'gradebook.db'}")
    made = {
        name: Checker(
            source=folder / "source" / name,
            inbound=inbound,
            store=store.scoped(name),
            policy=policy or InstantChecks(),
            students=lambda: set(students),
            slots=slots,
            probe=probe,
            memory=memory,
            digest=probe_digest if memory is not None else None,
        )
        for name in assignments.names(folder / "source")
    }
    return Checkers(made, slots=slots)


def fake_check(*, source, notebook_path, **_):
    """Each assignment's own verdicts, named after it: which checks judged the Submit is in the verdicts."""
    name = Path(source).name
    verdict = Verdict(f"check_{name}", name, 1.0, 2.0, (Property(f"{name} property", False, f"{name} failed"),))
    return 1.0, 2.0, [verdict]


class Routed(InlinePool):
    """A pool that runs each check at once with fake_check, and the assignment's probe (authoring_trouble) for real."""

    def __init__(self):
        super().__init__()
        self.checked: list[tuple[str, str]] = []  # (assignment, notebook's name) per check run

    def submit(self, function, **keywords):
        if function is instant.check_notebook:
            self.checked.append((Path(keywords["source"]).name, Path(keywords["notebook_path"]).name))
            return super().submit(fake_check, **keywords)
        if function is instant.warm_up:
            return super().submit(lambda **_: 0.0, **keywords)
        return super().submit(function, **keywords)


def statuses(store: Attempts, student: str) -> list[tuple[str, str]]:
    return [(attempt.assignment, attempt.status) for attempt in store.select(student=student)]


def sandboxed_or_skip():
    if sandbox.bubblewrap() is None and not sandbox.unsandboxed_allowed():
        pytest.skip("the checks run only in the sandbox (bubblewrap)")


@contextlib.contextmanager
def serving(app):
    """The service's pages on a free port of 127.0.0.1 (the hub's OAuth replaced by an X-User header); its URL."""
    loop, ready, holder = asyncio.new_event_loop(), threading.Event(), {}

    def serve():
        asyncio.set_event_loop(loop)
        holder["server"] = app.listen(0, address="127.0.0.1")
        holder["port"] = next(iter(holder["server"]._sockets.values())).getsockname()[1]
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield f"http://127.0.0.1:{holder['port']}/services/grading/"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def get(url: str, user: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"X-User": user}), timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def latest(url: str, user: str, assignment: str = "") -> tuple[int, dict | str]:
    status, body = get(url + "api/latest" + (f"?assignment={assignment}" if assignment else ""), user)
    return status, json.loads(body) if status == 200 else body


# --- routing and the queue, per assignment ------------------------------------------------------------------------


def test_each_submit_is_checked_by_its_own_assignments_checks(tmp_path):
    """Real checks, real probes: ada's solved attention and positions each earn their own assignment's full points,
    judged by that assignment's checks only; bo's blank positions earns 0 of positions' 5."""
    sandboxed_or_skip()
    folder, inbound = course(tmp_path), tmp_path / "exchange" / "inbound"
    checkers = checkers_of(folder, inbound, slots=2, probe=authoring_trouble)
    pool = InlinePool()
    checkers.warm(pool)  # each assignment's checks tried first: both pass
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)  # a check reads a notebook as it was received
    submit(inbound, "ada", "attention", now, SOLVED["attention"])
    submit(inbound, "ada", "positions", now, SOLVED["positions"])
    submit(inbound, "bo", "positions", now, REPOSITORY / "release" / "positions" / "positions.ipynb")
    for _ in range(3):  # two slots: two checks, then the third, then recorded
        checkers.step(pool)
    assert [checker.broken for checker in checkers] == [None, None]
    ids = {name: set(assignments.load(SOURCE / name).checks) for name in ("attention", "positions")}
    done = {(a.student, a.assignment): a for a in checkers["attention"].store.select()}
    done |= {(a.student, a.assignment): a for a in checkers["positions"].store.select()}
    assert {key: (a.status, a.points, a.max_points) for key, a in done.items()} == {
        ("ada", "attention"): ("done", 29.0, 29.0),
        ("ada", "positions"): ("done", 5.0, 5.0),
        ("bo", "positions"): ("done", 0.0, 5.0),
    }
    for (student, name), attempt in done.items():
        assert {verdict.check for verdict in attempt.verdicts} == ids[name], (student, name)


def test_submits_are_routed_by_the_assignment_their_name_states(tmp_path):
    folder, inbound = course(tmp_path), tmp_path / "exchange" / "inbound"
    checkers, pool = checkers_of(folder, inbound, slots=4), Routed()
    submit(inbound, "ada", "attention", T0)
    submit(inbound, "bo", "positions", T0)
    submit(inbound, "cy", "homework9", T0)  # an assignment nobody checks here: left for Collect, not refused
    checkers.step(pool, now=T0)
    assert sorted(pool.checked) == [("attention", "attention.ipynb"), ("positions", "positions.ipynb")]
    store = checkers["attention"].store
    assert [(a.student, a.assignment) for a in store.select()] == [("ada", "attention")]
    assert [(a.student, a.assignment) for a in checkers["positions"].store.select()] == [("bo", "positions")]
    checkers.step(pool, now=T0)
    assert {a.verdicts[0].check for a in store.select()} == {"check_attention"}
    assert checkers.refused_entries() == (0, [])


def test_the_newest_submit_is_checked_and_the_window_counts_per_student_per_assignment(tmp_path):
    """ada's two waiting attention Submits: the older one superseded, never her positions Submit; one check per hour
    for each assignment, so checking her attention uses none of positions' window."""
    folder, inbound = course(tmp_path), tmp_path / "exchange" / "inbound"
    checkers = checkers_of(folder, inbound, policy=InstantChecks(attempts=1, period=3600), slots=1)
    submit(inbound, "bo", "attention", T0)
    submit(inbound, "ada", "attention", T0 + datetime.timedelta(seconds=1))
    submit(inbound, "ada", "positions", T0 + datetime.timedelta(seconds=2))
    submit(inbound, "ada", "attention", T0 + datetime.timedelta(seconds=3))
    pool = Routed()
    for _ in range(6):  # one slot, shared: every round starts at most one check, of either assignment
        checkers.step(pool, now=T0 + datetime.timedelta(minutes=1))
    store = checkers["attention"].store
    assert statuses(store, "ada") == [("attention", "superseded"), ("attention", "done")]
    assert statuses(checkers["positions"].store, "ada") == [("positions", "done")]
    assert statuses(store, "bo") == [("attention", "done")]
    assert len(pool.checked) == 3
    superseded, checked = store.select(student="ada")
    assert "10:00:01" in superseded.key and "10:00:03" in checked.key  # her newer attention, never her positions
    assert superseded.message.startswith("your later Submit (received")
    # a new Submit of each within the hour: each waits for its own assignment's window
    submit(inbound, "ada", "positions", T0 + datetime.timedelta(minutes=2))
    checkers.step(pool, now=T0 + datetime.timedelta(minutes=3))
    assert checkers["positions"].store.select(student="ada")[-1].status == "queued"
    assert len(pool.checked) == 3


def test_the_pool_s_slots_are_shared_by_the_assignments(tmp_path):
    folder, inbound = course(tmp_path), tmp_path / "exchange" / "inbound"
    checkers = checkers_of(folder, inbound, policy=InstantChecks(attempts=9), slots=2)

    class Held(Routed):  # checks that never finish: the slots stay taken
        def submit(self, function, **keywords):
            if function is instant.check_notebook:
                self.checked.append((Path(keywords["source"]).name, keywords["notebook_path"].parent.name))
                return concurrent.futures.Future()
            return super().submit(function, **keywords)

    for number, student in enumerate(("ada", "bo", "cy")):
        submit(inbound, student, "attention", T0 + datetime.timedelta(seconds=number))
        submit(inbound, student, "positions", T0 + datetime.timedelta(seconds=number))
    pool = Held()
    checkers.step(pool, now=T0)
    assert checkers.busy() == 2 and len(pool.checked) == 2  # two slots for the two assignments together
    checkers.step(pool, now=T0)
    assert len(pool.checked) == 2  # none free: nothing more started, of either assignment


def test_a_rush_on_one_assignment_keeps_no_other_waiting_behind_all_of_it(tmp_path):
    """One slot; three attention Submits wait, then one of positions: the slot a finished check frees goes to the
    assignment whose turn it is, so positions' Submit is the second one checked, not the fourth."""
    folder, inbound = course(tmp_path), tmp_path / "exchange" / "inbound"
    checkers = checkers_of(folder, inbound, policy=InstantChecks(attempts=9), slots=1)

    class Told(Routed):  # checks that finish when the test says
        def submit(self, function, **keywords):
            if function is instant.check_notebook:
                self.checked.append((Path(keywords["source"]).name, keywords["notebook_path"].parent.name[:2]))
                self.future = concurrent.futures.Future()
                return self.future
            return super().submit(function, **keywords)

    for number, student in enumerate(("ada", "bo", "cy")):
        submit(inbound, student, "attention", T0 + datetime.timedelta(seconds=number))
    submit(inbound, "ada", "positions", T0 + datetime.timedelta(seconds=5))
    pool = Told()
    checkers.step(pool, now=T0)
    for _ in range(2):
        pool.future.set_result(fake_check(source=folder / "source" / pool.checked[-1][0], notebook_path=""))
        checkers.step(pool, now=T0)
    assert pool.checked == [("attention", "ad"), ("positions", "ad"), ("attention", "bo")]


# --- the pages and api/latest ------------------------------------------------------------------------------------


@pytest.fixture
def two_assignments(tmp_path, monkeypatch):
    """A service over attention and positions: ada submitted positions (checked), then attention (checked); bo
    attention only; cy nothing."""
    monkeypatch.setattr(service.Page, "get_current_user", lambda self: USERS.get(self.request.headers.get("X-User")))
    folder, inbound = course(tmp_path), tmp_path / "exchange" / "inbound"
    checkers = checkers_of(folder, inbound, slots=4)
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    submit(inbound, "ada", "positions", now - datetime.timedelta(minutes=3))
    submit(inbound, "bo", "attention", now - datetime.timedelta(minutes=3))
    pool = Routed()
    checkers.step(pool, now=now)
    submit(inbound, "ada", "attention", now - datetime.timedelta(minutes=1))
    checkers.step(pool, now=now)
    checkers.step(pool, now=now)
    options = service.ServiceOptions(course=folder, exchange=inbound.parent, instructors=("prof",))
    with serving(service.make_app(options, checkers)) as url:
        yield url, checkers


def test_a_students_page_lists_each_assignments_attempts_under_its_name(two_assignments):
    url, _ = two_assignments
    status, page = get(url, "ada")
    assert status == 200 and "<h1>attention, positions: checks of your Submits</h1>" in page
    attention, positions = page.index('id="assignment-attention"'), page.index('id="assignment-positions"')
    assert attention < positions  # her newest Submit's assignment first: it keeps the page's ids
    assert 'id="verdicts"' in page[attention:positions] and 'id="verdicts-positions"' in page[positions:]
    assert "attention failed" in page[attention:positions] and "positions failed" not in page[attention:positions]
    assert "positions failed" in page[positions:] and "attention failed" not in page[positions:]
    assert page.count("Your latest checked Submit: 1 / 2 points") == 2  # the words the hub's round trip waits for


def test_a_student_never_sees_another_students_or_another_assignments_attempts(two_assignments):
    url, _ = two_assignments
    status, page = get(url, "bo")
    assert status == 200 and "attention failed" in page
    assert "positions failed" not in page and "No Submit yet of positions" in page  # ada's positions is not bo's
    assert get(url + "students/ada", "bo")[0] == 403
    status, page = get(url, "cy")
    assert "attention failed" not in page and "positions failed" not in page and page.count("No Submit yet of") == 2


def test_api_latest_answers_the_newest_submit_of_any_assignment_or_of_the_one_asked(two_assignments):
    url, _ = two_assignments
    status, answer = latest(url, "ada")
    assert status == 200 and answer["assignment"] == "attention" and answer["newest"]["status"] == "done"
    assert set(answer) == {"student", "assignment", "shown", "newest"}  # the shape labextension/ reads
    assert answer["newest"]["lost"] == [{"function": "attention", "points": "1 of 2", "failed": ["attention failed"]}]
    status, answer = latest(url, "ada", "positions")
    assert answer["assignment"] == "positions" and answer["newest"]["lost"][0]["function"] == "positions"
    assert latest(url, "bo", "positions")[1] == {
        "student": "bo",
        "assignment": "positions",
        "shown": "verdicts",
        "newest": None,
    }
    status, body = latest(url, "bo", "homework9")
    assert status == 404 and "no assignment &#39;homework9&#39; is checked here: attention, positions" in body.lower()


def test_the_instructor_sees_each_assignment_s_queue_and_class(two_assignments):
    url, checkers = two_assignments
    status, page = get(url, "prof")
    assert status == 200 and "<h1>attention, positions: instant checks</h1>" in page
    attention, positions = page.index('id="assignment-attention"'), page.index('id="assignment-positions"')
    assert ">ada<" in page[attention:positions] and ">bo<" in page[attention:positions]
    assert ">bo<" not in page[positions : page.index("Not checked: entries")]
    assert page.count("Queue (0)") == 2


# --- an assignment whose own checks fail ---------------------------------------------------------------------------


def break_checks(folder: Path) -> str:
    """checks.py raising at its top level, as a typo would; returns what it was."""
    checks = folder / "checks.py"
    kept = checks.read_text()
    checks.write_text(kept + "\nCHECKS = undefined_name  # a typo\n")
    return kept


def test_an_assignment_whose_checks_fail_holds_its_submits_and_stops_no_other(tmp_path, monkeypatch):
    monkeypatch.setattr(service.Page, "get_current_user", lambda self: USERS.get(self.request.headers.get("X-User")))
    folder, inbound = course(tmp_path), tmp_path / "exchange" / "inbound"
    kept = break_checks(folder / "source" / "positions")

    def probe(source):  # attention's own checks are known to pass (the real probe: the test above)
        return None if source.name == "attention" else authoring_trouble(source)

    checkers = checkers_of(folder, inbound, slots=2, probe=probe)
    pool = Routed()
    checkers.warm(pool)
    submit(inbound, "ada", "positions", T0)
    submit(inbound, "bo", "attention", T0)
    for _ in range(2):
        checkers.step(pool, now=T0)
    broken = checkers["positions"].broken
    assert checkers["attention"].broken is None and broken is not None
    assert broken.student.startswith("the instructor's checks for positions fail: checks.py cannot be imported")
    assert "undefined_name" not in broken.student and "checks.py:" not in broken.student  # nothing of the checks
    assert "[checks-cannot-load]" in broken.instructor and "undefined_name" in broken.instructor
    assert statuses(checkers["attention"].store, "bo") == [("attention", "done")]  # checked all the same
    assert statuses(checkers["positions"].store, "ada") == [("positions", "queued")]  # held, not lost
    assert pool.checked == [("attention", "attention.ipynb")]

    options = service.ServiceOptions(course=folder, exchange=inbound.parent, instructors=("prof",))
    with serving(service.make_app(options, checkers)) as url:
        status, answer = latest(url, "ada")
        words = answer["newest"]["words"]
        assert answer["assignment"] == "positions" and answer["newest"]["status"] == "queued"
        assert words.startswith("cannot be checked now: the instructor's checks for positions fail: checks.py")
        assert words.endswith("it is checked once the instructor has fixed them")
        status, page = get(url, "ada")
        assert "cannot be checked now: the instructor&#39;s checks for positions fail" in page
        assert "undefined_name" not in page
        status, page = get(url, "prof")
        assert "The checks of positions cannot run" in page and "[checks-cannot-load]" in page
        assert "undefined_name" in page and "python -m autograder.validate" in page  # what to fix, and how to check
        assert 'id="broken-attention"' not in page

    sandboxed_or_skip()  # the fixed checks are tried on the solution, in the sandbox
    (folder / "source" / "positions" / "checks.py").write_text(kept)  # the instructor fixes it
    for _ in range(3):
        checkers.step(pool, now=T0 + datetime.timedelta(minutes=1))
    assert checkers["positions"].broken is None
    assert statuses(checkers["positions"].store, "ada") == [("positions", "done")]  # the held Submit, checked now
    assert pool.checked[-1] == ("positions", "positions.ipynb")


def test_a_check_before_grading_mistake_is_said_in_the_kinds_words(tmp_path):
    """A points mismatch between the notebook and checks.py (a validate-level mistake, not an import error)."""
    sandboxed_or_skip()
    folder = course(tmp_path, names=("positions",)) / "source" / "positions"
    notebook = json.loads((folder / "positions.ipynb").read_text())
    cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "check_rotate")
    cell["metadata"]["nbgrader"]["points"] = 7
    (folder / "positions.ipynb").write_text(json.dumps(notebook))
    broken = authoring_trouble(folder)
    assert broken is not None and broken.lasting
    assert "points differ between the notebook's nbgrader metadata and checks.py" in broken.student
    assert "[points-differ]" in broken.instructor and "check_rotate" in broken.instructor


def test_a_probe_that_itself_fails_is_tried_again_later(tmp_path, monkeypatch):
    folder, inbound = course(tmp_path, names=("positions",)), tmp_path / "exchange" / "inbound"

    def unavailable(source):
        raise OSError("no sandbox here")

    checkers = checkers_of(folder, inbound, probe=unavailable)
    checker = checkers["positions"]
    checkers.warm(Routed())
    checkers.step(Routed(), now=T0)
    assert checker.broken is not None and not checker.broken.lasting
    assert "could not be tried (OSError)" in checker.broken.student and "no sandbox here" in checker.broken.instructor
    checker.probe = lambda source: None  # the cause went away
    checkers.step(Routed(), now=T0)
    assert checker.broken is not None  # not before RETRY seconds
    monkeypatch.setattr(checker, "probed_at", checker.probed_at - instant.RETRY - 1)
    checkers.step(Routed(), now=T0)
    assert checker.broken is None


# --- a passing probe remembered across restarts --------------------------------------------------------------------


class Held(Routed):
    """Routed, but each probe's answer is held until ``answer()``: what the pool was given, in order, in ``order``."""

    def __init__(self):
        super().__init__()
        self.order: list[str] = []
        self.probes: list[tuple[concurrent.futures.Future, Path]] = []

    def submit(self, function, **keywords):
        name = getattr(function, "__name__", "probe")
        self.order.append(name if function in (instant.check_notebook, instant.warm_up) else "probe")
        if self.order[-1] != "probe":
            return super().submit(function, **keywords)
        future = concurrent.futures.Future()
        self.probes.append((future, Path(keywords["source"])))
        return future

    def answer(self, probe) -> None:
        for future, source in self.probes:
            if not future.done():
                future.set_result(probe(source))


def started_service(folder: Path, inbound: Path, pool) -> Checkers:
    """The service's start (make_checkers, then Checkers.warm) on positions, its probes remembered in the course."""
    checkers = checkers_of(folder, inbound, probe=lambda source: None, memory=ProbeMemory(folder))
    checkers.warm(pool)
    return checkers


def test_a_passing_probe_is_remembered_and_a_restart_with_the_same_files_does_not_run_it(tmp_path):
    folder, inbound = course(tmp_path, names=("positions",)), tmp_path / "exchange" / "inbound"
    memory = folder / MEMORY_FILE
    pool = Held()
    checkers = started_service(folder, inbound, pool)
    assert pool.order == ["probe", "warm_up", "warm_up"] and not memory.exists()  # not remembered before it passes
    pool.answer(lambda source: None)
    checkers.step(pool, now=T0)
    digest = probe_digest(folder / "source" / "positions")
    assert json.loads(memory.read_text()) == {"positions": digest}
    assert memory.stat().st_mode & 0o777 == 0o600

    submit(inbound, "ada", "positions", T0)  # waiting when the service starts again
    pool = Held()
    checkers = started_service(folder, inbound, pool)
    assert checkers["positions"].probes_run == 0 and checkers["positions"].probing is None
    assert pool.order == ["check_notebook", "warm_up", "warm_up"]  # the waiting Submit before the warm-ups
    checkers.step(pool, now=T0)  # the service's thread's first round records it
    assert statuses(checkers["positions"].store, "ada") == [("positions", "done")]

    checks = folder / "source" / "positions" / "checks.py"
    checks.write_text(checks.read_text() + "\n# a comment: the file is not the one that passed\n")
    assert probe_digest(folder / "source" / "positions") != digest
    submit(inbound, "bo", "positions", T0)
    pool = Held()
    checkers = started_service(folder, inbound, pool)
    assert checkers["positions"].probes_run == 1 and pool.order == ["probe", "warm_up", "warm_up"]
    assert statuses(checkers["positions"].store, "bo") == [("positions", "pending")]  # waits for the probe
    pool.answer(lambda source: None)
    for _ in range(2):  # the probe's answer taken and the Submit started, then its verdict recorded
        checkers.step(pool, now=T0)
    assert statuses(checkers["positions"].store, "bo") == [("positions", "done")]
    assert json.loads(memory.read_text()) == {"positions": probe_digest(folder / "source" / "positions")}


def test_a_change_while_the_service_runs_is_probed_and_a_failing_probe_is_never_remembered(tmp_path):
    folder, inbound = course(tmp_path, names=("positions",)), tmp_path / "exchange" / "inbound"
    pool = Held()
    checkers = started_service(folder, inbound, pool)
    pool.answer(lambda source: None)
    checkers.step(pool, now=T0)
    passed = json.loads((folder / MEMORY_FILE).read_text())
    kept = break_checks(folder / "source" / "positions")
    checkers.step(pool, now=T0)
    assert pool.order.count("probe") == 2  # the changed files tried again, not taken from the memory
    pool.answer(lambda source: instant.Broken("broken", "checks.py fails"))
    submit(inbound, "ada", "positions", T0)
    checkers.step(pool, now=T0)
    assert checkers["positions"].broken is not None
    assert json.loads((folder / MEMORY_FILE).read_text()) == passed  # the failing digest is not remembered
    assert statuses(checkers["positions"].store, "ada") == [("positions", "queued")]  # waits: nobody is charged

    pool = Held()  # a restart while they fail: tried again, the Submit still waits
    checkers = started_service(folder, inbound, pool)
    assert pool.order[0] == "probe" and statuses(checkers["positions"].store, "ada") == [("positions", "queued")]

    (folder / "source" / "positions" / "checks.py").write_text(kept)  # back to the files that passed
    pool = Held()
    checkers = started_service(folder, inbound, pool)
    assert checkers["positions"].probes_run == 0 and checkers["positions"].broken is None
    checkers.step(pool, now=T0)
    assert statuses(checkers["positions"].store, "ada") == [("positions", "done")]


def test_the_memory_is_trusted_only_for_its_digest_and_only_as_the_service_wrote_it(tmp_path):
    folder, inbound = course(tmp_path, names=("positions",)), tmp_path / "exchange" / "inbound"
    memory, digest = folder / MEMORY_FILE, probe_digest(folder / "source" / "positions")

    def probes_run() -> int:
        return started_service(folder, inbound, Held())["positions"].probes_run

    memory.write_text(json.dumps({"positions": "0" * 64}))  # stale: another digest
    memory.chmod(0o600)
    assert probes_run() == 1
    memory.write_text(json.dumps({"positions": digest}))
    memory.chmod(0o600)
    assert probes_run() == 0  # the control: exactly this file, as the service writes it, is trusted
    memory.chmod(0o666)  # another account may have written it
    assert probes_run() == 1
    memory.chmod(0o600)
    elsewhere = tmp_path / "elsewhere.json"
    memory.rename(elsewhere)
    memory.symlink_to(elsewhere)  # a link to a file of anyone's
    assert probes_run() == 1
    memory.unlink()
    for junk in (b"not json", b"[]", json.dumps({"positions": 7}).encode()):
        memory.write_bytes(junk)
        assert probes_run() == 1
    if os.geteuid() == 0:  # only root may give a file away: another account's file is not trusted
        memory.write_text(json.dumps({"positions": digest}))
        os.chown(memory, 4242, -1)
        assert probes_run() == 1
    digests = {probe_digest(folder / "source" / "positions")}
    (folder / "source" / "positions" / "data.txt").write_text("a file the checks may read")
    digests.add(probe_digest(folder / "source" / "positions"))
    assert len(digests) == 2  # every file of the assignment's folder counts, not only checks.py


def test_a_first_round_that_fails_at_start_still_warms_the_workers(tmp_path, monkeypatch, caplog):
    folder, inbound = course(tmp_path, names=("positions",)), tmp_path / "exchange" / "inbound"
    checkers = checkers_of(folder, inbound, probe=lambda source: None, memory=ProbeMemory(folder))

    def broken_round(pool, now=None):
        raise OSError("the database is locked")

    monkeypatch.setattr(checkers["positions"], "step", broken_round)
    pool = Held()
    assert len(checkers.warm(pool)) == 2 and pool.order == ["probe", "warm_up", "warm_up"]
    assert "the first round of instant checks failed" in caplog.text and checkers["positions"].trouble


def test_the_digest_changes_with_the_engine_lib_and_the_model_data(tmp_path, monkeypatch):
    """Each part a probe depends on, outside the assignment's folder, stood in by a folder of the test's own."""
    source = course(tmp_path, names=("positions",)) / "source" / "positions"
    parts = {name: tmp_path / name for name in ("engine", "lib", "model")}
    for folder in parts.values():
        folder.mkdir()
        (folder / "code.py").write_text("x = 1\n")
    monkeypatch.setattr(checkers_module, "ENGINE", parts["engine"])
    monkeypatch.setattr(checkers_module, "lib_folders", lambda: [parts["lib"]])
    monkeypatch.setattr(checkers_module, "MODEL_DIR", parts["model"])
    seen = [probe_digest(source)]
    assert probe_digest(source) == seen[0]  # the same files, the same digest
    for folder in parts.values():
        (folder / "code.py").write_text("x = 2\n")
        seen.append(probe_digest(source))
    (parts["engine"] / "__pycache__").mkdir()
    (parts["engine"] / "__pycache__" / "code.cpython.pyc").write_bytes(b"compiled")
    seen.append(probe_digest(source))
    assert len(set(seen)) == 4 and seen[-1] == seen[-2]  # each part counts; compiled bytecode does not


# --- the command line and the hub ---------------------------------------------------------------------------------


def test_the_service_checks_every_assignment_unless_told_which(tmp_path):
    source = course(tmp_path) / "source"
    assert service.checked_names(source) == ["attention", "positions"]
    assert service.checked_names(source, ("positions",)) == ["positions"]
    with pytest.raises(assignments.NoAssignment, match=r"no assignment 'homework9' in .*; there: attention, positions"):
        service.checked_names(source, ("homework9",))
    with pytest.raises(assignments.NoAssignment, match="holds no assignment"):
        service.checked_names(tmp_path / "nothing")


@pytest.mark.parametrize(
    "given, chosen",
    [([], ()), (["--assignment", "positions"], ("positions",)), (["--assignment", "attention,positions"], None)],
)
def test_assignment_is_an_optional_filter_repeatable_or_a_list(tmp_path, monkeypatch, given, chosen):
    seen = {}
    monkeypatch.setattr(service, "serve", lambda options: seen.setdefault("options", options))
    argv = ["--course", str(tmp_path), "--exchange", str(tmp_path), *given]
    assert service_command.main(argv) == 0
    assert seen["options"].assignments == (chosen if chosen is not None else ("attention", "positions"))
    seen.clear()
    service_command.main([*argv, "--assignment", "extra"])
    assert seen["options"].assignments[-1] == "extra"


def test_the_hub_starts_one_service_that_checks_every_assignment(tmp_path, monkeypatch):
    """hub/jupyterhub_config.py on a course holding attention and positions: the grading service is started without
    --assignment, and the options its command gives make a checker for each assignment."""
    from traitlets.config import PyFileConfigLoader

    folder = tmp_path / "home" / "instructor" / "attention"
    for name in ("attention", "positions"):
        shutil.copytree(SOURCE / name, folder / "source" / name, ignore=shutil.ignore_patterns("__py*"))
    (tmp_path / "exchange" / "attention" / "inbound").mkdir(parents=True)
    monkeypatch.setenv("ATTENTION_HUB_STATE", str(tmp_path))
    monkeypatch.setenv("ATTENTION_HUB_PORTS", "8081,8082,8083")
    monkeypatch.setenv("ATTENTION_HUB_PROXY", "/bin/true")
    monkeypatch.setenv("ATTENTION_HUB_STUDENTS", "student1,student2")
    config = PyFileConfigLoader("jupyterhub_config.py", path=str(REPOSITORY / "hub")).load_config()
    (grading,) = config.JupyterHub.services
    command = grading["command"]
    assert command[:3] == [sys.executable, "-m", "autograder.service"] and "--assignment" not in command
    seen = {}
    monkeypatch.setattr(service, "serve", lambda options: seen.setdefault("options", options))
    assert service_command.main(command[3:]) == 0
    checkers = service.make_checkers(seen["options"])
    assert checkers.names == ["attention", "positions"]
    assert {checker.inbound for checker in checkers} == {tmp_path / "exchange" / "attention" / "inbound"}
    assert [checker.probe for checker in checkers] == [authoring_trouble, authoring_trouble]
    assert {checker.memory.path for checker in checkers} == {folder / MEMORY_FILE}  # the instructor's course folder
    assert {checker.digest for checker in checkers} == {probe_digest}
    assert [checker.store.assignment for checker in checkers] == ["attention", "positions"]


def test_an_assignment_added_while_the_service_runs_is_checked_without_a_restart(tmp_path, monkeypatch):
    """The instructor copies positions into the course while the service (make_checkers' wiring) runs: at the next
    look it has a checker, its probe runs before any of its Submits, and a Submit made before it was added is
    checked by positions' own checks; a folder without its checks.py yet is no assignment, and one whose checker
    cannot be made yet is looked at again, neither stopping a round. The pages read the new set of checkers."""
    monkeypatch.setattr(checkers_module, "DISCOVER_EVERY", 0.0)
    monkeypatch.setattr(service.Page, "get_current_user", lambda self: USERS.get(self.request.headers.get("X-User")))
    folder = course(tmp_path, names=("attention",))
    inbound = tmp_path / "exchange" / "inbound"
    inbound.mkdir(parents=True)
    options = service.ServiceOptions(
        course=folder,
        exchange=inbound.parent,
        instructors=("prof",),
        students=("ada", "bo"),
        own_submissions_only=False,
    )
    checkers = service.make_checkers(options)
    for checker in checkers:
        checker.probe = lambda source: None  # attention's checks pass (its real probe: the tests above)
    pool = Routed()
    checkers.warm(pool)
    submit(inbound, "ada", "positions", T0, SOLVED["positions"])  # of an assignment the service does not check yet
    checkers.step(pool, now=T0)
    assert checkers.names == ["attention"] and pool.checked == []

    target = folder / "source" / "positions"
    target.mkdir()
    shutil.copy(SOURCE / "positions" / "positions.ipynb", target)  # being copied: no checks.py yet
    checkers.step(pool, now=T0)
    assert checkers.names == ["attention"]

    def cannot_be_made(self, **_):
        raise OSError("the notebook is being written")

    with monkeypatch.context() as patch:
        patch.setattr(instant.Checker, "__init__", cannot_be_made)
        shutil.copytree(SOURCE / "positions", target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__py*"))
        checkers.step(pool, now=T0)  # its checker cannot be made: said in the log, the round goes on
        assert checkers.names == ["attention"]

    checkers.step(pool, now=T0)  # found: its real probe started (Routed runs it at once), the Submit recorded
    assert checkers.names == ["attention", "positions"]
    new = checkers["positions"]
    assert new.probes_run == 1 and new.probe is authoring_trouble
    for _ in range(3):
        checkers.step(pool, now=T0)
    assert statuses(new.store, "ada") == [("positions", "done")]
    assert pool.checked == [("positions", "positions.ipynb")]
    assert new.store.assignment == "positions" and new.memory.path == folder / MEMORY_FILE
    with serving(service.make_app(options, checkers)) as url:
        status, page = get(url, "prof")
        assert status == 200 and "positions" in page
        status, answer = latest(url, "ada")
        assert answer["assignment"] == "positions" and answer["newest"]["status"] == "done"
