"""Section 9, what goes wrong in production: check_safe_softmax."""

from __future__ import annotations

import numpy as np

from autograder.checks import (
    Call,
    Check,
    checks_by_id,
    close,
    describe_call,
    largest_difference,
    require_shape,
)
from autograder.coverage import values

from .inputs import (
    designed,
    normal,
    ref,
    sizes,
    window_size,
)
from .weights import (
    SCORES,
    near_1000,
    overflow_message,
    softmax_values,
)

# --- check_safe_softmax -------------------------------------------------------------------------------


SAFE_COVERS = {"scores": SCORES}


def safe_softmax_calls(rng):
    rows, width = sizes(rng, 4, 8, 2)
    masked = normal(rng, rows, width)
    masked[rng.random((rows, width)) < 0.3] = -np.inf
    masked[:, 0] = np.where(np.isneginf(masked).all(1), 0.0, masked[:, 0])  # every row keeps a finite entry ...
    empty = rng.choice(rows, size=2, replace=False)
    masked[empty] = -np.inf  # ... except two fully masked rows
    a, b, n = sizes(rng, 2, 6, 3)
    window = window_size(rng)
    causal = np.where(ref.causal_mask(window), normal(rng, window, window, scale=2.0), -np.inf)
    return [
        Call("safe_softmax", (near_1000(rng, width, rows),), role="near 1000"),
        Call("safe_softmax", (masked,), role="masked"),
        *[Call("safe_softmax", (normal(rng, a, b, n, scale=2.0),), role="random") for _ in range(2)],
        Call("safe_softmax", (causal,), role="random"),  # a causal head's scores over the model's window
        *[
            Call(
                "safe_softmax", (values(rng, d["rows"], d["width"], kind=d["kind"], scale=2.0),), role="random", drawn=d
            )
            for d in designed(rng, SAFE_COVERS, "scores")
        ],
    ]


def safe_overflow(out):
    number = out.number("near 1000")
    scores, actual = out.arg(number), out.value(number)
    overflow = overflow_message(scores, actual)
    if overflow:
        return overflow
    if not close(actual, ref.softmax(scores), out.tolerance(number)):
        return f"on scores near 1000 the weights are wrong ({largest_difference(actual, ref.softmax(scores))})"
    return None


def safe_fully_masked(out):
    number = out.number("masked")
    scores, actual = out.arg(number), out.value(number)
    require_shape(actual, scores.shape, describe_call(out.calls[number]))
    empty = np.isneginf(scores).all(-1)
    rows = actual[empty]
    if np.isnan(rows).any():
        return (
            "a fully masked row (all -inf) gives NaN: -inf - (-inf) is NaN; give such a row all-zero weights "
            "(it attends to nothing)"
        )
    if close(rows, np.full(rows.shape, 1 / scores.shape[-1]), out.tolerance(number)):
        return "a fully masked row gets 1/n everywhere: it attends to nothing, so all its weights are 0.0"
    if not (rows == 0.0).all():
        return f"a fully masked row gets weights up to {np.abs(rows).max():.3g}: all its weights must be exactly 0.0"
    return None


def safe_values(out):
    masked = out.number("masked")
    scores, actual = out.arg(masked), out.value(masked)
    require_shape(actual, scores.shape, describe_call(out.calls[masked]))
    visible = ~np.isneginf(scores).all(-1)
    if not close(actual[visible], ref.softmax(scores)[visible], out.tolerance(masked)):
        return "rows with at least one visible score are wrong: softmax over the finite entries, -inf entries get 0.0"
    return softmax_values(out)  # on rows with nothing masked, a safe softmax is a softmax


CHECKS = checks_by_id(
    Check(
        "check_safe_softmax",
        "safe_softmax",
        2,
        safe_softmax_calls,
        (
            ("no overflow", safe_overflow),
            ("fully masked row -> zeros", safe_fully_masked),
            ("values", safe_values),
        ),
        SAFE_COVERS,
    ),
)
