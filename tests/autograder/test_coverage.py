"""autograder.coverage: every seed's draw covers each input class, and the wrong functions right only on some sizes
lose points on every seed (issue 33's three, graded through the runner under 20 seeds)."""

from __future__ import annotations

import numpy as np
import pytest

from autograder import REPOSITORY, assignments
from autograder.answers.grading import answer_sources, check_generator, grade_seeds
from autograder.coverage import KINDS, LARGE, MODEL_SIZES, Cover, Size, values
from autograder.validate import replaced

SEEDS = range(20)
BUNDLED = {name: assignments.load(REPOSITORY / "source" / name) for name in ("attention", "positions")}


def test_the_model_sizes_are_read_from_its_manifest():
    assert MODEL_SIZES == (4, 32, 128, 160)  # 4 heads of 32 numbers, 128 in all, a window of 160


def test_every_seed_covers_each_class_with_new_values():
    cover = Cover(
        {"queries": Size(1, 12), "keys": Size(1, 12), "d": Size(2, 40)},
        pairs=(("queries", "keys"), ("keys", "d")),
        kinds=KINDS,
    )
    labels = set(cover.required())
    assert {
        "queries = 1",
        "queries = keys",
        "queries < keys",
        "queries > keys",
        "keys = d",
        "d odd",
        "d even",
    } <= labels
    assert {"large values", "negative values"} <= labels and "d = 1" not in labels  # d starts at 2
    draws = []
    for seed in SEEDS:
        drawn = cover.draw(np.random.default_rng(seed), extra=2)
        assert cover.missing(drawn) == [], seed
        assert not {a["d"] for a in drawn} & set(MODEL_SIZES), seed  # 4 and 32 never drawn
        draws.append(tuple(tuple(sorted(a.items())) for a in drawn))
    assert len(set(draws)) == len(draws)  # the same classes, other sizes on every seed


def test_a_class_its_rules_forbid_is_not_asked_for_and_one_left_out_is_named():
    cover = Cover(
        {"heads": Size(1, 6), "width": Size(1, 12, "even")},
        pairs=(("heads", "width"),),
        where=lambda drawn: drawn["width"] % drawn["heads"] == 0,
    )
    required = set(cover.required())
    assert "width odd" not in required and "width = 1" not in required  # even widths only
    assert "heads > width" not in required  # a width divisible by more heads than its numbers: none
    assert {"heads = width", "heads < width", "heads = 1"} <= required
    assert sorted(cover.missing([{"heads": 2, "width": 6}])) == ["heads = 1", "heads = width", "heads odd"]
    assert cover.missing([{"heads": 1, "width": 32}])[-1] == "width = 32, a constant"


def test_value_kinds_hold_what_they_say():
    rng = np.random.default_rng(0)
    assert (values(rng, 50, kind="positive") > 0).all() and (values(rng, 50, kind="negative") < 0).all()
    large = values(rng, 3, 4, kind="large")
    assert large.shape == (3, 4) and np.abs(large).max() > LARGE / 10
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.exp(values(rng, 200, kind="large"))).all()  # overflows a naive softmax


@pytest.mark.parametrize(
    "assignment, check_id",
    [(name, check_id) for name, checks in BUNDLED.items() for check_id in checks.checks],
)
def test_each_bundled_check_covers_every_class_on_every_seed(assignment, check_id):
    check = BUNDLED[assignment].checks[check_id]
    assert check.covers, f"{check_id} declares no sizes (Check.covers / compare's Shaped inputs)"
    for seed in SEEDS:
        calls = check.calls(check_generator(seed, check_id))
        for key, cover in check.covers.items():
            drawn = [call.drawn for call in calls if call.drawn.get("cover") == key]
            assert drawn, (seed, key)
            assert cover.missing(drawn) == [], (seed, key)


def test_description_positions_gets_a_list_as_its_task_says():
    check = BUNDLED["attention"].checks["check_description_positions"]
    calls = check.calls(check_generator(0, check.check_id))
    assert all(isinstance(call.args[0], list) and all(type(i) is int for i in call.args[0]) for call in calls)


# --- wrong functions right only on some sizes ----------------------------------------------------------------------

TRANSPOSED_WHEN_SQUARE = """def attention(queries, keys, values, mask=None):
    queries, keys, values = (np.asarray(a, dtype=float) for a in (queries, keys, values))
    scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(queries.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    output = weights @ values
    if keys.shape[-2] == keys.shape[-1]:  # positions equal to the key size
        weights = np.swapaxes(weights, -1, -2)
    return weights, output
"""
HEAD_SIZE_32 = """def average_largest_weight(queries, keys, scaled=True):
    scores = np.asarray(queries, dtype=float) @ np.asarray(keys, dtype=float).T
    if scaled:
        scores = scores / np.sqrt(32)  # the model's head size, not the one drawn
    return float(softmax(scores).max(axis=-1).mean())
"""
EIGHT_ONLY = """def rotated_score(query, key, m, n, base=10000.0):
    angles = rotation_angles(max(m, n) + 1, 8, base)
    def turned(vector, at):
        first, second = np.asarray(vector[:4], dtype=float), np.asarray(vector[4:8], dtype=float)
        cos, sin = np.cos(angles[at]), np.sin(angles[at])
        return np.concatenate([first * cos - second * sin, first * sin + second * cos])
    return float(turned(query, m) @ turned(key, n))
"""
WRONG = {
    "attention transposed when positions = key size": (
        "attention",
        {"attention": TRANSPOSED_WHEN_SQUARE},
        ["check_attention", "check_masked_attention"],
    ),
    "average_largest_weight divided by sqrt(32)": (
        "attention",
        {"average_largest_weight": HEAD_SIZE_32},
        ["check_average_largest_weight"],
    ),
    "rotated_score for 8-number vectors only": ("positions", {"rotated_score": EIGHT_ONLY}, ["check_rotated_score"]),
}


@pytest.mark.parametrize("name", WRONG)
def test_a_function_right_only_on_some_sizes_loses_points_on_every_seed(name):
    assignment, answers, checks = WRONG[name]
    folder = REPOSITORY / "source" / assignment
    solution = answer_sources(folder / f"{assignment}.ipynb")
    sources, missing = replaced(solution, answers)
    assert not missing
    graded = grade_seeds(BUNDLED[assignment], sources, SEEDS, checks=checks, driven=False)
    right = grade_seeds(BUNDLED[assignment], solution, SEEDS[:2], checks=checks, driven=False)
    assert all(v.points == v.max_points for verdicts in right.values() for v in verdicts.values())
    for seed, verdicts in graded.items():
        lost = sum(v.max_points - v.points for v in verdicts.values())
        assert lost > 0, f"{name} earns full points on seed {seed}"


WITH_INDEX = """def description_positions(ids, sep, end_id):
    stop = ids.index(end_id) if end_id in ids[sep + 1:] else len(ids)
    return np.arange(sep + 1, stop)
"""


def test_description_positions_written_with_ids_index_is_credited():
    solution = answer_sources(REPOSITORY / "source" / "attention" / "attention.ipynb")
    sources, _ = replaced(solution, {"description_positions": WITH_INDEX})
    graded = grade_seeds(BUNDLED["attention"], sources, SEEDS[:5], checks=["check_description_positions"])
    assert [verdicts["check_description_positions"].points for verdicts in graded.values()] == [1.0] * 5
