"""autograder.lms.lti.passback, without an LMS: which line item and which identity a score may go to (never
another course's line item, never a ``sub`` from another platform or deployment), what the class run queues
from the gradebook (tests/lms_course.py: FullyGraded or PendingManual, a score the LMS already has left out, a
student who never launched said), the outbox (what is taken leaves it, what fails stays with why and a count,
written even when sending stops), its refusals (a broken outbox, a platform gone from the config), the
closing lines, and a request never left without a timeout. Sending through a real platform is
tests/autograder/lms/lti/test_tool.py's."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests
from lms_course import HOSTILE, make_gradebook
from pylti1p3.exception import LtiException, LtiServiceException

from autograder.lms.lti import passback
from autograder.lms.lti.passback import (
    NOT_LAUNCHED,
    NOT_PLACED,
    OUTBOX_FILE,
    SCORE_SCOPE,
    TIMEOUT,
    PassbackResult,
    course_lineitem,
    person_on,
    queue_scores,
    read_outbox,
    send_instant,
    send_outbox,
    why_not_sent,
)
from autograder.lms.lti.store import LINKS_FILE

ISSUER = "https://lms.example.edu"
CONTEXT = {"issuer": ISSUER, "deployment_id": "d1", "id": "course-7"}


def lineitem(number: int = 1, context: dict | None = None) -> dict:
    return {
        "issuer": ISSUER,
        "client_id": "tool-1",
        "lineitem": f"{ISSUER}/lineitems/{number}",
        "context": dict(context or CONTEXT),
    }


def identity(sub: str, **changes) -> dict:
    return {"issuer": ISSUER, "deployment_id": "d1", "sub": sub, **changes}


def write_links(course: Path, **links) -> None:
    data = {"context": CONTEXT, "students": {}, "assignments": {}, **links}
    (course / LINKS_FILE).write_text(json.dumps(data))


def test_a_line_item_is_used_only_when_recorded_from_the_bound_course():
    links = {"context": CONTEXT, "assignments": {"ps1": lineitem(), "ps2": lineitem(2, {**CONTEXT, "id": "other"})}}
    assert course_lineitem(links, "ps1") == (lineitem(), "")
    assert course_lineitem(links, "ps3") == (None, NOT_PLACED)
    item, why = course_lineitem(links, "ps2")
    assert item is None and why.startswith("its line item was not recorded from the LMS course the tool is bound to")
    unbound = {"assignments": {"ps1": lineitem()}}
    assert course_lineitem(unbound, "ps1")[0] is None
    hostile = {"context": CONTEXT, "assignments": {"ps1": {**lineitem(), "context": "course-7"}}}
    assert course_lineitem(hostile, "ps1")[0] is None


def test_an_identity_counts_only_on_the_line_items_platform_and_deployment():
    item = lineitem()
    assert person_on(item, identity("u1")) == identity("u1")
    assert person_on(item, None) is None
    assert person_on(item, identity("u1", issuer="https://other.example.edu")) is None
    assert person_on(item, identity("u1", deployment_id="d2")) is None


def test_the_outbox_reads_empty_when_missing_and_refuses_a_broken_one(tmp_path):
    assert read_outbox(tmp_path) == {"pending": {}, "sent": {}}
    (tmp_path / OUTBOX_FILE).write_text('{"sent": {"ada/ps1": [1.0, "FullyGraded", "x"]}}')
    assert read_outbox(tmp_path) == {"pending": {}, "sent": {"ada/ps1": [1.0, "FullyGraded", "x"]}}
    (tmp_path / OUTBOX_FILE).write_text("{half")
    with pytest.raises(ValueError, match=r"lti-outbox.json is not JSON .*: restore it or delete it"):
        read_outbox(tmp_path)
    (tmp_path / OUTBOX_FILE).write_text("[]")
    with pytest.raises(ValueError, match=r"lti-outbox.json is not a JSON object: restore it or delete it"):
        read_outbox(tmp_path)


def test_why_a_score_was_not_sent_is_said():
    refusal = SimpleNamespace(url=f"{ISSUER}/lineitems/1/scores", status_code=403, text="not yours")
    assert why_not_sent(LtiServiceException(refusal)) == (
        f"the LMS refused it: HTTP response [{ISSUER}/lineitems/1/scores]: 403 - not yours"
    )
    assert why_not_sent(requests.ConnectionError("boom")) == "the LMS could not be reached: ConnectionError"
    assert why_not_sent(LtiException("the platform is gone")) == "the platform is gone"


def test_every_request_to_the_lms_has_a_timeout(monkeypatch):
    seen = []
    monkeypatch.setattr(requests.Session, "request", lambda self, *args, **kwargs: seen.append(kwargs["timeout"]))
    session = passback.TimedSession()
    session.request("POST", "https://lms.example.edu/token")
    session.request("POST", "https://lms.example.edu/token", timeout=3)
    assert seen == [TIMEOUT, 3]


def test_the_summary_says_each_outcome():
    result = PassbackResult(
        sent=["ada/ps1: 2.5/3 FullyGraded"],
        pending={"cy/ps1": "the LMS could not be reached: Timeout"},
        not_launched={"bob": NOT_LAUNCHED},
        not_placed={"ps2": NOT_PLACED},
    )
    assert result.summary() == [
        "LMS: 1 scores sent, 1 pending",
        "  sent ada/ps1: 2.5/3 FullyGraded",
        f"  PENDING cy/ps1: the LMS could not be reached: Timeout (kept in {OUTBOX_FILE}, sent on the next run)",
        f"  NOT LAUNCHED FROM THE LMS: bob: {NOT_LAUNCHED}",
        f"  NO LINE ITEM: ps2: {NOT_PLACED}",
    ]


@pytest.fixture
def course(tmp_path, monkeypatch):
    """tests/lms_course.py's gradebook in a course whose ps1 is placed; ada and cy launched, the hostile id not."""
    make_gradebook(tmp_path, monkeypatch)
    write_links(
        tmp_path,
        assignments={"ps1": lineitem()},
        students={"ada": identity("u-ada"), "cy": identity("u-cy"), HOSTILE: identity("u-x", deployment_id="d9")},
    )
    return tmp_path


def test_the_class_run_queues_each_launched_students_score(course):
    outbox, result = {"pending": {}, "sent": {}}, PassbackResult()
    queue_scores(SimpleNamespace(course=course), None, outbox, result)
    assert sorted(outbox["pending"]) == ["ada/ps1", "cy/ps1"]
    ada, cy = outbox["pending"]["ada/ps1"], outbox["pending"]["cy/ps1"]
    assert (ada["user_id"], ada["score"], ada["maximum"], ada["progress"], ada["activity"]) == (
        "u-ada",
        2.5,
        3.0,
        "FullyGraded",
        "Completed",
    )
    assert (cy["score"], cy["progress"], cy["activity"]) == (2.0, "PendingManual", "Submitted")
    assert ada["scope"] == [SCORE_SCOPE] and ada["lineitem"] == lineitem()["lineitem"]
    assert list(result.not_launched) == [HOSTILE]  # its identity is on another deployment
    assert list(result.not_placed) == ["ps2"]


def test_a_score_the_lms_has_is_not_queued_again(course):
    sent = {"ada/ps1": [2.5, "FullyGraded", lineitem()["lineitem"]], "cy/ps1": [2.0, "FullyGraded", "old"]}
    failing = {"score": 1.0, "attempts": 2, "last_error": "the LMS could not be reached: Timeout"}
    outbox = {"pending": {"ada/ps1": {"score": 1.0}, "cy/ps1": failing}, "sent": sent}
    queue_scores(SimpleNamespace(course=course), None, outbox, PassbackResult())
    assert sorted(outbox["pending"]) == ["cy/ps1"]  # ada's stale pending score gives way to the one sent
    cy = outbox["pending"]["cy/ps1"]  # the newest score, with the count of tries kept
    assert (cy["score"], cy["progress"], cy["attempts"]) == (2.0, "PendingManual", 2)


def test_the_outbox_keeps_what_fails_and_drops_what_is_taken(tmp_path, monkeypatch):
    def send_one(config, entry, connectors):
        if entry["student"] == "cy":
            raise requests.ConnectTimeout("slow")

    monkeypatch.setattr(passback, "send_one", send_one)
    entry = {"score": 2.5, "maximum": 3.0, "progress": "FullyGraded", "lineitem": "L1"}
    outbox = {
        "pending": {"ada/ps1": {**entry, "student": "ada"}, "cy/ps1": {**entry, "student": "cy", "attempts": 2}},
        "sent": {},
    }
    result = PassbackResult()
    send_outbox(SimpleNamespace(course=tmp_path), outbox, result)
    assert result.sent == ["ada/ps1: 2.5/3 FullyGraded"]
    assert result.pending == {"cy/ps1": "the LMS could not be reached: ConnectTimeout"}
    stored = json.loads((tmp_path / OUTBOX_FILE).read_text())
    assert stored["sent"] == {"ada/ps1": [2.5, "FullyGraded", "L1"]}
    assert list(stored["pending"]) == ["cy/ps1"] and stored["pending"]["cy/ps1"]["attempts"] == 3


def test_the_outbox_is_written_even_when_sending_stops(tmp_path, monkeypatch):
    def send_one(config, entry, connectors):
        raise KeyboardInterrupt

    monkeypatch.setattr(passback, "send_one", send_one)
    outbox = {"pending": {"ada/ps1": {"student": "ada"}}, "sent": {}}
    with pytest.raises(KeyboardInterrupt):
        send_outbox(SimpleNamespace(course=tmp_path), outbox, PassbackResult())
    assert json.loads((tmp_path / OUTBOX_FILE).read_text())["pending"] == {"ada/ps1": {"student": "ada"}}


def test_a_platform_gone_from_the_config_is_refused_by_name():
    tool = SimpleNamespace(find_registration_by_params=lambda issuer, client_id: None)
    config = SimpleNamespace(tool_conf=lambda: tool)
    entry = {"issuer": ISSUER, "client_id": "tool-1"}
    with pytest.raises(LtiException, match=r"the platform https://lms.example.edu \(tool-1\) is no longer in the LTI"):
        passback.send_one(config, entry, {})


def test_an_instant_score_goes_as_pending_and_nothing_is_queued_for_who_cannot_receive_it(tmp_path, monkeypatch):
    write_links(tmp_path, assignments={"ps1": lineitem()}, students={"ada": identity("u-ada")})
    config = SimpleNamespace(course=tmp_path)
    unplaced = send_instant(config, student="ada", assignment="ps2", points=1, maximum=1)
    assert unplaced.not_placed == {"ps2": NOT_PLACED}
    unknown = send_instant(config, student="bob", assignment="ps1", points=1, maximum=3)
    assert unknown.not_launched == {"bob": NOT_LAUNCHED}
    assert not (tmp_path / OUTBOX_FILE).exists()

    monkeypatch.setattr(passback, "send_one", lambda config, entry, connectors: None)
    sent = send_instant(config, student="ada", assignment="ps1", points=1.5, maximum=3)
    assert sent.sent == ["ada/ps1: 1.5/3 Pending"]
    assert json.loads((tmp_path / OUTBOX_FILE).read_text())["sent"]["ada/ps1"] == [
        1.5,
        "Pending",
        lineitem()["lineitem"],
    ]


def test_the_closing_lines_say_a_config_that_cannot_be_read(tmp_path):
    lines = passback.passback_lines(tmp_path / "missing.json", tmp_path)
    assert len(lines) == 1 and lines[0].startswith("LMS: scores not sent: cannot read the LTI config")
