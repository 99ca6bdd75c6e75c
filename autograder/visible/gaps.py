"""What the notebook's visible checks let through: each mistake the hidden checks name that no public input names,
and a recorded file that no longer says what the checks say (for ``python -m autograder.validate``).

The hidden checks' named mistakes are found on the grading draws the way ``autograder.visible.record`` finds them on the
public ones (each result made wrong, every judge run, each variant handed to diagnose recorded where it differs from
the reference), plus every mistake a compare(...) check declares. A mistake is known by its id (verdicts.named_after:
its words before the colon), so that a message quoting the draw's numbers is the same mistake on every draw. One
the public inputs do not record is let through: the visible check passes it and the grade takes the points.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from autograder import assignments
from autograder.answers.grading import check_generator
from autograder.checks import Compared
from autograder.verdicts import named_after
from autograder.visible import record as visible

LETS_THROUGH = "visible-lets-through"
STALE = "visible-checks-stale"
KINDS = {
    LETS_THROUGH: "a mistake the hidden checks name passes the notebook's visible checks (no public input of "
    "visible_checks.json names it): a student learns of it only from the grade",
    STALE: "visible_checks.json is missing or no longer records what the assignment's checks say",
}
ATOL = 1e-9  # recorded numbers that differ by less are the same (another machine's last bits)


@dataclass(frozen=True)
class Gap:
    """One finding: its kind (a key of KINDS), its place, what to fix, and the check it concerns."""

    kind: str
    place: str
    message: str
    check: str = ""


def same(recorded, fresh) -> bool:
    """Whether two recorded files say the same: equal structure and words, numbers within ATOL."""
    if isinstance(recorded, dict) and isinstance(fresh, dict):
        return recorded.keys() == fresh.keys() and all(same(recorded[k], fresh[k]) for k in recorded)
    if isinstance(recorded, list) and isinstance(fresh, list):
        return len(recorded) == len(fresh) and all(same(a, b) for a, b in zip(recorded, fresh))
    if isinstance(recorded, (int, float)) and isinstance(fresh, (int, float)) and not isinstance(recorded, bool):
        return bool(np.isclose(recorded, fresh, rtol=0.0, atol=ATOL, equal_nan=True))
    return recorded == fresh


def public_ids(entry: dict) -> set[str]:
    """The ids of the mistakes one check's public inputs record."""
    return {named_after(mistake["message"]) for call in entry["calls"] for mistake in call["mistakes"]}


def hidden_named(checks: assignments.AssignmentChecks, check_id: str, seeds) -> dict[str, str]:
    """{mistake id: its message} of what the hidden checks name on the grading draws of ``seeds``, and what a
    compare(...) check declares."""
    check = checks.checks[check_id]
    named = {}
    if isinstance(check, Compared):
        named.update({named_after(message): message for message, _ in check.mistakes})
    for seed in seeds:
        drawn = check.calls(check_generator(seed, check_id))
        facts = visible.record_check(check, checks.folder, checks.references, [drawn], candidate=None)
        named.update({named_after(message): message for message in facts["named"]})
    return named


USES = re.compile(r"^\s*(from\s+lib\.check\s+import|import\s+lib\.check)", re.M)


def uses_recorded(notebook) -> bool:
    """Whether the notebook's visible checks read the recorded numbers (a cell imports lib.check)."""
    return any(cell.cell_type == "code" and USES.search(cell.source) for cell in notebook.cells)


def findings(folder: Path | str, seeds=(0,), recorded: dict | None = None) -> list[Gap]:
    """The visible checks' findings of the assignment in ``folder`` whose notebook uses lib.check (none otherwise:
    its hand-written visible checks are not measured here): a missing or stale visible_checks.json, and each named
    mistake its public inputs let through (``recorded``: the facts already recorded, else made here)."""
    folder = Path(folder)
    layout = assignments.find(folder.parent, folder.name)
    if not uses_recorded(nbformat.read(folder / f"{layout.notebook}.ipynb", as_version=4)):
        return []
    checks = assignments.load(folder)
    fresh = recorded if recorded is not None else visible.record(folder)
    path = folder / visible.FILE
    command = f"python -m autograder.visible --source {folder.parent} --assignment {folder.name}"
    gaps = []
    if not path.is_file():
        gaps.append(Gap(STALE, str(path), f"missing: the visible checks cannot run; make it with {command}"))
    elif not same(json.loads(path.read_text(encoding="utf-8")), json.loads(visible.text_of(fresh))):
        gaps.append(Gap(STALE, str(path), f"records other numbers than checks.py gives now: run {command}"))
    for check_id, entry in fresh["checks"].items():
        shown = public_ids(entry)
        if check_id not in checks.checks:
            continue
        for mistake_id, message in hidden_named(checks, check_id, seeds).items():
            if mistake_id in shown:
                continue
            gaps.append(
                Gap(
                    LETS_THROUGH,
                    f"{folder / assignments.CHECKS_FILE}, check {check_id}",
                    f"{entry['function']}'s visible check passes the mistake {message!r}, which the hidden checks "
                    f"name: no public input tells it from the reference; draw the check's inputs so that a small "
                    f"one shows it (at most {visible.CANDIDATE} numbers), or say in the task that this property is "
                    "left to the hidden checks",
                    check_id,
                )
            )
    return gaps
