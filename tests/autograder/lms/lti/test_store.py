"""autograder.lms.lti.store alone: a nonce is used once and expires; lti.json binds one identity to one account (the
roster may move it), one LMS course to the tool, and keeps line items from the bound course only."""

from __future__ import annotations

import time

import pytest

from autograder.lms.lti.store import CourseLinks, IdentityTaken, OneTimeSessions, OneTimeStore, same_person

ADA = {"issuer": "https://lms.example", "deployment_id": "d1", "sub": "1", "client_id": "c"}
ADA_AGAIN = {**ADA, "client_id": "another client", "name": "Someone Else"}  # names and clients never count
BOB = {**ADA, "sub": "2"}
COURSE = {"issuer": "https://lms.example", "deployment_id": "d1", "id": "course-7"}


def test_a_nonce_is_taken_once():
    store = OneTimeStore()
    sessions = OneTimeSessions(store)
    sessions.save_nonce("n1")
    assert sessions.check_nonce("n1")
    assert not sessions.check_nonce("n1"), "the same id_token sent again"
    assert not sessions.check_nonce("never saved")


def test_values_expire_and_never_outlive_the_stores_lifetime(monkeypatch):
    store = OneTimeStore(lifetime=10)
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    store.set_value("state", {"x": 1}, exp=3600)  # asked for an hour: capped at 10 s
    assert store.get_value("state") == {"x": 1} and store.check_value("state")
    now[0] += 11
    assert store.get_value("state") is None and not store.take("state")


def test_one_identity_one_account(tmp_path):
    links = CourseLinks(tmp_path)
    assert links.bind("ada", ADA) == "ada"
    assert links.bind("lti-other", ADA_AGAIN) == "ada", "an identity keeps its account"
    assert links.account_of(ADA_AGAIN) == "ada" and links.account_of(BOB) is None
    with pytest.raises(IdentityTaken, match="'ada' belongs to another LMS user"):
        links.bind("ada", BOB)
    assert CourseLinks(tmp_path).read()["students"] == {"ada": ADA}
    assert (tmp_path / "lti.json").stat().st_mode & 0o777 == 0o600


def test_the_roster_moves_an_identity_to_the_account_it_names(tmp_path):
    links = CourseLinks(tmp_path)
    links.bind("lti-abc", ADA)
    assert links.bind("ada", ADA, moves=True) == "ada"
    assert links.read()["students"] == {"ada": ADA}, "the derived account is no longer Ada's"


def test_the_first_placement_binds_the_course_and_line_items_come_from_it_only(tmp_path):
    links = CourseLinks(tmp_path)
    item = {"context": COURSE, "url": "https://lms.example/lineitems/1"}
    assert not links.record_lineitem("ps1", item), "no course bound yet"
    assert links.bind_context(COURSE) == COURSE
    assert links.bind_context({**COURSE, "id": "course-8"}) == COURSE, "a second course never replaces the first"
    assert links.record_lineitem("ps1", item)
    assert not links.record_lineitem("ps2", {**item, "context": {**COURSE, "id": "course-8"}})
    assert set(links.read()["assignments"]) == {"ps1"}


def test_a_damaged_file_says_what_to_do(tmp_path):
    (tmp_path / "lti.json").write_text("{not json")
    with pytest.raises(ValueError, match="restore it from a backup or delete it"):
        CourseLinks(tmp_path).read()


def test_same_person_reads_issuer_deployment_and_sub_only():
    assert same_person(ADA, ADA_AGAIN)
    assert not same_person(ADA, BOB) and not same_person(ADA, {**ADA, "deployment_id": "d2"})
