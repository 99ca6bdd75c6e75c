"""autograder.visible.record: the visible checks' numbers, recorded from an assignment's own checks, and nothing else.

A compare(...) check made here (in memory) shows how the public inputs are chosen and what is recorded; the course's
two committed files are held to a fresh recording, to the release's copy and to "numbers and messages only".
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
from pathlib import Path

import numpy as np
import pytest

from autograder import assignments
from autograder.answers.grading import check_generator
from autograder.checks import Args, compare
from autograder.notebook.pipeline import IGNORED
from autograder.visible import record as visible
from autograder.visible.gaps import same

ROOT = Path(__file__).resolve().parents[3]
COURSE = ["positions", "attention"]
CODE = re.compile(r"\bdef \w+\(|\blambda\b[^:]*:|\breturn\s+\S+\s*[-+*/@]|^\s*(import|from)\s")  # a line of code


def scale(x, factor=2.0):
    return np.asarray(x, dtype=float) * factor


def small(rng):  # a few numbers, the default factor
    return (rng.normal(size=int(rng.integers(2, 5))),)


def large(rng):  # many numbers, another factor: the only inputs on which "ignores factor" shows
    return Args(rng.normal(size=int(rng.integers(30, 40))), factor=3.0)


SCALE = compare(
    "check_scale",
    scale,
    points=1,
    inputs={"a few numbers": small, "many numbers, another factor": large},
    mistakes={
        "adds the factor: multiply by it": lambda x, factor=2.0: np.asarray(x) + factor,
        "ignores factor: use the factor given": lambda x, factor=2.0: np.asarray(x) * 2.0,
    },
)


def test_each_named_mistake_is_recorded_where_the_public_inputs_show_it():
    facts = visible.record_check(SCALE, Path("."), {})
    assert facts["function"] == "scale" and facts["properties"] == ["a few numbers", "many numbers, another factor"]
    where = {}  # {message: the calls it is recorded on}
    for call in facts["calls"]:
        for mistake in call["mistakes"]:
            where.setdefault(mistake["message"], []).append(call)
    assert set(where) == {"adds the factor: multiply by it", "ignores factor: use the factor given"}
    assert len(where["adds the factor: multiply by it"]) == len(facts["calls"])  # it shows on every input
    shown = where["ignores factor: use the factor given"]  # only where another factor is given
    assert shown and all(call["kwargs"] == {"factor": 3.0} for call in shown)
    x = np.array(shown[0]["args"][0]["array"])
    assert np.array_equal(shown[0]["expected"][0]["array"], x * 3.0)
    mistake = next(m for m in shown[0]["mistakes"] if m["message"].startswith("ignores factor"))
    assert np.array_equal(mistake["array"], x * 2.0)
    assert facts["named"] == sorted(where)
    assert {call["role"] for call in facts["calls"]} == {"a few numbers", "many numbers, another factor"}


def test_the_public_inputs_are_none_of_a_grading_draw():
    public = [call.args[0] for draw in visible.public_draws(SCALE) for call in draw]
    graded = [call.args[0] for seed in range(50) for call in SCALE.calls(check_generator(seed, "check_scale"))]
    assert len(public) == visible.DRAWS * 4
    assert not any(a.shape == b.shape and np.allclose(a, b) for a in public for b in graded)


def test_a_property_the_public_inputs_cannot_decide_is_not_claimed():
    def failing_only_large(result, x, factor=2.0):  # a property of the large inputs, which are no public input here
        return None

    check = compare(
        "check_scale", scale, points=1, inputs={"a few numbers": small}, properties={"kept": failing_only_large}
    )
    facts = visible.record_check(check, Path("."), {})
    assert facts["properties"] == ["a few numbers"]


@pytest.mark.parametrize("name", COURSE)
def test_the_committed_file_holds_numbers_and_the_checks_sentences_never_the_reference(name):
    path = ROOT / "source" / name / visible.FILE
    text = path.read_text(encoding="utf-8")
    assert (ROOT / "release" / name / visible.FILE).read_text(encoding="utf-8") == text  # released as recorded
    facts = json.loads(text)
    strings = []

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            assert key in {
                "about",
                "role",
                "message",
                "cell",
                "dtype",
                "function",
                "assignment",
                "accepted",
                "calls",
                "properties",
                "named",
            }, (key, value)
            strings.append((key, value))
        else:
            assert value is None or isinstance(value, (bool, int, float)), (key, value)

    walk(facts)
    reference = (ROOT / "source" / name / assignments.REFERENCE_FILE).read_text(encoding="utf-8")
    statements = [
        ast.unparse(node).splitlines()[0]
        for node in ast.walk(ast.parse(reference))
        if isinstance(node, (ast.Assign, ast.Return)) and len(ast.unparse(node)) > 16
    ]
    assert len(statements) >= 6
    for key, string in strings:
        assert "\n" not in string and not CODE.search(string), string
        if key not in (
            "message",
            "named",
        ):  # a mistake's message is the hidden checks' own sentence, which feedback shows anyway
            assert not any(statement in string for statement in statements), string
    assert len(facts["checks"]) == len(assignments.load(ROOT / "source" / name).checks)


def test_nbgrader_releases_the_file():
    assert not any(fnmatch.fnmatch(visible.FILE, pattern) for pattern in IGNORED)


def test_the_positions_file_is_what_its_checks_give_now():
    """The committed numbers are the checks' own: a change of checks.py without `python -m autograder.visible` shows
    here (and in validate, as visible-checks-stale)."""
    committed = json.loads((ROOT / "source" / "positions" / visible.FILE).read_text(encoding="utf-8"))
    assert same(committed, json.loads(visible.text_of(visible.record(ROOT / "source" / "positions"))))
    assert {check: len(entry["calls"]) >= 3 for check, entry in committed["checks"].items()} == {
        "check_rotation_angles": True,
        "check_rotate": True,
        "check_rotated_score": True,
    }
    assert committed["functions"]["rotate"] == {
        "cell": "Write rotate(x, base=10000.0)",
        "calls": ["rotation_angles"],
    }


def test_the_command_writes_the_source_and_the_release_copy(tmp_path, capsys):
    source = tmp_path / "source"
    source.mkdir()
    import shutil

    shutil.copytree(ROOT / "source" / "positions", source / "positions")
    (source / "positions" / visible.FILE).unlink()
    assert visible.main(["--source", str(source), "--assignment", "positions", "--release", str(tmp_path / "rel")]) == 0
    said = capsys.readouterr().out
    assert "check_rotate: " in said and "3 named mistakes recorded" in said
    assert (source / "positions" / visible.FILE).read_bytes() == (
        tmp_path / "rel" / "positions" / visible.FILE
    ).read_bytes()
