"""Section 2, the causal mask and the leak test: check_causal_mask and check_masked_attention (the store's model
driven by the student's attention)."""

from __future__ import annotations

import numpy as np

from autograder import model
from autograder.checks import (
    Broken,
    Call,
    Check,
    Unavailable,
    checks_by_id,
    close,
    describe_call,
    diagnose,
    largest_difference,
)
from autograder.coverage import Cover, Size

from .driven import forward_with_attention
from .inputs import (
    WINDOW,
    designed,
    normal,
    ref,
    sizes,
    window_size,
)
from .weights import (
    QKV,
    attention_value,
    expected_attention,
    qkv,
    rows_sum_to_one,
    scaling_variants,
)

# --- check_causal_mask ----------------------------------------------------------------------------


MASK_COVERS = {"positions": Cover({"positions": Size(1, 40)})}


def causal_mask_calls(rng):
    """Sizes from 1 to past the model's window (WINDOW = 160) and twice as far, one of them asked twice; then the
    designed sizes (one position, odd and even, no constant of the model)."""
    chosen = [1, *sizes(rng, 2, 4, 1), *sizes(rng, 5, 40, 1), *sizes(rng, 41, 120, 1), window_size(rng)]
    chosen += [int(rng.integers(2 * WINDOW - 40, 2 * WINDOW + 1)), int(rng.choice(chosen[1:]))]
    return [Call("causal_mask", (n,)) for n in chosen] + [
        Call("causal_mask", (d["positions"],), drawn=d) for d in designed(rng, MASK_COVERS, "positions")
    ]


def causal_mask_bool(out):
    for number in out.numbers():
        dtype = out.dtype(number)
        if dtype != "bool":
            return (
                f"{describe_call(out.calls[number])} returned dtype {dtype}, not bool: the mask says yes/no per"
                " position (dtype=bool, or a comparison such as j <= i)"
            )
    return None


def causal_mask_shape(out):
    for number in out.numbers():
        n = out.arg(number)
        if out.value(number).shape != (n, n):
            return f"{describe_call(out.calls[number])} returned shape {out.value(number).shape}, expected ({n}, {n})"
    return None


CAUSAL_VARIANTS = [  # (message, the wrong mask of n positions)
    (
        "True above the diagonal: mask[i, j] is True where position i may look at position j, that is j <= i (the "
        "lower triangle)",
        lambda n: np.triu(np.ones((n, n))),
    ),
    (
        "the diagonal is False: a position may look at itself (j <= i, not j < i)",
        lambda n: np.tril(np.ones((n, n)), -1),
    ),
    (
        "True where a position must NOT look: True means 'may look there' (j <= i)",
        lambda n: np.triu(np.ones((n, n)), 1),
    ),
    ("every entry is True: hide the later positions (j > i)", lambda n: np.ones((n, n))),
]


def causal_mask_triangle(out):
    """The wrong masks are told apart on every call that is wrong, not on the first alone: on one position,
    "no diagonal" and "True where hidden" are the same mask ([[False]])."""
    wrong = [
        number
        for number in out.numbers()
        if not close(out.value(number), ref.causal_mask(out.arg(number)), out.tolerance(number))
    ]
    if not wrong:
        return None
    found = next(
        (
            message
            for message, variant in CAUSAL_VARIANTS
            if all(close(out.value(n), variant(out.arg(n)), out.tolerance(n)) for n in wrong)
        ),
        "not the lower triangle including the diagonal",
    )
    return f"{found} (seen in {describe_call(out.calls[wrong[-1]])})"


# --- check_masked_attention -----------------------------------------------------------------------


def random_mask(rng, rows, columns) -> np.ndarray:
    """A boolean (rows, columns) mask, every row with at least one visible and (mostly) one hidden position."""
    mask = rng.random((rows, columns)) < 0.5
    mask[np.arange(rows), rng.integers(0, columns, rows)] = True
    return mask


def randomly_masked_call(rng, rows, columns, d, width) -> Call:
    """attention on fresh (rows, d) queries and (columns, d) keys and values under a random mask."""
    queries, keys, values = normal(rng, rows, d), normal(rng, columns, d), normal(rng, columns, width)
    return Call(
        "attention", (queries, keys, values), {"mask": random_mask(rng, rows, columns)}, items=2, role="random mask"
    )


def huge_negative_scores(rng, positions, d):
    """Queries and keys whose scores are all near -1e12: a stand-in such as -1e9 for -inf then wins."""
    size = 1e6 / d**0.25
    queries = np.full((positions, d), size)
    keys = -np.full((positions, d), size) + normal(rng, positions, d)
    return queries, keys


MASKED_COVERS = {  # no "large" kind here: with it, a softmax with the mask applied after it puts all of a row's weight
    # on a hidden position, and "exactly 0.0 on masked positions" could not be judged (check_attention draws it)
    "random mask": Cover(QKV.sizes, pairs=QKV.pairs),
    "causal": Cover(
        {"positions": Size(1, 12), "d": Size(2, 12), "width": Size(1, 9)}, pairs=(("positions", "d"), ("d", "width"))
    ),
}


def masked_attention_calls(rng):
    """A causal head, a head over the model's window, random masks, the same text with its last token changed,
    scores near -1e12 and the store's model driven by the student's attention; then the designed sizes (QKV under
    a random mask, and square causal heads: positions equal to the key size, fewer and more, one position)."""
    d = int(rng.choice([6, 8]))
    (width,) = sizes(rng, 2, 6, 1, avoid=[d])  # the value width is never the key width (check_attention's rule)
    heads, positions = sizes(rng, 2, 4, 1, avoid=[d, width])[0], sizes(rng, 5, 9, 1, avoid=[d, width])[0]
    q, k, v = normal(rng, heads, positions, d), normal(rng, heads, positions, d), normal(rng, heads, positions, width)
    q2, k2, v2 = q.copy(), k.copy(), v.copy()  # the same text with its last token changed
    q2[:, -1], k2[:, -1], v2[:, -1] = normal(rng, heads, d), normal(rng, heads, d), normal(rng, heads, width)
    causal = ref.causal_mask(positions)
    rows, columns = sizes(rng, 3, 10, 2, avoid=[d, width])
    big_q, big_k = huge_negative_scores(rng, positions, d)
    window = window_size(rng)
    calls = [
        Call("attention", (q, k, v), {"mask": causal}, items=2, role="causal"),
        Call(
            "attention",
            (normal(rng, window, d), normal(rng, window, d), normal(rng, window, width)),
            {"mask": ref.causal_mask(window)},
            items=2,
            role="random mask",
        ),
        randomly_masked_call(rng, rows, columns, d, width),
        Call("attention", (q2, k2, v2), {"mask": causal}, items=2, role="last token changed"),
        randomly_masked_call(rng, rows, columns, d, width),
        Call(
            "attention",
            (big_q, big_k, normal(rng, positions, width)),
            {"mask": causal},
            items=2,
            role="scores near -1e12",
        ),
    ]
    for drawn in designed(rng, MASKED_COVERS, "random mask"):
        mask = random_mask(rng, drawn["queries"], drawn["keys"])
        calls.append(Call("attention", qkv(rng, drawn), {"mask": mask}, items=2, role="random mask", drawn=drawn))
    for drawn in designed(rng, MASKED_COVERS, "causal"):
        square = {"queries": drawn["positions"], "keys": drawn["positions"], **drawn}
        mask = ref.causal_mask(drawn["positions"])
        calls.append(Call("attention", qkv(rng, square), {"mask": mask}, items=2, role="random mask", drawn=drawn))
    if model.available():
        pool = model.cache().pool
        ids, _ = pool[int(rng.integers(len(pool)))]
        calls.append(
            Call(
                "attention",
                (np.asarray(ids, dtype=np.int64),),
                drive=forward_with_attention,
                role="model",
                about=f"the store's model driven by your attention (text of {len(ids)} tokens)",
            )
        )
    return calls


def transposed_weights(out, number) -> bool:
    """True when call ``number``'s weights are the right ones transposed."""
    weights = attention_value(out, number, 0)
    return close(np.swapaxes(weights, -1, -2), expected_attention(out, number)[0], out.tolerance(number))


TRANSPOSED = "the weights are transposed: row i must hold query i's weights over the keys it may see"


def visible_weight_missing(out) -> str | None:
    """Why the weights on visible positions are no attention (a row with no weight where it may look), or None."""
    for number in out.numbers("causal", "random mask"):
        weights = attention_value(out, number, 0)
        mask = np.broadcast_to(out.calls[number].kwargs["mask"], weights.shape) if weights.ndim else None
        if mask is None or not ((weights * mask).sum(axis=-1) > 0).all():
            return (
                "a row puts no weight on the positions it may look at, so zero weight on the hidden ones proves "
                "nothing yet: the visible weights must be a softmax of the visible scores"
            )
    return None


def masked_exactly_zero(out):
    missing = visible_weight_missing(out)
    if missing:
        return missing
    for number in out.numbers("causal", "random mask", "scores near -1e12"):
        weights = attention_value(out, number, 0)
        try:
            mask = np.broadcast_to(out.calls[number].kwargs["mask"], weights.shape)
        except ValueError:
            raise Broken(
                f"{describe_call(out.calls[number])}: weights have shape {weights.shape}, which does not fit the mask"
            ) from None
        leaked = np.abs(weights[~mask])
        if not leaked.size or (leaked == 0.0).all():
            continue
        if transposed_weights(out, number):
            return TRANSPOSED
        largest = np.nanmax(leaked)
        if out.calls[number].role == "scores near -1e12":
            return (
                f"with scores near -1e12, masked positions get weight up to {largest:.2g}: a large negative "
                "number (such as -1e9) is not -inf; set masked scores to -np.inf before softmax"
            )
        hint = " (a finite stand-in such as -100 or -1e4 still leaks: its exp is tiny, not 0)" if largest < 1e-3 else ""
        return (
            f"masked positions get weight up to {largest:.2g}, not exactly 0.0: set masked scores to -np.inf "
            f"before softmax, np.where(mask, scores, -np.inf){hint}"
        )
    return None


def masked_rows(out):
    for number in out.numbers("causal", "random mask"):
        weights = attention_value(out, number, 0)
        if not rows_sum_to_one(weights, out.tolerance(number)):
            if transposed_weights(out, number):
                return TRANSPOSED
            q, k, _ = out.calls[number].args
            mask = out.calls[number].kwargs["mask"]
            after = ref.softmax(ref.scaled_scores(q, k)) * mask
            if close(weights, after, out.tolerance(number)):
                return (
                    "the weights are softmax of all scores with the masked ones zeroed afterwards, so rows sum to less "
                    "than 1: set masked scores to -inf BEFORE softmax"
                )
            return "rows of the weights do not sum to 1 over the visible positions"
    return None


def masked_leak(out):
    first = attention_value(out, out.number("causal"), 1)
    second = attention_value(out, out.number("last token changed"), 1)
    if first.shape != second.shape or first.ndim < 2:
        raise Broken(f"the outputs have shapes {first.shape} and {second.shape}; expected (heads, T, dv) both")
    earlier = first.shape[-2] - 1
    if close(first[..., earlier, :], second[..., earlier, :]):
        return (
            "changing the last token left the last position's output unchanged, so the test cannot tell whether "
            "earlier positions see it: the output must be the weighted average of the values"
        )
    changed = [i for i in range(earlier) if not close(first[..., i, :], second[..., i, :])]
    if changed:
        return (
            f"changing only the last token changed the output at earlier position(s) {changed}: they must not see it; "
            "apply the mask to the scores (-inf) before softmax"
        )
    return None


def mask_variants(q, k, mask):
    scores = ref.scaled_scores(q, k)
    return [
        (
            "the weights ignore the mask: set the scores of hidden positions (mask False) to -inf",
            lambda: ref.softmax(scores),
        ),
        (
            "the mask is used the wrong way round: True means 'may look there', so hide where the mask is False",
            lambda: ref.softmax(np.where(mask, -np.inf, scores)),
        ),
        (
            "the masked weights are zeroed after softmax: set masked scores to -inf BEFORE softmax",
            lambda: ref.softmax(scores) * mask,
        ),
        (
            "masked scores are set to 0, which still gets weight: set them to -np.inf",
            lambda: ref.softmax(np.where(mask, scores, 0.0)),
        ),
        (
            "the weights follow a causal mask, not the mask given: hide the positions where the mask argument is False",
            lambda: ref.softmax(np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)),
        ),
    ]


def masked_values(out):
    for number in out.numbers("causal", "random mask"):
        q, k, v = out.calls[number].args
        mask = out.calls[number].kwargs["mask"]
        weights, output = attention_value(out, number, 0), attention_value(out, number, 1)
        expected_weights, expected_output = expected_attention(out, number)
        if not close(weights, expected_weights, out.tolerance(number)):
            return diagnose(
                weights,
                mask_variants(q, k, mask) + scaling_variants(q, k, mask, v),
                f"{describe_call(out.calls[number])}: weights are wrong"
                f" ({largest_difference(weights, expected_weights)})",
                out.tolerance(number),
            )
        if not close(output, expected_output, out.tolerance(number)):
            return diagnose(
                output,
                [("the output is weights @ keys: it is weights @ values", lambda: expected_weights @ k)],
                f"{describe_call(out.calls[number])}: the output is not weights @ values"
                f" ({largest_difference(output, expected_output)})",
                out.tolerance(number),
            )
    return None


def masked_drives_model(out):
    if not out.numbers("model"):
        raise Unavailable(model.UNAVAILABLE)
    number = out.number("model")
    ids = out.arg(number)
    actual, expected = out.value(number), model.cache().logits_for(ids)
    if close(actual, expected, out.tolerance(number)):
        return None
    return (
        "with your attention in every head, the store's model's logits differ from lib's"
        f" ({largest_difference(actual, expected)}); your attention is used as written here, including the softmax it"
        " calls"
    )


CHECKS = checks_by_id(
    Check(
        "check_causal_mask",
        "causal_mask",
        1,
        causal_mask_calls,
        (
            ("bool", causal_mask_bool),
            ("shape", causal_mask_shape),
            ("lower triangle incl. diagonal", causal_mask_triangle),
        ),
        MASK_COVERS,
    ),
    Check(
        "check_masked_attention",
        "attention",
        4,
        masked_attention_calls,
        (
            ("exactly 0.0 weight on masked positions", masked_exactly_zero),
            ("rows sum to 1", masked_rows),
            ("leak test: a later token leaves earlier outputs unchanged", masked_leak),
            ("values", masked_values),
            ("drives the store's model", masked_drives_model),
        ),
        MASKED_COVERS,
    ),
)
