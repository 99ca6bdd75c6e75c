"""Section 3, scaling the scores by sqrt(d): check_average_largest_weight."""

from __future__ import annotations

import numpy as np

from autograder.checks import (
    Call,
    Check,
    checks_by_id,
    close,
    describe_call,
    diagnose,
    scalar,
)
from autograder.coverage import Cover, Size

from .inputs import (
    designed,
    normal,
    ref,
    sizes,
    window_size,
)

# --- check_average_largest_weight -------------------------------------------------------------------


LARGEST_COVERS = {
    "queries, keys": Cover(
        {"queries": Size(1, 12), "keys": Size(1, 12), "d": Size(1, 64)},
        pairs=(("queries", "keys"), ("keys", "d"), ("queries", "d")),
    )
}


def average_largest_weight_calls(rng):
    """Queries and keys of one shape, scaled by default, scaled and unscaled, and over the model's window; then the
    designed sizes, each scaled and unscaled (one query or key, as many queries as keys and not, d never the head
    size of the model, so that a function that divides by sqrt(32) loses on every seed)."""
    queries, keys = sizes(rng, 4, 12, 2)
    (d,) = sizes(rng, 12, 64, 1)
    q, k = normal(rng, queries, d), normal(rng, keys, d)
    other_q, other_k = normal(rng, keys, d), normal(rng, queries, d)
    window = window_size(rng)
    return [
        Call("average_largest_weight", (q, k), role="scaled by default"),
        Call("average_largest_weight", (other_q, other_k), {"scaled": True}, role="scaled"),
        Call(
            "average_largest_weight", (normal(rng, queries, d), normal(rng, keys, d)), {"scaled": True}, role="scaled"
        ),
        Call("average_largest_weight", (normal(rng, window, d), normal(rng, window, d)), role="scaled by default"),
        Call("average_largest_weight", (q, k), {"scaled": False}, role="unscaled"),
        Call(
            "average_largest_weight",
            (normal(rng, queries, d), normal(rng, keys, d)),
            {"scaled": False},
            role="unscaled",
        ),
        *[
            Call(
                "average_largest_weight",
                (normal(rng, drawn["queries"], drawn["d"]), normal(rng, drawn["keys"], drawn["d"])),
                {"scaled": scaled},
                role="scaled" if scaled else "unscaled",
                drawn=drawn,
            )
            for drawn in designed(rng, LARGEST_COVERS, "queries, keys")
            for scaled in (True, False)
        ],
    ]


def largest_weight_variants(q, k, scaled):
    scores = q @ k.T
    d = q.shape[-1]
    right = scores / np.sqrt(d) if scaled else scores
    wrong = scores if scaled else scores / np.sqrt(d)
    return [
        (
            (
                "took each key's largest weight (max down a column, axis 0): take each query's largest weight (max over"
                " its row)"
            ),
            lambda: ref.softmax(right).max(axis=0).mean(),
        ),
        (
            (
                "the result ignores `scaled`: divide by sqrt(d) only when scaled is True"
                if scaled is False
                else "the scores are not divided by sqrt(d) when scaled is True"
            ),
            lambda: ref.softmax(wrong).max(axis=-1).mean(),
        ),
        ("the scores are divided by d, not by sqrt(d)", lambda: ref.softmax(scores / d).max(axis=-1).mean()),
        (
            "averaged every weight (always 1 / keys): average each row's largest weight",
            lambda: ref.softmax(right).mean(),
        ),
        ("averaged the largest scores, not the largest softmax weights", lambda: right.max(axis=-1).mean()),
    ]


def largest_weight_judge(roles, scaled):
    def judge(out):
        for number in out.numbers(*roles):
            q, k = out.calls[number].args
            actual = scalar(out.value(number), describe_call(out.calls[number]))
            scores = ref.scaled_scores(q, k, scale=scaled)
            expected = ref.softmax(scores).max(axis=-1).mean()
            if not close(actual, expected, out.tolerance(number)):
                return diagnose(
                    actual,
                    largest_weight_variants(q, k, scaled),
                    f"{describe_call(out.calls[number])} = {float(actual):.6g}, expected {expected:.6g}",
                    out.tolerance(number),
                )
        return None

    return judge


CHECKS = checks_by_id(
    Check(
        "check_average_largest_weight",
        "average_largest_weight",
        2,
        average_largest_weight_calls,
        (
            ("values scaled", largest_weight_judge(("scaled by default", "scaled"), True)),
            ("values unscaled", largest_weight_judge(("unscaled",), False)),
        ),
        LARGEST_COVERS,
    ),
)
