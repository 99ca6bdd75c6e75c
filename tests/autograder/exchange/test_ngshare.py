"""The course's exchange as a real ngshare (the PyPI package, tests/ngshare_service.py, on 127.0.0.1, its users proved
by tokens as a hub proves them): release, fetch and submit through ngshare's HTTP API as the instructor and the
students do (nbgrader's ngshare plugin does not install beside nbgrader 0.9), the instant check's verdict, and
nbgrader's collect bringing the Submit in through autograder.hub.collect; then what a hostile student tries."""

from __future__ import annotations

import base64
import concurrent.futures
import datetime
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from autograder import REPOSITORY, sandbox
from autograder.attempts import Attempts, utcnow
from autograder.exchange import snapshot
from autograder.exchange.adapter import open_exchange
from autograder.exchange.ngshare import NgShare, judged
from autograder.policy import InstantChecks
from autograder.service.instant import Checker
from autograder.settings import ExchangeService

NGSHARE_PYTHON = REPOSITORY / ".exchange" / "venv" / "bin" / "python"
TOKENS = {"admin-token": "admin", "teacher-token": "teacher", "s1-token": "student1", "s2-token": "student2"}
COURSE = "course101"
SOURCE = REPOSITORY / "source" / "positions"
SOLVED = REPOSITORY / "examples" / "submissions" / "full_solution" / "positions" / "positions.ipynb"


def ngshare_or_skip() -> Path:
    usable = NGSHARE_PYTHON.exists() and (
        subprocess.run([NGSHARE_PYTHON, "-c", "import ngshare"], capture_output=True).returncode == 0
    )
    if not usable:
        pytest.skip("ngshare is not installed (make install-exchange: the `exchange` extra in .exchange/venv)")
    return NGSHARE_PYTHON


def call(url: str, token: str, method: str, path: str, **fields) -> dict:
    """ngshare's JSON answer, as any client of its API (a student's included) gets it."""
    body = urllib.parse.urlencode(fields).encode() if method == "POST" else None
    query = "?" + urllib.parse.urlencode(fields) if fields and method == "GET" else ""
    request = urllib.request.Request(url + path + query, data=body, method=method)
    request.add_header("Authorization", f"token {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        return json.loads(error.read() or b"{}") | {"status": error.code}


def encoded(files: dict[str, bytes]) -> str:
    return json.dumps([{"path": path, "content": base64.b64encode(data).decode()} for path, data in files.items()])


@pytest.fixture(scope="module")
def ngshare(tmp_path_factory):
    """A real ngshare with the course: the admin made it, the teacher teaches it, student1 and student2 take it,
    and the teacher released positions (the release's files). Its API's URL."""
    python = ngshare_or_skip()
    folder = tmp_path_factory.mktemp("ngshare")
    script = REPOSITORY / "tests" / "ngshare_service.py"
    process = subprocess.Popen(
        [python, script, folder, json.dumps(TOKENS), "admin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("ngshare on "), f"ngshare did not start: {line!r}"
        url = line.split()[-1]
        assert call(url, "admin-token", "POST", f"course/{COURSE}", instructors='["teacher"]')["success"]
        for student in ("student1", "student2"):
            made = call(url, "teacher-token", "POST", f"student/{COURSE}/{student}", first_name="A", last_name="B",
                        email="a@b")  # fmt: skip
            assert made["success"]
        release = {path.name: path.read_bytes() for path in (REPOSITORY / "release" / "positions").iterdir()}
        assert call(url, "teacher-token", "POST", f"assignment/{COURSE}/positions", files=encoded(release))["success"]
        yield url
    finally:
        process.stdin.close()
        process.wait(timeout=10)


def exchange(url: str, copies: Path, **keywords) -> NgShare:
    return NgShare(url, "teacher-token", course_id=COURSE, copies=copies, every=0.0, **keywords)


def submit(url: str, token: str, files: dict[str, bytes], **forged) -> str:
    answer = call(url, token, "POST", f"submission/{COURSE}/positions", files=encoded(files), **forged)
    assert answer["success"], answer
    return answer["timestamp"]


def test_release_fetch_submit_instant_verdict_and_collect_against_a_real_ngshare(ngshare, tmp_path):
    if sandbox.bubblewrap() is None:
        pytest.skip("bubblewrap is not available (apt-get install bubblewrap): the instant check runs in it")
    fetched = call(ngshare, "s1-token", "GET", f"assignment/{COURSE}/positions")["files"]  # the student's fetch
    assert {item["path"] for item in fetched} == {"positions.ipynb", "visible_checks.json"}
    answered = (
        REPOSITORY / "examples" / "submissions" / "full_solution" / "positions" / "positions.ipynb"
    ).read_bytes()
    before = utcnow()
    stamp = submit(ngshare, "s1-token", {"positions.ipynb": answered})
    received = datetime.datetime.fromisoformat(stamp)
    assert before - datetime.timedelta(seconds=1) <= received <= utcnow()  # ngshare's clock, in UTC

    chosen = ExchangeService(kind="ngshare", url=ngshare, token_env="TEACHER_TOKEN")
    os.environ["TEACHER_TOKEN"] = "teacher-token"
    try:
        service_exchange = open_exchange(chosen, folder=tmp_path / "exchange", course_id=COURSE)
    finally:
        del os.environ["TEACHER_TOKEN"]
    checker = Checker(
        source=SOURCE,
        exchange=service_exchange,
        store=Attempts(f"sqlite:///{tmp_path / 'attempts.db'}"),
        policy=InstantChecks(),
        students=lambda: {"student1", "student2"},
        admit=service_exchange.refusal,
    )
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        checker.step(pool)
        deadline = time.monotonic() + 60
        while not all(future.done() for future in checker.running.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        checker.collect()
    (attempt,) = checker.store.select()
    assert (attempt.student, attempt.status, attempt.points, attempt.max_points) == ("student1", "done", 5.0, 5.0)
    assert attempt.submitted == received  # the exchange's record of its arrival, not a time the student sent
    assert attempt.key == f"student1+positions+{stamp}"

    course, root = tmp_path / "course", tmp_path / "exchange-root"  # nbgrader asks for a root, unused by ngshare
    course.mkdir()
    root.mkdir()
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.course_id = {COURSE!r}\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.ExchangeFactory.collect = 'autograder.hub.collect.OwnCollect'\n"
        "c.ExchangeService.kind = 'ngshare'\n"
        f"c.ExchangeService.url = {ngshare!r}\n"
        "c.ExchangeService.token_env = 'TEACHER_TOKEN'\n"
        f"c.Exchange.root = {str(root)!r}\n"
    )
    environment = {**os.environ, "TEACHER_TOKEN": "teacher-token"}
    collected = subprocess.run(
        [sys.executable, "-m", "nbgrader", "collect", "positions"],
        cwd=course,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert collected.returncode == 0, collected.stderr
    assert "Collecting submission: student1 positions" in collected.stderr
    submitted = course / "submitted" / "student1" / "positions"
    assert (submitted / "positions.ipynb").read_bytes() == answered
    assert (submitted / "timestamp.txt").read_text() == f"{stamp} UTC"  # what nbgrader times the Submit by


def test_a_student_cannot_submit_or_read_as_another(ngshare, tmp_path):
    """ngshare records the account the token proves: a request naming student2 and a time is student1's, now."""
    stamp = submit(ngshare, "s1-token", {"positions.ipynb": b"{}"}, user="student2", timestamp="2020-01-01 00:00:00.0")
    assert datetime.datetime.fromisoformat(stamp) > datetime.datetime(2026, 1, 1)
    read = exchange(ngshare, tmp_path)
    names = {name for name, (student, _, _) in read.submissions().items() if student == "student2"}
    assert names == set() and f"student1+positions+{stamp}" in read.submissions()
    theirs = call(ngshare, "s1-token", "GET", f"submission/{COURSE}/positions/student2")
    assert (theirs["success"], theirs["status"], theirs["message"]) == (False, 403, "Permission denied")
    listing = call(ngshare, "s1-token", "GET", f"submissions/{COURSE}/positions")
    assert (listing["success"], listing["status"]) == (False, 403)


def test_a_huge_file_a_forged_timestamp_and_a_hostile_path_are_refused_with_their_reason(ngshare, tmp_path):
    small = snapshot.Limits(entries=100, depth=4, bytes=2**20)
    huge = submit(ngshare, "s2-token", {"positions.ipynb": b"{}", "data.bin": b"0" * (2**20 + 1)})
    forged = submit(ngshare, "s2-token", {"positions.ipynb": b"{}", "timestamp.txt": b"2020-01-01 00:00:00.000000 UTC"})
    read = exchange(ngshare, tmp_path / "copies", limits=small)
    read.names()
    for stamp, reason in [
        (huge, f"student2+positions+{huge} holds more than 1 MB (a Submit holds a few MB)"),
        (forged, "timestamp.txt of its own: the time a Submit arrived is the exchange's record"),
    ]:
        name = f"student2+positions+{stamp}"
        submit_ = read.examine(os.fsencode(name), "positions", "positions.ipynb")
        assert submit_.observed == datetime.datetime.fromisoformat(stamp)  # the Submit is seen, timed by ngshare
        assert reason in read.refusal(submit_.folder, "student2")
        assert not submit_.folder.exists()  # nothing of it written for the checks
        with pytest.raises(snapshot.Refused, match="holds more than|of its own"):
            read.collect(name, tmp_path / "collected" / stamp)
        assert not (tmp_path / "collected" / stamp).exists()


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ([{"path": "/etc/passwd", "content": ""}], "'/etc/passwd' is not a plain file name inside the Submit"),
        ([{"path": "a/../b", "content": ""}], "'a/../b' is not a plain file name inside the Submit"),
        ([{"path": "a\nb", "content": ""}], "'a\\\\nb' is not a plain file name inside the Submit"),
        ([{"path": "a", "content": ""}, {"path": "a/b", "content": ""}], "a/b is given twice"),
        ([{"path": "a", "content": ""}, {"path": "a", "content": ""}], "a is given twice"),
        ([{"path": "/".join("d" * 6) + "/f", "content": ""}], "is more than 4 folders deep (a Submit holds a few)"),
        ([{"path": f"f{n}", "content": ""} for n in range(101)], "holds more than 100 files and folders"),
        ([{"path": "a", "content": "e30=", "checksum": "0" * 32}], "a changed while it was read: submit again"),
        ([{"path": "a", "content": "***"}], "a is not base64 content"),
        ([{"path": 7, "content": ""}], "an entry is not a file (a path and its content)"),
    ],
)
def test_what_ngshare_hands_over_is_judged_by_snapshots_rules(files, reason):
    """The files of a Submit as ngshare hands them over (it checks paths itself; these are judged here all the
    same, as a client of another exchange service could send them), refused with their reason."""
    with pytest.raises(snapshot.Refused) as refused:
        judged("s+a+t", files, snapshot.Limits(entries=100, depth=4, bytes=2**20))
    assert reason in refused.value.reason


def test_a_plain_submits_files_are_taken_as_sent():
    files = [{"path": "a.ipynb", "content": base64.b64encode(b"{}").decode()}, {"path": "d/e.py", "content": ""}]
    assert [(str(path), data) for path, data in judged("s+a+t", files, snapshot.Limits())] == [
        ("a.ipynb", b"{}"),
        ("d/e.py", b""),
    ]
