"""Section 7, heads that attend to the previous token: check_previous_token_weight (on random patterns and on the
store's model's recorded ones) and check_even_previous_weight."""

from __future__ import annotations

import numpy as np

from autograder.checks import (
    Call,
    Check,
    checks_by_id,
    close,
    describe_call,
    diagnose,
    largest_difference,
    scalar,
)
from autograder.coverage import Cover, Size

from .driven import recorded_judge, with_model
from .inputs import (
    WINDOW,
    causal_pattern,
    designed,
    ref,
    sizes,
    window_size,
)

PATTERN_COVERS = {
    "heads, positions": Cover({"heads": Size(1, 6), "positions": Size(2, 14)}, pairs=(("heads", "positions"),))
}


def previous_calls(rng):
    calls = []
    shapes = [(*sizes(rng, 2, 6, 1), int(rng.integers(5, 13))) for _ in range(2)]
    for heads, positions in [*shapes, shapes[0], (1, window_size(rng))]:  # one shape twice, one past the window
        calls.append(Call("previous_token_weight", (causal_pattern(rng, heads, positions),)))
    for drawn in designed(rng, PATTERN_COVERS, "heads, positions"):
        calls.append(
            Call("previous_token_weight", (causal_pattern(rng, drawn["heads"], drawn["positions"]),), drawn=drawn)
        )
    return with_model(calls, "previous_token_weight", "head")


def previous_shape(out):
    for number in out.numbers():
        heads = out.arg(number).shape[0]
        if out.value(number).shape != (heads,):
            return (
                f"{describe_call(out.calls[number])} returned shape {out.value(number).shape}, expected (heads,) ="
                f" ({heads},): one number per head"
            )
    return None


def previous_variants(pattern):
    positions = pattern.shape[-1]
    rows = np.arange(1, positions)
    return [
        (
            "averaged pattern[:, i, i], each position's weight on itself: the previous token is i - 1",
            lambda: pattern[:, rows, rows].mean(-1),
        ),
        (
            "averaged pattern[:, i, i - 2], two positions back: the previous token is i - 1",
            lambda: pattern[:, rows[1:], rows[1:] - 2].mean(-1),
        ),
        (
            (
                "averaged over all T positions, including position 0 (which has no previous token): average over i ="
                " 1..T-1"
            ),
            lambda: pattern[:, rows, rows - 1].sum(-1) / positions,
        ),
        (
            "summed pattern[:, i, i - 1] over positions: average it (divide by T - 1)",
            lambda: pattern[:, rows, rows - 1].sum(-1),
        ),
    ]


def previous_values(out):
    for number in out.numbers():
        pattern, actual = out.arg(number), out.value(number)
        expected = ref.previous_token_weight(pattern)
        if not close(actual, expected, out.tolerance(number)):
            return diagnose(
                actual,
                previous_variants(pattern),
                f"{describe_call(out.calls[number])}: {largest_difference(actual, expected)} from the mean of"
                " pattern[:, i, i - 1] over i = 1..T-1",
                out.tolerance(number),
            )
    return None


EVEN_PREVIOUS_COVERS = {"positions": Cover({"positions": Size(2, 40)})}


def even_previous_calls(rng):
    chosen = [2, *sizes(rng, 3, 30, 1), *sizes(rng, 31, WINDOW - 1, 1), int(rng.integers(WINDOW + 1, 2 * WINDOW + 1))]
    designs = designed(rng, EVEN_PREVIOUS_COVERS, "positions")
    return [Call("even_previous_weight", (n,)) for n in [*chosen, int(rng.choice(chosen))]] + [
        Call("even_previous_weight", (d["positions"],), drawn=d) for d in designs
    ]


def even_previous_values(out):
    for number in out.numbers():
        positions = out.arg(number)
        actual = scalar(out.value(number), describe_call(out.calls[number]))
        expected = ref.even_previous_weight(positions)
        if not close(actual, expected, out.tolerance(number)):
            i = np.arange(1, positions)
            return diagnose(
                actual,
                [
                    (
                        "used 1 / i: position i sees i + 1 positions (0..i), so the even weight is 1 / (i + 1)",
                        lambda: np.mean(1 / i),
                    ),
                    (
                        "averaged over i = 0..T-1: leave out position 0 (it has no previous token)",
                        lambda: np.mean(1 / (np.arange(positions) + 1)),
                    ),
                    ("summed 1 / (i + 1): average it over i = 1..T-1", lambda: np.sum(1 / (i + 1))),
                    (
                        "used 1 / T for every position: position i spreads over its own i + 1 visible positions",
                        lambda: 1 / positions,
                    ),
                ],
                f"{describe_call(out.calls[number])} = {float(actual):.6g}, expected {expected:.6g}",
                out.tolerance(number),
            )
    return None


# description positions ----------------------------------------------------------------------------


CHECKS = checks_by_id(
    Check(
        "check_previous_token_weight",
        "previous_token_weight",
        2,
        previous_calls,
        (
            ("shape (heads,)", previous_shape),
            ("values on random patterns", previous_values),
            (
                "matches recorded statistics",
                recorded_judge(
                    "previous",
                    "on the store's model, the mean over the recorded texts differs from head_statistics.json",
                ),
            ),
        ),
        PATTERN_COVERS,
    ),
    Check(
        "check_even_previous_weight",
        "even_previous_weight",
        1,
        even_previous_calls,
        (("values", even_previous_values),),
        EVEN_PREVIOUS_COVERS,
    ),
)
