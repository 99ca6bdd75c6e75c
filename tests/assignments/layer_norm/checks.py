"""The hidden checks of layer_norm (layer norm, RMS norm, the residual stream) in the simple tier, against
reference.py: scaffolded by python -m autograder.course.scaffold, filled in as docs/authoring.md says."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder import assignments
from autograder.checks import checks_by_id, compare

ref = assignments.reference(Path(__file__).parent)  # reference.py: the answer key, never released

# --- the inputs: rows with their own offset and spread, so that each mistake shows on every draw ----------------


def features(rng, *leading, spread=(0.5, 3.0)):
    """x of shape (*leading, d), each row around its own offset, and a gain and a bias of d numbers."""
    d = int(rng.integers(4, 17))
    x = rng.normal(rng.normal(0, 3, (*leading, 1)), rng.uniform(*spread, (*leading, 1)), (*leading, d))
    return x, rng.normal(1.0, 0.3, d), rng.normal(0.0, 0.5, d)


def matrix(rng):  # (rows, d), eps too small to matter
    return (*features(rng, int(rng.integers(3, 7))), 1e-12)


def sequences(rng):  # (batch, T, d): the statistics are each row's, whatever the leading axes
    return (*features(rng, int(rng.integers(2, 4)), int(rng.integers(3, 6))), 1e-12)


def flat_rows(rng):  # rows whose variance is as small as eps: where eps decides the result
    return (*features(rng, int(rng.integers(3, 7)), spread=(0.05, 0.3)), float(rng.uniform(0.05, 0.5)))


def stream(rng):  # x (T, d) or (batch, T, d), and f: a small layer of weights drawn here, run by the grader
    x = rng.normal(size=(*(int(n) for n in rng.integers(2, 6, size=int(rng.integers(1, 3)))), int(rng.integers(3, 9))))
    weights = rng.normal(size=(x.shape[-1], x.shape[-1]))
    return x, lambda v: np.tanh(np.asarray(v, dtype=float) @ weights)


def drop_bias(draw):  # rms_norm's inputs: layer_norm's, without the bias
    return lambda rng: tuple(value for n, value in enumerate(draw(rng)) if n != 2)


# --- the mistakes a verdict names --------------------------------------------------------------------------------


def normed(x, eps, axis=-1, centre=True, ddof=0, inside=True, square=np.mean):
    """x centred (or not) over ``axis`` and divided by the root of its mean square and eps: the mistakes below."""
    centred = x - x.mean(axis, keepdims=True) if centre else x
    spread = square(centred**2, axis=axis, keepdims=True) * x.shape[axis] / (x.shape[axis] - ddof)
    return centred / (np.sqrt(spread + eps) if inside else np.sqrt(spread) + eps)


BATCH = "the variance is taken over axis 0 (as batch norm does): normalise each row over its features, axis=-1"
NO_EPS = "ignores eps: add it to the variance inside the square root, np.sqrt(variance + eps)"
OUTSIDE = "adds eps after the square root: it goes inside, np.sqrt(variance + eps)"
LAYER_NORM_MISTAKES = {
    BATCH: lambda x, gain, bias, eps: normed(x, eps, axis=0) * gain + bias,
    "takes the statistics over axis 1: use axis=-1, the last axis, whatever the leading axes": (
        lambda x, gain, bias, eps: normed(x, eps, axis=1) * gain + bias
    ),
    NO_EPS: lambda x, gain, bias, eps: normed(x, 0.0) * gain + bias,
    OUTSIDE: lambda x, gain, bias, eps: normed(x, eps, inside=False) * gain + bias,
    "divides by d - 1 (ddof=1): the variance is the mean of the squared deviations": (
        lambda x, gain, bias, eps: normed(x, eps, ddof=1) * gain + bias
    ),
    "swaps gain and bias: scale by gain, then add bias": lambda x, gain, bias, eps: ref.layer_norm(x, bias, gain, eps),
}
RMS_NORM_MISTAKES = {
    "subtracts the mean (that is layer norm): divide x itself by its root mean square": (
        lambda x, gain, eps: ref.layer_norm(x, gain, 0.0, eps)
    ),
    BATCH.replace("variance", "mean square"): lambda x, gain, eps: normed(x, eps, axis=0, centre=False) * gain,
    NO_EPS.replace("variance", "mean square"): lambda x, gain, eps: normed(x, 0.0, centre=False) * gain,
    OUTSIDE: lambda x, gain, eps: normed(x, eps, centre=False, inside=False) * gain,
    "divides by the root of the sum of squares: use their mean": (
        lambda x, gain, eps: normed(x, eps, centre=False, square=np.sum) * gain
    ),
}

CHECKS = checks_by_id(
    compare(
        "check_layer_norm",
        ref.layer_norm,
        points=3,
        inputs={"rows of a matrix": matrix, "a batch of sequences": sequences, "eps inside the square root": flat_rows},
        mistakes=LAYER_NORM_MISTAKES,
    ),
    compare(
        "check_residual_block",
        ref.residual_block,
        points=2,
        inputs={"adds f's output to x": stream},
        mistakes={"returns f(x) alone: the stream keeps x and adds f's output, x + f(x)": lambda x, f: f(x)},
        properties={"keeps x's shape": lambda out, x, f: None if out.shape == x.shape else f"shape {out.shape}"},
    ),
    compare(
        "check_rms_norm",
        ref.rms_norm,
        points=2,
        inputs={"rows of a matrix": drop_bias(matrix), "eps inside the square root": drop_bias(flat_rows)},
        mistakes=RMS_NORM_MISTAKES,
    ),
)

WRONG_VERSIONS = {  # graded by python -m autograder.validate: each must lose exactly these points, on every seed
    "forgets eps": {  # both norms: only the property whose rows are as flat as eps sees it
        "answers": {
            "layer_norm": "def layer_norm(x, gain, bias, eps=1e-5):\n    return (x - x.mean(-1)[..., None]) / "
            "x.std(-1)[..., None] * gain + bias\n",
            "rms_norm": "def rms_norm(x, gain, eps=1e-5):\n    return x / np.sqrt((x**2).mean(-1)[..., None]) * gain\n",
        },
        "loses": {"check_layer_norm": 1, "check_rms_norm": 1},
    },
    "variance over axis 0 as batch norm does": {  # every property of layer_norm, nothing else
        "answers": {
            "layer_norm": "def layer_norm(x, gain, bias, eps=1e-5):\n    return (x - x.mean(0)) / "
            "np.sqrt(x.var(0) + eps) * gain + bias\n"
        },
        "loses": {"check_layer_norm": 3},
    },
    "residual_block returns f(x) without adding x": {  # f(x) keeps x's shape: only the values are wrong
        "answers": {"residual_block": "def residual_block(x, f):\n    return f(x)\n"},
        "loses": {"check_residual_block": 1},
    },
}
