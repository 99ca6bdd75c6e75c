"""autograder.policy.InstantChecks alone: what a checked Submit shows before and after the due date, the due
date in UTC whatever zone it is written in, and the sentences the pages state the policy in."""

from __future__ import annotations

import datetime

import pytest
from traitlets import TraitError

from autograder.policy import InstantChecks

DUE = datetime.datetime(2026, 12, 14, 17, 0)


def test_the_defaults_show_verdicts_before_the_due_date_and_the_score_after():
    policy = InstantChecks(due="2026-12-14T17:00")
    assert (policy.attempts, policy.period, policy.check_after_due, policy.lms) == (3, 3600.0, False, False)
    assert policy.shown(DUE) == "verdicts", "at the due date itself: still before it"
    assert policy.shown(DUE + datetime.timedelta(seconds=1)) == "score"
    assert InstantChecks().shown(DUE) == "verdicts" and InstantChecks().due_date() is None


@pytest.mark.parametrize("written", ["2026-12-14T17:00", "2026-12-14T18:00+01:00", "2026-12-14T12:00:00-05:00"])
def test_a_due_date_in_any_zone_is_read_in_utc(written):
    assert InstantChecks(due=written).due_date() == DUE


def test_a_value_the_pages_cannot_show_is_refused():
    with pytest.raises(TraitError):
        InstantChecks(before_due="everything")


def test_the_policy_in_sentences():
    policy = InstantChecks(attempts=5, period=7200, after_due="nothing", due="2026-12-14T17:00", check_after_due=True)
    assert policy.describe() == [
        "Up to 5 Submits are checked per 2 hours; later ones are queued and checked when the window reopens.",
        "Before the due date a checked Submit shows the score per function and what failed; after it, only that it "
        "was received.",
        "Submits after the due date (2026-12-14 17:00 UTC) are checked too.",
        "Your grade is the instructor's class run; these checks tell you early what it will say.",
    ]
    short = InstantChecks(attempts=1, period=600).describe()
    assert short[0].startswith("Up to 1 Submit is checked per 600 s;") and len(short) == 3
    assert InstantChecks(period=3600).describe()[0].startswith("Up to 3 Submits are checked per 1 hour;")
