"""The reference of layer_norm, the answer key: each graded function written once, under its name.

Read by checks.py (``ref``), in the grader's process only; never released, never in the student wheel.
"""

from __future__ import annotations

import numpy as np


def layer_norm(x, gain, bias, eps=1e-5):
    """Each row of x (its last axis) to mean 0 and variance 1, then scaled by gain and shifted by bias."""
    mean, variance = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * gain + bias


def rms_norm(x, gain, eps=1e-5):
    """Each row of x divided by its root mean square, then scaled by gain: no centring, no bias."""
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps) * gain


def residual_block(x, f):
    """The residual stream: x plus what the block f computes from it."""
    return x + f(x)
