"""What a student id may be: one rule, for every page and file name a student id reaches.

A student id comes from the name of an upload's folder (``autograder.course.uploads.survey``) and ends up in file
names, URLs, the gradebook and every page an instructor opens (Formgrader's lists, the report). nbgrader's
Formgrader writes it into two of its pages without escaping it, so an id is limited to a pattern that holds
no markup, no path and no space:

    a letter or a digit, then up to 63 letters, digits, dots, underscores or hyphens

``id_problem(name)`` says what is wrong with a name and what to rename it to, or returns None for a good id.
"""

from __future__ import annotations

import re
import unicodedata

PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
RULE = "a letter or a digit, then up to 63 letters, digits, '.', '_' or '-'"
LONGEST = 64


def is_valid(name: str) -> bool:
    return PATTERN.fullmatch(name) is not None


def suggestion(name: str) -> str | None:
    """A valid id close to ``name`` (its allowed characters, in order, cut to 64), or None when none is left."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()  # accents folded: é -> e
    kept = re.sub(r"[^A-Za-z0-9._-]", "", folded).lstrip("._-")[:LONGEST]
    return kept if kept and is_valid(kept) else None


def id_problem(name: str) -> str | None:
    """None for a valid student id; else what is wrong with the folder name and what to rename it to."""
    if is_valid(name):
        return None
    shown = repr(name)  # quoted, its control and invisible characters written as escapes
    if len(name) > LONGEST and is_valid(name[:LONGEST]):
        why = f"the folder name {shown} is longer than {LONGEST} characters"
    else:
        why = f"the folder name {shown} is not a student id ({RULE})"
    better = suggestion(name)
    return why + (f": rename the folder, e.g. to {better!r}" if better else ": rename the folder to the student's id")
