"""positions' hidden checks written with the full check API (Check, calls, judges): the test bed of
tests/autograder/validate/test_validate.py, which makes each authoring mistake in a copy of this folder.

The course's own positions assignment is source/positions/ (the same notebook, its checks in the simple tier,
autograder.checks.compare). The yardstick here is that assignment's reference of rotate (source/positions/reference.py:
lib holds no rotate of its own, the store's model's rotary positions are fused inside its attention).
"""

from __future__ import annotations

import numpy as np

from autograder import REPOSITORY, assignments
from autograder.checks import Call, Check, close, describe_call, diagnose, largest_difference, scalar

rotary = assignments.reference(REPOSITORY / "source" / "positions").rotate  # the yardstick: the course's reference

ISOLATE = {"rotated_score": ("rotate",)}  # rotated_score may build on rotate: graded with the reference's while it is


def stand_in(graded: str, name: str):
    if name not in ISOLATE.get(graded, ()):
        raise KeyError(f"{graded} may not call a stand-in for {name}")
    return rotary


def reference_angles(positions: int, size: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin) of the rotation angles, (positions, size // 2): read off the reference's rotate of unit vectors."""
    cos = np.empty((positions, size // 2))
    sin = np.empty((positions, size // 2))
    for pair in range(size // 2):
        unit = np.zeros((positions, size))
        unit[:, pair] = 1.0
        turned = rotary(unit, base)
        cos[:, pair], sin[:, pair] = turned[:, pair], turned[:, size // 2 + pair]
    return cos, sin


# --- check_rotation_angles ----------------------------------------------------------------------------------


WINDOW = 160  # the store's model's window: the checks reach past it, and ask one size again (nothing to remember)


def angles_calls(rng):
    cases = [(int(rng.integers(3, 12)), int(rng.choice([4, 8, 16])), 10000.0), (int(rng.integers(3, 12)), 6, 100.0)]
    cases += [(int(rng.integers(WINDOW - 10, WINDOW + 41)), 8, 10000.0), cases[0]]
    return [Call("rotation_angles", (positions, size), {"base": base}) for positions, size, base in cases]


def angles_values(out):
    for number, call in enumerate(out.calls):
        positions, size = call.args
        actual = out.value(number)
        cos, sin = reference_angles(positions, size, call.kwargs["base"])
        if actual.shape != cos.shape:
            return f"{describe_call(call)} returned shape {actual.shape}, expected (positions, size // 2) = {cos.shape}"
        if not (
            close(np.cos(actual), cos, out.tolerance(number)) and close(np.sin(actual), sin, out.tolerance(number))
        ):
            return diagnose(
                actual,
                [
                    (
                        "the frequencies use i / size: pair i turns by base ** (-2 * i / size)",
                        lambda: np.arange(positions)[:, None] * call.kwargs["base"] ** (-np.arange(size // 2) / size),
                    ),
                ],
                f"{describe_call(call)}: angle[t, i] must be t * base ** (-2 * i / size)",
                out.tolerance(number),
            )
    return None


# --- check_rotate ----------------------------------------------------------------------------------------------


def rotate_calls(rng):
    first = (int(rng.integers(2, 4)), int(rng.integers(3, 9)), 8)
    return [
        Call("rotate", (rng.normal(size=first),)),
        Call("rotate", (rng.normal(size=(5, 6)),), {"base": 100.0}),
        Call("rotate", (rng.normal(size=first),)),  # the first shape again, new values
        Call("rotate", (rng.normal(size=(2, int(rng.integers(WINDOW - 10, WINDOW + 41)), 8)),)),
    ]


def rotate_shape(out):
    for number, call in enumerate(out.calls):
        if out.value(number).shape != call.args[0].shape:
            return f"{describe_call(call)} returned shape {out.value(number).shape}: rotate keeps the shape of x"
    return None


def rotate_values(out):
    for number, call in enumerate(out.calls):
        x, base = call.args[0], call.kwargs.get("base", 10000.0)
        actual, expected = out.value(number), rotary(x, base)
        if not close(actual, expected, out.tolerance(number)):
            half = x.shape[-1] // 2
            cos, sin = reference_angles(x.shape[-2], x.shape[-1], base)
            return diagnose(
                actual,
                [
                    (
                        (
                            "the pairs are interleaved (0, 1), (2, 3): pair i is number i of the first half with number"
                            " i of the second"
                        ),
                        lambda: np.stack(
                            [x[..., 0::2] * cos - x[..., 1::2] * sin, x[..., 0::2] * sin + x[..., 1::2] * cos], axis=-1
                        ).reshape(x.shape),
                    ),
                    (
                        "turned the wrong way: first * cos - second * sin goes first",
                        lambda: np.concatenate(
                            [x[..., :half] * cos + x[..., half:] * sin, -x[..., :half] * sin + x[..., half:] * cos],
                            axis=-1,
                        ),
                    ),
                ],
                f"{describe_call(call)}: {largest_difference(actual, expected)} from the reference's rotate",
                out.tolerance(number),
            )
    return None


# --- check_rotated_score -----------------------------------------------------------------------------------------


def score_calls(rng):
    query, key = rng.normal(size=8), rng.normal(size=8)
    m, n = (int(v) for v in rng.choice(np.arange(1, 20), size=2, replace=False))
    shift = int(rng.integers(3, 9))
    far = int(rng.integers(WINDOW - 10, WINDOW + 41))
    return [
        Call("rotated_score", (query, key, m, n)),
        Call("rotated_score", (query, key, m + shift, n + shift)),
        Call("rotated_score", (query, key, n, m)),
        Call("rotated_score", (rng.normal(size=8), rng.normal(size=8), m, n)),  # the same positions, new vectors
        Call("rotated_score", (query, key, far, far - m)),
    ]


def expected_score(query, key, m, n, base=10000.0) -> float:
    positions = max(m, n) + 1
    queries, keys = np.zeros((positions, query.size)), np.zeros((positions, key.size))
    queries[m], keys[n] = query, key
    return float(rotary(queries, base)[m] @ rotary(keys, base)[n])


def score_values(out):
    for number, call in enumerate(out.calls):
        actual = scalar(out.value(number), describe_call(call))
        expected = expected_score(*call.args)
        if not close(actual, expected, out.tolerance(number)):
            return (
                f"{describe_call(call)} = {float(actual):.6g}, expected {expected:.6g}: rotate the query as at m, the"
                " key as at n"
            )
    return None


def score_relative(out):
    first, shifted = (scalar(out.value(n), describe_call(out.calls[n])) for n in (0, 1))
    if not close(first, shifted, out.tolerance(0)):
        return (
            "moving both positions by the same amount changed the score: it must depend only on m - n "
            "(rotate each vector by its own position's angles)"
        )
    return None


CHECKS = {
    check.check_id: check
    for check in [
        Check("check_rotation_angles", "rotation_angles", 1, angles_calls, (("values", angles_values),)),
        Check("check_rotate", "rotate", 2, rotate_calls, (("shape", rotate_shape), ("values", rotate_values))),
        Check(
            "check_rotated_score",
            "rotated_score",
            2,
            score_calls,
            (("values", score_values), ("depends on m - n only", score_relative)),
        ),
    ]
}

TURNED_BACK = """def rotate(x, base=10000.0):
    x = np.asarray(x, dtype=float)
    half = x.shape[-1] // 2
    angles = rotation_angles(x.shape[-2], x.shape[-1], base)
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos + second * sin, -first * sin + second * cos], axis=-1)
"""
WRONG_VERSIONS = {  # graded by python -m autograder.validate: each must lose exactly these points, on every seed
    # the values, not the shape; rotated_score is graded with the reference's rotate (ISOLATE), so it keeps its 2
    "turns the wrong way": {"answers": {"rotate": TURNED_BACK}, "loses": {"check_rotate": 1}},
}
