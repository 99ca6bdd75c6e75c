"""Whether a handed-in file is a notebook nbgrader can grade: the one rule of the class run and the instant checks.

Imports nbformat and autograder.verdicts only, so the grading service's workers read a Submit without nbgrader.
"""

from __future__ import annotations

import nbformat

from autograder import verdicts
from autograder.verdicts import Blank


def unreadable(data: bytes) -> Blank | None:
    """Why ``data`` is not a notebook nbgrader can grade, or None when it is one."""
    if not data.strip():
        return Blank(verdicts.EMPTY)
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=nbformat.NO_CONVERT)
    except UnicodeDecodeError as error:
        return Blank(verdicts.NOT_TEXT, str(error))
    except Exception as error:  # noqa: BLE001 - nbformat raises several kinds for a bad file
        return Blank(verdicts.NOT_NOTEBOOK, f"{type(error).__name__}: {str(error).splitlines()[0][:300]}")
    major = notebook.get("nbformat")
    if major not in (3, 4):
        return Blank(verdicts.FORMAT_VERSION, str(major))
    return None
