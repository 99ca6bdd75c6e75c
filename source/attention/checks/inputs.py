"""How the checks draw their inputs at grading time: sizes apart from each other and from the model's constants,
the designed sizes of a cover, random causal patterns; and ``ref``, the reference (reference.py), which every section
reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder import assignments
from autograder.coverage import MODEL_SIZES

ref = assignments.reference(Path(__file__).parent.parent)  # reference.py: the answer key, loaded here, never released


# --- inputs drawn at grading time ---------------------------------------------------------------


def normal(rng, *shape, scale=1.0) -> np.ndarray:
    return rng.normal(0.0, scale, shape)


def sizes(rng, low, high, count, avoid=()) -> list[int]:
    """``count`` different integers in low..high (inclusive), none of them in ``avoid``, in random order.

    ``avoid`` keeps a drawn size apart from the other sizes of the same call (the number of keys from d, a value
    width from the key width): a mistake that swaps two sizes then changes a shape or a value on every draw,
    not only on the draws where the two sizes differ. No size is a constant of the model (coverage.MODEL_SIZES)
    unless the range holds too few others.
    """
    choices = np.setdiff1d(np.arange(low, high + 1), np.asarray(avoid, dtype=int))
    kept = np.setdiff1d(choices, np.asarray(MODEL_SIZES, dtype=int))  # no constant of the model, where others are left
    choices = kept if kept.size >= count else choices
    return [int(x) for x in rng.choice(choices, size=count, replace=False)]


WINDOW = 160  # the store's model's window (lib.transformer): the checks reach it and go beyond


def window_size(rng) -> int:
    """A number of positions past the model's window: WINDOW + 1 .. WINDOW + 24 (one head of this size is
    enough to show a function that is right only on the sizes it expects; more would only cost time)."""
    return int(rng.integers(WINDOW + 1, WINDOW + 25))


def designed(rng, covers: dict, key: str, extra: int = 0) -> list[dict]:
    """The sizes of ``covers[key]`` that cover every class on this seed (coverage.Cover.draw), each marked with its
    key so that a call made of it says which cover it belongs to (Call.drawn)."""
    return [{"cover": key, **sizes} for sizes in covers[key].draw(rng, extra)]


def window_pattern_case(rng):
    """(pattern, sep, queries) of one head over a text at or past the model's window."""
    positions, sep = window_size(rng), int(rng.integers(2, 6))
    return causal_pattern(rng, 1, positions), sep, np.arange(sep + 1, positions)


def causal_pattern(rng, heads, positions) -> np.ndarray:
    """A random attention pattern (heads, T, T): causal rows that sum to one, peaked like a trained head's."""
    scores = normal(rng, heads, positions, positions, scale=2.0)
    return ref.softmax(np.where(ref.causal_mask(positions), scores, -np.inf))


def softmax_along(scores, axis, shift=True) -> np.ndarray:
    """Softmax over ``axis``, its maximum subtracted first (shift=False: exp of the scores as they are)."""
    exps = np.exp(scores - scores.max(axis=axis, keepdims=True) if shift else scores)
    return exps / exps.sum(axis=axis, keepdims=True)
