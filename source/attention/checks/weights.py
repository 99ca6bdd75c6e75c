"""Section 1, attention is a weighted average: check_softmax and check_attention."""

from __future__ import annotations

import numpy as np

from autograder.checks import (
    EXACT,
    Broken,
    Call,
    Check,
    Tolerance,
    checks_by_id,
    close,
    describe_call,
    diagnose,
    largest_difference,
    mistake,
)
from autograder.coverage import Cover, Size, values

from .inputs import (
    designed,
    normal,
    ref,
    sizes,
    softmax_along,
    window_size,
)

# --- check_softmax ------------------------------------------------------------------------------


def near_1000(rng, rows, width) -> np.ndarray:
    """Scores near +1000 and -1000 (exp(1000) overflows to inf, exp(-2000) underflows to 0): each row +-1000 +- 60
    as a whole, at least one of each sign, its entries within a few units of each other, so that every row spreads
    its weight over several entries. A softmax that is wrong anywhere but in its largest weight (no division, a
    coarse dtype), or that subtracts one number for the whole array (its maximum: 0 / 0 on the rows near -1000),
    then fails on every draw, not only where a row's largest score happens to stand far above the rest."""
    signs = rng.permutation(np.where(np.arange(rows) < rows // 2, 1.0, -1.0))[:, None]
    return 1000.0 * signs + rng.uniform(-60.0, 60.0, (rows, 1)) + normal(rng, rows, width)


def overflow_message(scores, actual) -> str | None:
    """Why a softmax of scores near +-1000 (near_1000) is not finite, by the rows where it is not; None when it is."""
    broken = ~np.isfinite(actual).reshape(-1, actual.shape[-1]).all(axis=-1) if actual.ndim else np.array([True])
    if not broken.any():
        return None
    if actual.shape == scores.shape and not (broken & (scores.reshape(broken.size, -1).max(axis=-1) > 0)).any():
        return (
            "NaN on the rows near -1000 only: less a number near +1000 (not the row's own maximum) their exps "
            "underflow to 0, and 0 / 0 is NaN; subtract each row's maximum, scores.max(axis=-1, keepdims=True)"
        )
    return (
        "NaN or inf on scores near 1000: np.exp(1000) overflows; subtract each row's maximum before np.exp "
        "(softmax(s) equals softmax(s - max))"
    )


SCORES = Cover(
    {"rows": Size(1, 12), "width": Size(1, 12)}, pairs=(("rows", "width"),), kinds=("mixed", "positive", "negative")
)
SOFTMAX_COVERS = {"scores": SCORES}


def softmax_calls(rng):
    """Random scores of one shape three times (new values each time), a head's scores over the model's window
    and beyond, a 2-d case, and scores near 1000, made in an order drawn from the seed; then scores of the designed
    sizes (SCORES: one row and one column, odd and even, more rows than columns and fewer, every sign)."""
    a, b, n = sizes(rng, 2, 7, 3)
    rows, width = sizes(rng, 3, 8, 2)
    big = near_1000(rng, rows, width)
    masked = normal(rng, width, rows, scale=2.0)
    masked[rng.random((width, rows)) < 0.3] = -np.inf  # masked scores (-inf) here and there, and on every row ...
    i, j = np.arange(width), np.arange(rows)
    masked[i, (i + 1) % rows] = -np.inf
    masked[i, i % rows] = normal(rng, width, scale=2.0)  # ... while every row and every column keeps a finite one
    masked[j % width, j] = normal(rng, rows, scale=2.0)
    masked = masked[rng.permutation(width)][:, rng.permutation(rows)]
    positions = window_size(rng)
    return [
        *[Call("softmax", (normal(rng, a, b, n, scale=2.0),), role="random") for _ in range(3)],
        Call("softmax", (normal(rng, positions, positions, scale=2.0),), role="random"),
        Call("softmax", (normal(rng, width, rows, scale=3.0),), role="random"),
        Call("softmax", (masked,), role="random"),  # -inf where masked: weight 0 there
        Call("softmax", (big,), role="near 1000"),
        *[
            Call("softmax", (values(rng, d["rows"], d["width"], kind=d["kind"], scale=2.0),), role="random", drawn=d)
            for d in designed(rng, SOFTMAX_COVERS, "scores")
        ],
    ]


def softmax_variants(scores):
    """Known wrong softmaxes of ``scores``, each with the message that explains it."""
    variants = [
        (
            (
                f"the weights are softmax over axis {axis}: rows (the last axis) must sum to 1; take the max and the"
                " sum over axis=-1 with keepdims=True"
            ),
            lambda axis=axis: softmax_along(scores, axis),
        )
        for axis in range(scores.ndim - 1)
    ]
    shifted = lambda: np.exp(scores - scores.max(-1, keepdims=True))  # noqa: E731 - each row less its maximum
    return variants + [
        (
            "the whole array sums to 1: divide each row by its own total (sum over axis=-1, keepdims=True)",
            lambda: np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum(),
        ),
        (
            "the whole array sums to 1: divide each row by its own total (sum over axis=-1, keepdims=True)",
            lambda: shifted() / shifted().sum(),
        ),
        ("the weights are exp(scores) without dividing by the row total", shifted),
        *[
            (
                f"each row's exps are divided by a column's total (sum over axis={axis}): divide by the row's own "
                "total, exps.sum(axis=-1, keepdims=True)",
                lambda axis=axis: shifted() / shifted().sum(axis=axis, keepdims=True),
            )
            for axis in range(scores.ndim - 1)
        ],
        *[
            (
                f"each column's maximum (axis={axis}) is subtracted, which changes a row's weights: subtract each "
                "row's own maximum, scores.max(axis=-1, keepdims=True)",
                lambda axis=axis: softmax_along(scores - scores.max(axis=axis, keepdims=True), -1, shift=False),
            )
            for axis in range(scores.ndim - 1)
        ],
    ]


def softmax_result(out, number) -> np.ndarray:
    """Call ``number``'s weights; a call that failed to broadcast says which reductions must keep their axis."""
    try:
        return out.value(number)
    except Broken as broken:
        if "broadcast" in (out.results[number].error or ""):
            raise Broken(
                f"{broken}. A row's maximum and total must keep their axis to broadcast against the scores: "
                "scores.max(axis=-1, keepdims=True), exps.sum(axis=-1, keepdims=True)"
            ) from None
        raise


def softmax_shape(out):
    for number in out.numbers():
        shape = out.arg(number).shape
        actual = softmax_result(out, number)
        if actual.shape != shape:
            return (
                f"{describe_call(out.calls[number])} returned shape {actual.shape}: softmax keeps the shape of its"
                " scores"
            )
    return None


def rows_sum_to_one(weights, tolerance: Tolerance = EXACT) -> bool:
    return weights.ndim > 0 and close(weights.sum(axis=-1), np.ones(weights.shape[:-1]), tolerance)


def softmax_rows(out):
    for number in out.numbers("random"):
        weights, scores = softmax_result(out, number), out.arg(number)
        if np.isneginf(scores).any() and weights.shape == scores.shape and np.isnan(weights).any():
            return (
                f"{describe_call(out.calls[number])}: NaN where a row holds -inf (a masked score): subtract each "
                "row's maximum, which stays finite while the row has a finite score (its mean or sum is -inf, and "
                "-inf - -inf is NaN)"
            )
        message = rows_message(weights, out.tolerance(number))
        if message:
            return message
    return None


def rows_message(weights, tolerance: Tolerance) -> str | None:
    """Why the rows of ``weights`` do not sum to 1 (None when they do)."""
    if rows_sum_to_one(weights, tolerance):
        return None
    for axis in range(weights.ndim - 1):
        if close(weights.sum(axis=axis), np.ones(np.delete(weights.shape, axis)), tolerance):
            return f"weights sum to 1 along axis {axis}, not along the last axis: softmax each row (axis=-1)"
    if weights.size and np.isclose(weights.sum(), 1.0):
        return "the whole array sums to 1: divide each row by its own total (sum over axis=-1, keepdims=True)"
    return (
        f"rows sum to {np.round(weights.sum(axis=-1).ravel()[:4], 3)}..., not 1: divide exp(scores) by each row's total"
    )


def softmax_values(out):
    for number in out.numbers("random"):
        scores, actual = out.arg(number), softmax_result(out, number)
        expected = ref.softmax(scores)
        message = mistake(
            out,
            number,
            actual,
            expected,
            softmax_variants(scores),
            f"{describe_call(out.calls[number])}: values differ from softmax over the last axis"
            f" ({largest_difference(actual, expected)})",
        )
        if message:
            return message
    return None


def softmax_overflow(out):
    number = out.number("near 1000")
    scores, actual = out.arg(number), softmax_result(out, number)
    overflow = overflow_message(scores, actual)
    if overflow:
        return overflow
    expected = ref.softmax(scores)
    return mistake(
        out,
        number,
        actual,
        expected,
        softmax_variants(scores),
        f"on scores near 1000 the weights are wrong ({largest_difference(actual, expected)})",
    )


# --- check_attention ----------------------------------------------------------------------------


QKV = Cover(  # heads = 1: (T, d) arrays, else (heads, T, d)
    {"heads": Size(1, 3), "queries": Size(1, 12), "keys": Size(1, 12), "d": Size(1, 16), "width": Size(1, 9)},
    pairs=(
        ("queries", "keys"),
        ("keys", "d"),
        ("queries", "d"),
        ("d", "width"),
        ("queries", "width"),
        ("keys", "width"),
    ),
    kinds=("mixed", "large"),
)
ATTENTION_COVERS = {"queries, keys, values": QKV}


def qkv(rng, drawn: dict) -> tuple:
    """(queries, keys, values) of a designed assignment of QKV, (T, d) for one head, else (heads, T, d); "large"
    queries and keys give scores of about +-1e3 and more, which overflow a softmax that does not subtract its
    maximum."""
    kind, lead = drawn.get("kind", "mixed"), (drawn["heads"],) if drawn.get("heads", 1) > 1 else ()
    return (
        values(rng, *lead, drawn["queries"], drawn["d"], kind=kind),
        values(rng, *lead, drawn["keys"], drawn["d"], kind=kind),
        values(rng, *lead, drawn["keys"], drawn["width"]),
    )


def attention_calls(rng):
    """attention on (Tq, d), (Tk, d), (Tk, dv) arrays, on a heads axis twice (one shape, new values), and on one
    head over the model's window. Every size differs from every other one in those calls (Tq, Tk, d, dv, heads,
    T), so using keys for values, or one size for another (d from the values, from the number of keys), shows
    on every draw; then the designed sizes (QKV): positions equal to the key size, fewer and more, as many
    queries as keys and not, one position, odd and even, and scores large enough to overflow."""
    d = int(rng.choice([6, 8, 16]))
    queries, keys = sizes(rng, 3, 9, 2, avoid=[d])
    (width,) = sizes(rng, 2, 7, 1, avoid=[d, queries, keys])
    heads, positions = sizes(rng, 2, 4, 1, avoid=[d, width])[0], sizes(rng, 5, 9, 1, avoid=[d, width])[0]
    window = window_size(rng)

    def stacked(heads, positions):
        return normal(rng, heads, positions, d), normal(rng, heads, positions, d), normal(rng, heads, positions, width)

    return [
        Call("attention", (normal(rng, queries, d), normal(rng, keys, d), normal(rng, keys, width)), items=2),
        *[Call("attention", stacked(heads, positions), items=2) for _ in range(2)],  # one shape, new values
        Call("attention", stacked(1, window), items=2),
        *[
            Call("attention", qkv(rng, d), items=2, drawn=d)
            for d in designed(rng, ATTENTION_COVERS, "queries, keys, values")
        ],
    ]


def expected_attention(out, number):
    q, k, v = out.calls[number].args[:3]
    mask = out.calls[number].kwargs.get("mask")
    return ref.attention(q, k, v, mask=mask)


def heads_axis_hint(out, number) -> str:
    """A hint when attention works on (T, d) inputs but fails on (heads, T, d) ones."""
    call, result = out.calls[number], out.results[number]
    plain = [n for n, c in enumerate(out.calls) if c.args and c.args[0].ndim == 2 and out.results[n].error is None]
    if result.error and call.args[0].ndim == 3 and plain:
        return (
            " It works on (T, d) inputs but not with a heads axis in front: keys.T reverses every axis of a "
            "(heads, T, d) array; use np.swapaxes(keys, -1, -2)"
        )
    return ""


def attention_value(out, number, item) -> np.ndarray:
    """Item ``item`` (0: weights, 1: output) of attention's call ``number``; a call that failed only with a heads
    axis in front says so (heads_axis_hint)."""
    try:
        return out.value(number, item)
    except Broken as broken:
        raise Broken(f"{broken}{heads_axis_hint(out, number)}") from None


def attention_shapes(out):
    for number in out.numbers():
        q, k, v = out.calls[number].args
        weights, output = attention_value(out, number, 0), attention_value(out, number, 1)
        wanted = (*q.shape[:-1], k.shape[-2])
        if weights.shape != wanted:
            return (
                f"{describe_call(out.calls[number])}: weights have shape {weights.shape}, expected (..., Tq, Tk) ="
                f" {wanted}"
            )
        if output.shape != (*q.shape[:-1], v.shape[-1]):
            if output.shape == (*q.shape[:-1], k.shape[-1]):
                return (
                    f"{describe_call(out.calls[number])}: output has shape {output.shape}, the keys' width d ="
                    f" {k.shape[-1]}, not the values' width dv = {v.shape[-1]}: the output is weights @ values, not"
                    " weights @ keys"
                )
            return (
                f"{describe_call(out.calls[number])}: output has shape {output.shape}, expected (..., Tq, dv) = "
                f"{(*q.shape[:-1], v.shape[-1])}: output = weights @ values"
            )
    return None


def attention_rows(out):
    for number in out.numbers():
        weights = out.value(number, 0)
        if not rows_sum_to_one(weights, out.tolerance(number)):
            if weights.ndim >= 2 and close(
                weights.sum(axis=-2), np.ones(weights.shape[:-2] + weights.shape[-1:]), out.tolerance(number)
            ):
                return (
                    "columns sum to 1, rows do not: the weights are transposed (softmax over each query's row of"
                    " scores)"
                )
            return "rows of the weights do not sum to 1: softmax each row of the scores (axis=-1)"
    return None


def scaling_variants(q, k, mask=None, v=None):
    """Weights with the wrong scaling (the mask, if any, applied right), each with its message; ``v``: the values,
    for a scaling by their width."""
    scores = q @ np.swapaxes(k, -1, -2)
    d = q.shape[-1]
    others = (
        []
        if v is None
        else [
            (
                f"the scores are divided by sqrt(dv) = sqrt({v.shape[-1]}), the values' width: divide by sqrt(d), d ="
                f" queries.shape[-1] = {d}",
                lambda: weights(scores / np.sqrt(v.shape[-1])),
            )
        ]
    )

    def weights(scaled):
        return ref.softmax(scaled if mask is None else np.where(mask, scaled, -np.inf))

    return [
        ("the weights match unscaled scores: divide queries @ keys^T by sqrt(d)", lambda: weights(scores)),
        (f"the weights match scores divided by d = {d}, not by sqrt(d) = {np.sqrt(d):g}", lambda: weights(scores / d)),
        ("the weights match scores multiplied by sqrt(d): divide by it", lambda: weights(scores * np.sqrt(d))),
        (
            "the weights are transposed: row i must hold query i's weights over the keys",
            lambda: np.swapaxes(weights(scores / np.sqrt(d)), -1, -2),
        ),
        (
            f"the scores are divided by sqrt(Tk) = sqrt({k.shape[-2]}), the number of keys: divide by sqrt(d), d ="
            f" queries.shape[-1] = {d}",
            lambda: weights(scores / np.sqrt(k.shape[-2])),
        ),
        *others,
        *(
            []
            if mask is not None
            else [
                (
                    "the weights follow a causal mask, but no mask was given: mask the scores only when mask is not"
                    " None",
                    lambda: ref.softmax(
                        np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores / np.sqrt(d), -np.inf)
                    ),
                )
            ]
        ),
    ]


def attention_scaled(out):
    for number in out.numbers():
        q, k, v = out.calls[number].args
        weights = out.value(number, 0)
        expected, _ = expected_attention(out, number)
        if not close(weights, expected, out.tolerance(number)):
            return diagnose(
                weights,
                scaling_variants(q, k, v=v),
                f"the weights are not softmax(queries @ keys^T / sqrt(d)) ({largest_difference(weights, expected)})",
                out.tolerance(number),
            )
    return None


def attention_values(out):
    for number in out.numbers():
        q, k, v = out.calls[number].args[:3]
        weights, output = out.value(number, 0), out.value(number, 1)
        expected_weights, expected_output = expected_attention(out, number)
        if not close(weights, expected_weights, out.tolerance(number)):
            return diagnose(
                weights,
                scaling_variants(q, k, v=v),
                f"{describe_call(out.calls[number])}: weights are wrong"
                f" ({largest_difference(weights, expected_weights)})",
                out.tolerance(number),
            )
        if not close(output, expected_output, out.tolerance(number)):
            return diagnose(
                output,
                [
                    (
                        "the output is values @ weights^T: it is weights @ values",
                        lambda: np.swapaxes(expected_weights, -1, -2) @ v,
                    ),
                    ("the output is weights @ keys: it is weights @ values", lambda: expected_weights @ k),
                ],
                f"{describe_call(out.calls[number])}: the weights are right but the output is not weights @ values "
                f"({largest_difference(output, expected_output)})",
                out.tolerance(number),
            )
    return None


CHECKS = checks_by_id(
    Check(
        "check_softmax",
        "softmax",
        2,
        softmax_calls,
        (
            ("shape", softmax_shape),
            ("rows sum to 1 on the last axis", softmax_rows),
            ("values", softmax_values),
            ("no overflow on scores ~1e3", softmax_overflow),
        ),
        SOFTMAX_COVERS,
    ),
    Check(
        "check_attention",
        "attention",
        4,
        attention_calls,
        (
            ("returns (weights, output) of the right shapes", attention_shapes),
            ("rows sum to 1", attention_rows),
            ("scaled by sqrt(d)", attention_scaled),
            ("values", attention_values),
        ),
        ATTENTION_COVERS,
    ),
)
