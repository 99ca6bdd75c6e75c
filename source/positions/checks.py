"""The hidden checks of positions: rotary positions, how the store's model gives attention the order of the tokens,
in the simple tier (autograder.checks.compare). This file and reference.py beside it are never released.

Each function is compared with its reference (reference.py, the store's model's rotation) on inputs drawn at
grading time, up to and past the model's window of 160 positions. While rotate is graded it calls the reference
rotation_angles, and rotated_score the reference rotate (ISOLATE), so that one mistake costs one function's points.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder import assignments
from autograder.checks import Args, Shaped, checks_by_id, compare
from autograder.coverage import KINDS, Cover, Size, values

ref = assignments.reference(Path(__file__).parent)  # reference.py, loaded in the grader's process
WINDOW = 160  # the store's model's window: inputs reach past it
ISOLATE = {"rotate": ("rotation_angles",), "rotated_score": ("rotate", "rotation_angles")}


def stand_in(graded: str, name: str):
    """What a graded function calls while it is graded, in place of the student's own (ISOLATE): the reference."""
    if name not in ISOLATE.get(graded, ()):
        raise KeyError(f"{graded} may not call a stand-in for {name}")
    return getattr(ref, name)


# --- the inputs: declared sizes, so that every seed covers each class (autograder.coverage) -------------------------

# A vector's size is 2 * half (its pairs): half is drawn odd and even, 1 (one pair), never 4 (the notebook's own
# vectors have 8 numbers, TASK_SIZE, and the model has 4 heads): a function written for 8-number vectors loses.
TASK_SIZE = 8
NEAR = Size(WINDOW - 10, WINDOW + 40)  # up to and past the model's window (WINDOW itself avoided, a model constant)
HALF = Size(1, 9)
AVOID = (TASK_SIZE, TASK_SIZE // 2)
TASK_SIZES = (TASK_SIZE,)  # python -m autograder.validate puts it in for computed sizes, as it does the model's
SIZE = {"size": lambda drawn: 2 * drawn["half"]}  # a vector's numbers, compared with the positions


def a_few_positions(rng, positions, half, size):  # a handful of positions, the default base
    return positions, size


def past_the_window(rng, positions, half, size):  # up to and past the model's window, another base
    return Args(positions, size, base=100.0)


def a_sequence(rng, positions, half, size, kind):  # one sequence (T, size), the default base
    return (values(rng, positions, size, kind=kind),)


def a_batch_past_the_window(rng, batch, positions, half, size):  # (batch, T, size) past the window, another base
    return Args(values(rng, batch, positions, size), base=100.0)


def two_positions(rng, half, m, n, size, kind):  # two positions in the window, in either order or the same
    return values(rng, size, kind=kind), values(rng, size, kind=kind), m, n


def far_positions(rng, half, m, n, size):  # past the window, a few positions apart, in either order
    return values(rng, size), values(rng, size), m, n


ANGLES_INPUTS = {
    "a few positions": Shaped(
        a_few_positions,
        Cover(
            {"positions": Size(1, 12), "half": HALF},
            pairs=(("positions", "half"), ("positions", "size")),
            avoid=AVOID,
            derived=SIZE,
        ),
    ),
    "past the model's window, another base": Shaped(
        past_the_window, Cover({"positions": NEAR, "half": HALF}, avoid=AVOID, derived=SIZE), extra=0
    ),
}
ROTATE_INPUTS = {
    "one sequence": Shaped(
        a_sequence,
        Cover(
            {"positions": Size(1, 12), "half": HALF},
            pairs=(("positions", "half"), ("positions", "size")),
            kinds=KINDS,
            avoid=AVOID,
            derived=SIZE,
        ),
    ),
    "a batch past the model's window, another base": Shaped(
        a_batch_past_the_window,
        Cover({"batch": Size(1, 3), "positions": NEAR, "half": Size(1, 6)}, avoid=AVOID, derived=SIZE),
        extra=0,
    ),
}
SCORE_INPUTS = {
    "two positions in the window": Shaped(
        two_positions,
        Cover(
            {"half": HALF, "m": Size(0, 20), "n": Size(0, 20)},
            pairs=(("m", "n"), ("size", "m"), ("size", "n")),
            kinds=KINDS,
            avoid=AVOID,
            derived=SIZE,
        ),
    ),
    "two positions past the window": Shaped(
        far_positions,
        Cover(
            {"half": HALF, "m": NEAR, "n": NEAR},
            pairs=(("m", "n"),),
            where=lambda sizes: abs(sizes["m"] - sizes["n"]) <= 8,
            avoid=AVOID,
            derived=SIZE,
        ),
        extra=0,
    ),
}


# --- the mistakes a verdict names ----------------------------------------------------------------------------


def turned(x, base, interleaved=False, sign=1.0):
    """x turned by the reference angles: its halves paired (or neighbours, interleaved), one way or the other."""
    x = np.asarray(x, dtype=float)
    cos, sin = (f(ref.rotation_angles(x.shape[-2], x.shape[-1], base)) for f in (np.cos, np.sin))
    if interleaved:
        first, second = x[..., 0::2], x[..., 1::2]
        return np.stack([first * cos - sign * second * sin, sign * first * sin + second * cos], -1).reshape(x.shape)
    first, second = np.split(x, 2, axis=-1)
    return np.concatenate([first * cos - sign * second * sin, sign * first * sin + second * cos], axis=-1)


def positioned(query, key, m, n, base, turn_key=True):
    """The score with each vector rotated as at the given positions (the key left as it is unless turn_key)."""
    width = max(m, n) + 1
    queries, keys = np.zeros((width, len(query))), np.zeros((width, len(key)))
    queries[m], keys[n] = query, key
    return float(ref.rotate(queries, base)[m] @ (ref.rotate(keys, base) if turn_key else keys)[n])


ANGLES_MISTAKES = {
    "the frequencies use i / size: pair i turns by base ** (-2 * i / size)": (
        lambda positions, size, base=10000.0: np.arange(positions)[:, None] * base ** (-np.arange(size // 2) / size)
    ),
    "the positions start at 1: the first position does not turn, its angles are 0": (
        lambda positions, size, base=10000.0: ref.rotation_angles(positions + 1, size, base)[1:]
    ),
    "divides by the frequency: angle[t, i] = t * base ** (-2 * i / size), a negative power": (
        lambda positions, size, base=10000.0: np.arange(positions)[:, None] * base ** (np.arange(0, size, 2) / size)
    ),
    "ignores base: use the base given": lambda positions, size, base=10000.0: ref.rotation_angles(positions, size),
}
ROTATE_MISTAKES = {
    "the pairs are interleaved (0, 1), (2, 3): pair i is number i of the first half with number i of the second": (
        lambda x, base=10000.0: turned(x, base, interleaved=True)
    ),
    "turned the wrong way: (a, b) -> (a cos - b sin, a sin + b cos)": lambda x, base=10000.0: turned(x, base, sign=-1),
    "ignores base: use the base given": lambda x, base=10000.0: ref.rotate(x),
}
SCORE_MISTAKES = {
    "the positions are swapped: rotate the query as at m and the key as at n": (
        lambda query, key, m, n, base=10000.0: ref.rotated_score(query, key, n, m, base)
    ),
    "only the query is rotated: rotate the key as at n too": (
        lambda query, key, m, n, base=10000.0: positioned(query, key, m, n, base, turn_key=False)
    ),
    "nothing is rotated: the score of rotated vectors depends on m - n": (
        lambda query, key, m, n, base=10000.0: float(query @ key)
    ),
}

CHECKS = checks_by_id(
    compare(
        "check_rotation_angles",
        ref.rotation_angles,
        points=1,
        inputs=ANGLES_INPUTS,
        mistakes=ANGLES_MISTAKES,
    ),
    compare(
        "check_rotate",
        ref.rotate,
        points=2,
        inputs=ROTATE_INPUTS,
        mistakes=ROTATE_MISTAKES,
    ),
    compare(
        "check_rotated_score",
        ref.rotated_score,
        points=2,
        inputs=SCORE_INPUTS,
        mistakes=SCORE_MISTAKES,
    ),
)

INTERLEAVED = """def rotate(x, base=10000.0):
    x = np.asarray(x, dtype=float)
    angles = rotation_angles(x.shape[-2], x.shape[-1], base)
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = x[..., 0::2], x[..., 1::2]
    return np.stack([first * cos - second * sin, first * sin + second * cos], axis=-1).reshape(x.shape)
"""
WRONG_VERSIONS = {  # graded by python -m autograder.validate: each must lose exactly these points
    "interleaved pairs": {"answers": {"rotate": INTERLEAVED}, "loses": {"check_rotate": 2}},
    "ignores base": {
        "answers": {
            "rotation_angles": (
                "def rotation_angles(positions, size, base=10000.0):\n"
                "    return np.arange(positions)[:, None] * 10000.0 ** (-np.arange(0, size, 2) / size)\n"
            )
        },
        "loses": {"check_rotation_angles": 0.5},
    },
}

PAIRS = "a vector's numbers come in pairs (the task): its size is even, never 1 or odd"
EQUIVALENT_MUTANTS = {  # python -m autograder.validate: mutants of reference.py that no input of the task tells apart
    "rotation_angles: wrong only when size = 1": PAIRS,
    "rotation_angles: wrong only when size odd": PAIRS,
    "rotate: wrong only when x.shape[-1] = 1": PAIRS,
    "rotate: wrong only when x.shape[-1] odd": PAIRS,
    "rotated_score: wrong only when query.shape[-1] = 1": PAIRS,
    "rotated_score: wrong only when query.shape[-1] odd": PAIRS,
    "rotated_score: positions = max(m, n) + 1 -> positions = max(m, n) + 2": (
        "one more position after m and n turns no row the score reads: rows m and n are turned the same"
    ),
}
