"""The instructor's policy for instant checks (``c.InstantChecks.*`` in the course's nbgrader_config.py), as
traitlets, and the sentences a page states it in.

The course's settings (autograder.settings) read it with the rest of the course's configuration; the checker
(autograder.service.instant) applies it; the service's pages (autograder.service.app) state it.
"""

from __future__ import annotations

import datetime

from traitlets import Bool, Enum, Float, Integer, Unicode
from traitlets.config import Configurable

SHOWN = ("verdicts", "score", "nothing")  # what a student's page shows of a checked attempt


class InstantChecks(Configurable):
    """The instructor's policy for instant checks (``c.InstantChecks.*``); the student's page states it."""

    enabled = Bool(True, help="Check Submits instantly at all").tag(config=True)
    attempts = Integer(3, help="Submits checked per student per period (later ones wait, shown as queued)").tag(
        config=True
    )
    period = Float(3600.0, help="The period, in seconds, that 'attempts' counts over").tag(config=True)
    before_due = Enum(SHOWN, "verdicts", help="What a checked attempt shows before the due date").tag(config=True)
    after_due = Enum(SHOWN, "score", help="What a checked attempt shows after the due date").tag(config=True)
    due = Unicode("", help="The due date (ISO, UTC unless it names a zone); default: the gradebook's").tag(config=True)
    check_after_due = Bool(False, help="Check Submits made after the due date too (default: never)").tag(config=True)
    lms = Bool(
        False,
        help="Send each instant score to the LMS as Pending (autograder.lms.lti; the service's --lti names the tool's "
        "config); the class run's score replaces it",
    ).tag(config=True)

    def due_date(self) -> datetime.datetime | None:
        if not self.due:
            return None
        value = datetime.datetime.fromisoformat(self.due)
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        return value

    def shown(self, now: datetime.datetime) -> str:
        due = self.due_date()
        return self.after_due if due is not None and now > due else self.before_due

    def describe(self, own_due: datetime.datetime | None = None) -> list[str]:
        """The policy in sentences, for the student's page and the instructor's; ``own_due``: the student's own due
        date (an extension, late days: autograder.course.term), said instead of the assignment's."""
        hours = self.period / 3600
        period = f"{hours:g} hour" + ("s" if hours != 1 else "") if self.period >= 3600 else f"{self.period:g} s"
        lines = [
            f"Up to {self.attempts} Submit{'s are' if self.attempts != 1 else ' is'} checked per {period}; later "
            "ones are queued and checked when the window reopens.",
            f"Before the due date a checked Submit shows {explain(self.before_due)}; after it, "
            f"{explain(self.after_due)}.",
        ]
        due = own_due or self.due_date()
        if due is not None:
            checked = "are checked too" if self.check_after_due else "are not checked"
            whose = "your due date" if own_due is not None else "the due date"
            lines.append(f"Submits after {whose} ({due:%Y-%m-%d %H:%M} UTC) {checked}.")
        lines.append("Your grade is the instructor's class run; these checks tell you early what it will say.")
        return lines


def explain(shown: str) -> str:
    return {
        "verdicts": "the score per function and what failed",
        "score": "the score per function only",
        "nothing": "only that it was received",
    }[shown]
