"""The positions assignment's reference: the one written definition of each graded function, never handed out.

The answer key, beside ``checks.py`` and, like it, never released (nbgrader's CourseDirectory.ignore), never in the
student wheel (packaging/student_wheel.py refuses a module that defines one of these names); the grader loads it
with ``autograder.assignments.reference``. Each turns vectors the way the store's model does (its rotary
positions inside every head: tests/autograder/test_assignments.py holds them to lib's model).

Arrays are float64; a vector's pairs are number i of its first half with number i of its second half.
"""

from __future__ import annotations

import numpy as np


def rotation_angles(positions, size, base=10000.0):
    """(positions, size // 2): pair i at position t turns by t * base ** (-2 i / size)."""
    frequencies = base ** (-np.arange(0, size, 2) / size)  # (size // 2,)
    return np.arange(positions)[:, None] * frequencies[None, :]  # (positions, size // 2)


def rotate(x, base=10000.0):
    """x (..., T, size) with pair i turned by its angle at each position: (a, b) -> (a cos - b sin, a sin + b cos)."""
    x = np.asarray(x, dtype=np.float64)
    angles = rotation_angles(x.shape[-2], x.shape[-1], base)  # (T, size // 2)
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = np.split(x, 2, axis=-1)  # (..., T, size // 2) each
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)


def rotated_score(query, key, m, n, base=10000.0):
    """query rotated as at position m, dotted with key rotated as at position n: one number, a function of m - n."""
    positions = max(m, n) + 1
    queries, keys = np.zeros((positions, len(query))), np.zeros((positions, len(key)))  # (positions, size)
    queries[m], keys[n] = query, key
    return float(rotate(queries, base)[m] @ rotate(keys, base)[n])
