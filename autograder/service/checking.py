"""What a pool's worker runs for the grading service: one Submit's check (check_notebook) and the warm-up at start.

    check_notebook(source=..., notebook_path=..., received=..., wall=...)  # -> (points, max points, [Verdict])
    warm_up(source=..., notebook_path=...)                                  # a whole check of the blank notebook

The checks are the class run's own (autograder.answers.grading.grade_answers: the answer cells run in the bare
sandboxed runner, the verdicts judged here); the student's kernel never runs. This module imports only what a check
needs (no nbgrader, no database, no web server), so a worker started with the service is ready in a fraction of a
second of CPU and a Submit waiting at start is checked at once (benchmarks/service_rounds.py --start); the rest of
the service (autograder.service.instant: finding Submits, the queue, the policy) stays in the service's process.
"""

from __future__ import annotations

import datetime
import json
import os
import stat
import time
from functools import lru_cache
from pathlib import Path

import nbformat

from autograder import assignments
from autograder.answers.grading import answer_sources, grade_answers
from autograder.grading.readable import unreadable
from autograder.timeouts import CHECKS_BUDGET
from autograder.verdicts import CHECKS_CLOCK, Verdict

LARGEST = 20 * 2**20  # bytes: a submitted notebook larger than this is not checked
WALL = 30.0  # seconds by the clock one check may take, whatever the notebook does (sleeps included)
# A check the clock cuts was cut for the service's own reasons (a busy machine, its own short clock), never the
# student's: the class run's limits are counted in CPU and idle seconds, which the service counts the same way, and
# its clock is 2.5 x the CPU budget. So such a check gives no verdict (NotCheckedYet) and costs the student no check.
SETTLE = 10.0  # seconds after a Submit was received within which its notebook may still be written (the copy)


def changed_at(status: os.stat_result) -> datetime.datetime:
    """A change time (st_ctime: set by the system, never by the file's owner) as naive UTC."""
    return datetime.datetime.fromtimestamp(status.st_ctime, datetime.UTC).replace(tzinfo=None)


class NotCheckable(ValueError):
    """The Submit cannot be checked; the message says why, in words for the student."""


class NotCheckedYet(RuntimeError):
    """The service's own clock cut the check (a busy machine): no verdict, and the Submit costs no check; the
    message says so, in words for the student."""


def submitted_bytes(path: Path, received: datetime.datetime | None = None) -> bytes:
    """The bytes of the Submit's file at ``path``, never through a link: the Submit's folder and the file are
    opened without following one, so a student who swaps either for a link after the scan (they own both) reads
    nothing of the instructor's through the verdict. Raises NotCheckable for a link, a missing file, anything
    but a plain file, a file over LARGEST, a folder the grader may not read, a file another account than the
    folder's wrote (nbgrader's submit leaves the folder open to all: a classmate may put a notebook of theirs in
    it), and (``received``: when the Submit was received, naive UTC) a file changed more than SETTLE seconds
    after it was received."""
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            owner = os.fstat(folder).st_uid
            handle = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        finally:
            os.close(folder)
    except FileNotFoundError:
        raise NotCheckable(f"the Submit holds no {path.name}: submit the assignment's notebook") from None
    except PermissionError:
        raise NotCheckable(
            f"the grader may not read {path.name} in its Submit: submit again (nbgrader's submit leaves it readable)"
        ) from None
    except OSError:  # ELOOP or ENOTDIR: a link where the Submit's folder or notebook should be
        raise NotCheckable(f"{path.name} is not a plain file in its Submit: submit the notebook itself") from None
    with os.fdopen(handle, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise NotCheckable(f"{path.name} is not a plain file in its Submit: submit the notebook itself")
        if status.st_uid != owner:
            raise NotCheckable(f"{path.name} in this Submit was written by another account than its folder's")
        changed = changed_at(status)
        if received is not None and changed > received + datetime.timedelta(seconds=SETTLE):
            raise NotCheckable(
                f"{path.name} was changed at {changed:%Y-%m-%d %H:%M:%S} UTC, after this Submit was received "
                f"({received:%Y-%m-%d %H:%M:%S} UTC): a Submit is checked as it was received; submit again"
            )
        if status.st_size > LARGEST:
            raise NotCheckable(
                f"{path.name} is {status.st_size / 2**20:.1f} MB, over the {LARGEST // 2**20} MB that is checked: "
                "clear the outputs (Edit > Clear Outputs of All Cells), save and submit again"
            )
        return file.read(LARGEST + 1)


def read_notebook(path: Path, received: datetime.datetime | None = None) -> nbformat.NotebookNode:
    data = submitted_bytes(path, received)
    blank = unreadable(data)  # the class run's rule (grading.worker): empty, not text, not a notebook, format
    if blank is not None:
        raise NotCheckable(f"{path.name}: {blank.text()}; open it in JupyterLab, save it and submit again")
    return nbformat.reads(data.decode("utf-8"), as_version=4)


@lru_cache(maxsize=8)
def assignment_checks(source: Path, changed: int):
    """The assignment's checks (checks.py or checks/), loaded once per worker process while they stay the same
    (``changed``: their latest modification time in ns, part of the key so edited checks are loaded again)."""
    return assignments.load(source)


@lru_cache(maxsize=8)
def cell_points(source_notebook: Path, changed: int = 0) -> dict[str, float]:
    """{grade id: points} of the source notebook's grade cells: the gradebook's scale (``changed``: the
    notebook's modification time in ns, for the cache)."""
    notebook = json.loads(source_notebook.read_text(encoding="utf-8"))
    points = {}
    for cell in notebook["cells"]:
        flags = cell.get("metadata", {}).get("nbgrader", {})
        if flags.get("grade"):
            points[flags["grade_id"]] = float(flags.get("points", 0))
    return points


def modified(path: Path) -> int:
    return path.stat().st_mtime_ns


def check_answers(
    source: Path,
    notebook: nbformat.NotebookNode,
    wall: float = WALL,
    seed: int | None = None,
    timeout: float | None = None,
) -> tuple[float, float, list[Verdict]]:
    """(points, max points, verdicts) of a notebook's answers by the assignment in ``source``; the checks and the
    points table are loaded once per process (the first check of a worker pays for them, warm_up at start).
    ``seed``: the inputs' (default: fresh; an appeal's re-run gives the verdict's own, to draw the same inputs);
    ``timeout``: the CPU seconds of all the checks, the class run's (the course's checks_budget; None: CHECKS_BUDGET).
    Raises NotCheckedYet when the clock (``wall``) cut a check: the service's reason, not the student's."""
    checks = assignment_checks(source, assignments.checks_changed(source))
    source_notebook = next(source.glob("*.ipynb"))
    scale = cell_points(source_notebook, modified(source_notebook))
    timeout = CHECKS_BUDGET if timeout is None else float(timeout)
    verdicts = grade_answers(checks, answer_sources(notebook), wall=wall, seed=seed, timeout=timeout)
    if any(verdict.end is not None and verdict.end.kind == CHECKS_CLOCK for verdict in verdicts.values()):
        raise NotCheckedYet(
            f"the checking service was too busy to finish your check within its {wall:g} s by the clock; this Submit "
            "cost you no check"
        )
    points = sum(verdict.scaled(scale.get(check, verdict.max_points)) for check, verdict in verdicts.items())
    top = sum(scale.get(check, verdict.max_points) for check, verdict in verdicts.items())
    return round(points, 2), top, list(verdicts.values())


def warm_up(source: Path, notebook_path: Path) -> float:
    """A worker made ready for the first Submit: the checks imported and a whole check run (the sandbox, the
    runner, NumPy read from disk once) on ``notebook_path``, the release's blank notebook; its seconds."""
    started = time.monotonic()
    check_answers(source, nbformat.read(notebook_path, as_version=4))
    return time.monotonic() - started


def check_notebook(
    *,
    source: Path,
    notebook_path: Path,
    received: datetime.datetime | None = None,
    wall: float = WALL,
    seed: int | None = None,
    timeout: float | None = None,
) -> tuple[float, float, list[Verdict]]:
    """(points, max points, verdicts) of one submitted notebook, by the assignment in ``source``.

    Runs the class run's hidden checks (grade_answers) on the notebook's answer cells, within ``wall`` seconds
    by the clock (the notebook's budget: past it the runner is killed and each verdict says so); points are on
    the gradebook's scale. received: when the Submit was received (a notebook changed after it is not
    checked); timeout: the class run's CPU seconds for all the checks. Raises NotCheckable with a reason for the
    student, NotCheckedYet when the service's clock cut the check.
    """
    return check_answers(source, read_notebook(notebook_path, received), wall, seed, timeout)
