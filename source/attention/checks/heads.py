"""Section 4, several heads: check_split_heads, check_join_heads and check_multi_head_attention."""

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
)
from autograder.coverage import Cover, Size

from .inputs import (
    designed,
    normal,
    ref,
    sizes,
    window_size,
)

# --- check_split_heads / check_join_heads -----------------------------------------------------------


def heads_sizes(rng):
    """(T, heads, d) with T, heads and d all different, so that a wrong reshape shows."""
    positions, heads, d = rng.permutation(sizes(rng, 2, 7, 3))
    return int(positions), int(heads), int(d)


WIDTH = {"width": lambda drawn: drawn["heads"] * drawn["d"]}  # D = heads * d, compared with T
HEADS = Cover(
    {"positions": Size(1, 9), "heads": Size(1, 6), "d": Size(1, 9)},
    pairs=(("positions", "heads"), ("heads", "d"), ("positions", "d"), ("positions", "width")),
    derived=WIDTH,
)
HEADS_COVERS = {"positions, heads, d": HEADS}


def heads_shapes(rng) -> list[tuple[int, int, int, dict]]:
    """(T, heads, d, drawn) of a check's calls: two random shapes, each twice (new values each time), one with T
    past the model's window, then the designed shapes (HEADS: one head, one position, as many heads as positions
    and not, odd and even, no constant of the model); drawn is {} but for the designed ones."""
    first, second = heads_sizes(rng), heads_sizes(rng)
    window = (window_size(rng), *sizes(rng, 2, 5, 1), *sizes(rng, 3, 9, 1))
    designs = [(d["positions"], d["heads"], d["d"], d) for d in designed(rng, HEADS_COVERS, "positions, heads, d")]
    return [(*shape, {}) for shape in (first, second, first, second, window)] + designs


def split_heads_calls(rng):
    return [
        Call("split_heads", (normal(rng, positions, heads * d), heads), drawn=drawn)
        for positions, heads, d, drawn in heads_shapes(rng)
    ]


def split_heads_shape(out):
    for number in out.numbers():
        x, heads = out.calls[number].args
        positions, width = x.shape
        actual, wanted = out.value(number), (heads, positions, width // heads)
        if actual.shape != wanted:
            if actual.shape == (positions, heads, width // heads):
                return (
                    f"returned (T, heads, d) = {actual.shape}: put the heads axis first, (heads, T, d)"
                    " (np.swapaxes(..., 0, 1))"
                )
            return (
                f"{describe_call(out.calls[number])} returned shape {actual.shape}, expected (heads, T, D // heads) ="
                f" {wanted}"
            )
    return None


def spans(columns: list[int]) -> str:
    """'columns 4..7' for a run of columns, else 'columns 0, 3, 6' (or 'column 2')."""
    if len(columns) > 1 and all(b - a == 1 for a, b in zip(columns, columns[1:])):
        return f"columns {columns[0]}..{columns[-1]}"
    return f"column{'s' if len(columns) > 1 else ''} {', '.join(map(str, columns))}"


def places_in(x, numbers) -> str | None:
    """Where ``numbers`` stand in the 2-d ``x``, in its rows and columns ('row 0, columns 4..7 of x'); None when
    one of them is no entry of x (within float32's rounding)."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    scale = max(float(np.abs(flat).max(initial=0.0)), 1.0)
    rows: dict[int, list[int]] = {}
    for number in np.asarray(numbers, dtype=np.float64).ravel():
        nearest = int(np.argmin(np.abs(flat - number))) if flat.size and np.isfinite(number) else -1
        if nearest < 0 or abs(flat[nearest] - number) > 1e-5 * scale:
            return None
        row, column = divmod(nearest, x.shape[1])
        rows.setdefault(row, []).append(column)
    return " and ".join(f"row {row}, {spans(columns)}" for row, columns in rows.items()) + " of x"


def split_heads_place(x, heads, actual, expected, tolerance) -> str:
    """Where the first wrong head and position took its numbers from, in rows and columns of x ('' when unsure)."""
    if actual.shape != expected.shape:
        return ""
    scale = np.abs(expected).max(initial=0.0)
    wrong = np.argwhere(~np.isclose(actual, expected, rtol=0.0, atol=tolerance.atol + tolerance.rtol * scale).all(-1))
    if not len(wrong):
        return ""
    head, position = (int(i) for i in wrong[0])
    held = places_in(x, actual[head, position])
    if held is None:
        return ""
    d = x.shape[1] // heads
    belong = spans(list(range(head * d, (head + 1) * d)))
    return f" (head {head}, position {position} holds {held}, where row {position}, {belong} belong)"


def split_heads_values(out):
    for number in out.numbers():
        x, heads = out.calls[number].args
        positions, width = x.shape
        d = width // heads
        actual, expected = out.value(number), ref.split_heads(x, heads)
        if not close(actual, expected, out.tolerance(number)):
            place = split_heads_place(x, heads, actual, expected, out.tolerance(number))
            return diagnose(
                actual,
                [
                    (
                        (
                            f"x.reshape(heads, T, d) mixes positions into heads{place}: reshape to (T, heads, d) first,"
                            " then swap the first two axes"
                        ),
                        lambda: x.reshape(heads, positions, d),
                    ),
                    (
                        (
                            "head h takes every heads-th column (h::heads), not the contiguous columns"
                            f" h*d:(h+1)*d{place}: reshape to (T, heads, d), not (T, d, heads)"
                        ),
                        lambda: x.reshape(positions, d, heads).transpose(2, 0, 1),
                    ),
                ],
                f"{describe_call(out.calls[number])}: head h must hold columns h*d:(h+1)*d of x{place}",
                out.tolerance(number),
            )
    return None


def join_heads_calls(rng):
    return [
        Call("join_heads", (normal(rng, heads, positions, d),), drawn=drawn)
        for positions, heads, d, drawn in heads_shapes(rng)
    ]


def join_heads_shape(out):
    for number in out.numbers():
        heads, positions, d = out.arg(number).shape
        actual = out.value(number)
        if actual.shape != (positions, heads * d):
            return (
                f"{describe_call(out.calls[number])} returned shape {actual.shape}, expected (T, heads * d) ="
                f" {(positions, heads * d)}"
            )
    return None


def join_heads_values(out):
    for number in out.numbers():
        x = out.arg(number)
        heads, positions, d = x.shape
        actual, expected = out.value(number), ref.join_heads(x)
        if not close(actual, expected, out.tolerance(number)):
            return diagnose(
                actual,
                [
                    (
                        (
                            "x.reshape(T, heads * d) straight from (heads, T, d) mixes positions: move heads next to d"
                            " first (swap the first two axes), then reshape"
                        ),
                        lambda: x.reshape(positions, heads * d),
                    ),
                    (
                        (
                            "the heads' numbers are interleaved: head h must fill columns h*d:(h+1)*d (transpose to (T,"
                            " heads, d), not (T, d, heads))"
                        ),
                        lambda: x.transpose(1, 2, 0).reshape(positions, heads * d),
                    ),
                ],
                f"{describe_call(out.calls[number])} is not the inverse of split_heads: head h goes to columns"
                " h*d:(h+1)*d",
                out.tolerance(number),
            )
    return None


# --- check_multi_head_attention ------------------------------------------------------------------------


MULTI_COVERS = {
    "positions, heads, d": Cover(
        {"positions": Size(1, 9), "heads": Size(1, 5), "d": Size(1, 6)},
        pairs=(("positions", "heads"), ("heads", "d"), ("positions", "d"), ("positions", "width")),
        derived=WIDTH,
    )
}


def multi_head_calls(rng):
    """Two random shapes, one of them twice, and one past the model's window; then the designed shapes (one head,
    one position, as many heads as positions or as numbers per head, and not; no constant of the model)."""
    calls = []
    first = heads_sizes(rng)
    shapes = [(p + 2, h, d, {}) for p, h, d in [first, heads_sizes(rng), first, (window_size(rng) - 2, 2, 6)]]
    shapes += [(d["positions"], d["heads"], d["d"], d) for d in designed(rng, MULTI_COVERS, "positions, heads, d")]
    for positions, heads, d, drawn in shapes:
        width = heads * d
        matrices = [normal(rng, width, width, scale=1 / np.sqrt(width)) for _ in range(4)]
        calls.append(
            Call("multi_head_attention", (normal(rng, positions, width), *matrices, heads), items=2, drawn=drawn)
        )
    return calls


def multi_head_weights_shape(out):
    for number in out.numbers():
        x, *_, heads = out.calls[number].args
        positions = x.shape[0]
        weights = out.value(number, 0)
        if weights.shape != (heads, positions, positions):
            return (
                f"{describe_call(out.calls[number])}: weights have shape {weights.shape}, expected (heads, T, T) ="
                f" {(heads, positions, positions)}"
            )
    return None


def multi_head_output_shape(out):
    for number in out.numbers():
        x = out.arg(number)
        output = out.value(number, 1)
        if output.shape != x.shape:
            return f"{describe_call(out.calls[number])}: output has shape {output.shape}, expected (T, D) = {x.shape}"
    return None


def multi_head_variants(x, w_query, w_key, w_value, w_output, heads):
    """(weights variants, output variants) of known mistakes."""
    split = lambda m: ref.split_heads(x @ m, heads)  # noqa: E731
    q, k, v = split(w_query), split(w_key), split(w_value)
    mask = ref.causal_mask(x.shape[0])
    width = x.shape[1]
    weights, mixed = ref.attention(q, k, v, mask=mask)
    return (
        [
            (
                "the weights put weight on later positions: attend with causal_mask(T)",
                lambda: ref.attention(q, k, v)[0],
            ),
            (
                f"the scores are divided by sqrt(D) = sqrt({width}), not by sqrt(d) of one head",
                lambda: ref.attention(q * np.sqrt(width // heads) / np.sqrt(width), k, v, mask=mask)[0],
            ),
            (
                "the projections use W.T: the weights follow the x @ W convention",
                lambda: ref.attention(split(w_query.T), split(w_key.T), split(w_value.T), mask=mask)[0],
            ),
        ],
        [
            (
                "the output is the joined heads without the output projection: multiply by w_output last",
                lambda: ref.join_heads(mixed),
            ),
            (
                "the output projection is applied as w_output @ ...: use joined @ w_output",
                lambda: (w_output @ ref.join_heads(mixed).T).T,
            ),
        ],
    )


def multi_head_values(out):
    for number in out.numbers():
        args = out.calls[number].args
        weights, output = out.value(number, 0), out.value(number, 1)
        expected_weights, expected_output = ref.multi_head_attention(*args)
        weight_variants, output_variants = multi_head_variants(*args)
        if not close(weights, expected_weights, out.tolerance(number)):
            return diagnose(
                weights,
                weight_variants,
                f"{describe_call(out.calls[number])}: weights are wrong"
                f" ({largest_difference(weights, expected_weights)})",
                out.tolerance(number),
            )
        if not close(output, expected_output, out.tolerance(number)):
            return diagnose(
                output,
                output_variants,
                f"{describe_call(out.calls[number])}: the weights are right, the output is not "
                f"({largest_difference(output, expected_output)}): join the heads, then @ w_output",
                out.tolerance(number),
            )
    return None


CHECKS = checks_by_id(
    Check(
        "check_split_heads",
        "split_heads",
        1,
        split_heads_calls,
        (
            ("shape", split_heads_shape),
            ("values (head h = columns h*d:(h+1)*d)", split_heads_values),
        ),
        HEADS_COVERS,
    ),
    Check(
        "check_join_heads",
        "join_heads",
        1,
        join_heads_calls,
        (
            ("shape", join_heads_shape),
            ("values (inverse of split)", join_heads_values),
        ),
        HEADS_COVERS,
    ),
    Check(
        "check_multi_head_attention",
        "multi_head_attention",
        3,
        multi_head_calls,
        (
            ("weights shape (heads, T, T)", multi_head_weights_shape),
            ("output shape (T, D)", multi_head_output_shape),
            ("values (incl. output projection)", multi_head_values),
        ),
        MULTI_COVERS,
    ),
)
