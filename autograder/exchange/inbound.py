"""What an entry of nbgrader's inbound folder is: one reader of its names, for Collect, the service and the report.

nbgrader's submit names each Submit ``student+assignment+timestamp+random`` (``timestamp`` as
``2026-12-01 10:00:00.123456 UTC``). Anyone who can submit can also ``mkdir`` any name in the inbound, so a name
is hostile data: ``read_name`` judges one entry's name alone and never raises, so a name that is not UTF-8, a
year 9999 in another time zone, a 255-digit number or an empty time is refused on its own with its reason, and
every other entry is read as usual. Extra ``+`` parts after the time and characters that do not print are kept
as part of the random tail: the folder is still its owner's own Submit (pages show such a name escaped,
``shown_name``). nbgrader's own collect parses every name with dateutil first
and stops the whole class at the first it cannot parse; ``autograder.hub.collect`` and
``autograder.service.instant`` both read names here instead.

A name says who the Submit claims to be from; only the folder's owner says who made it (``NotTheirs``).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.students import RULE as ID_RULE
from autograder.students import is_valid as valid_id

NAME = re.compile(r"(?P<student>[^+/]+)\+(?P<assignment>[^+/]+)\+(?P<timestamp>[^+/]+)(\+[^/]*)?")
LONGEST = 400  # characters of a Submit's name (the service keeps it as its attempt's key)


@dataclass(frozen=True)
class Entry:
    """An inbound name that reads as a Submit: who it names, of which assignment, and the time its name states
    (written by the student's side: never used to time it)."""

    name: str
    student: str
    assignment: str
    stated: datetime.datetime  # naive UTC, as nbgrader keeps times


@dataclass(frozen=True)
class Unread:
    """An inbound name that is not a Submit's, and why (a sentence for the instructor). ``assignment`` is the
    assignment the name states when it got that far (so only that assignment's reader reports it), else None."""

    reason: str
    assignment: str | None = None


class NotTheirs(str):
    """A refusal saying the submission is not the named student's own (another account made it, or no account
    of that name exists, or it is not a folder): shown to the instructor only, never on that student's pages."""


@dataclass(frozen=True)
class Submit:
    key: str  # the Submit's name: student+assignment+timestamp+random (the service keeps it as its attempt's key)
    student: str
    assignment: str
    stated: datetime.datetime  # the time its name states (the student wrote it: never used to time it)
    observed: datetime.datetime  # when the exchange received it (naive UTC), by the exchange's own record
    folder: Path  # where its files lie for the grader (the inbound's folder, or the exchange's private copy)


def shown_name(raw: bytes, most: int = 200) -> str:
    """An entry's name as a page or a log may show it: bytes that are not UTF-8 and characters that do not print
    (newlines, control and invisible characters) as escapes, at most ``most`` characters."""
    text = raw.decode("utf-8", "backslashreplace")
    shown = "".join(character if character.isprintable() else ascii(character)[1:-1] for character in text)
    return shown if len(shown) <= most else shown[: most - 1] + "…"


def parse_timestamp(text: str) -> datetime.datetime:
    """nbgrader's timestamp ('2026-12-01 10:00:00.123456 UTC') as naive UTC; ValueError for anything else
    (a time that overflows in UTC, such as 9999-12-31 23:59:59-01:00, included)."""
    text = text.strip()
    if text.endswith(" UTC"):
        text = text[: -len(" UTC")]
    try:
        value = datetime.datetime.fromisoformat(text)
        return value.astimezone(datetime.UTC).replace(tzinfo=None) if value.tzinfo else value
    except (ValueError, OverflowError):
        raise ValueError(f"{shown_name(text.encode(), 60)!r} is not a date and time") from None


def read_name(raw: bytes) -> Entry | Unread:
    """One inbound entry's name (as bytes, as the folder lists it), judged alone; never raises."""
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Unread("its name is not UTF-8 text (nbgrader's submit never makes such a name)")
    match = NAME.fullmatch(name)
    if not match:
        return Unread("its name is not a Submit's (nbgrader names one student+assignment+timestamp+random)")
    assignment, student = match["assignment"], match["student"]
    if not valid_id(student):
        return Unread(f"its student part is not a student id ({ID_RULE})", assignment)
    try:
        stated = parse_timestamp(match["timestamp"])
    except ValueError as error:
        return Unread(f"the time in its name is not one nbgrader writes: {error}", assignment)
    if len(name) > LONGEST:
        return Unread(f"its name is {len(name)} characters, over the {LONGEST} a Submit's name may have", assignment)
    return Entry(name, student, assignment, stated)
