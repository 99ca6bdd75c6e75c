"""The hidden checks of the attention assignment: one Check per graded test cell of attention.ipynb.

Loaded by autograder.assignments (never by the student's process, and never shipped to students: nbgrader's
CourseDirectory.ignore leaves it out of the release). Each check draws its inputs at grading time, names the
calls of the student's function to make, and judges the results with the reference: reference.py beside this
file (``ref``: the graded functions written once, never released, never in the student wheel).

The assignment's interface to the engine: CHECKS (grade id -> Check), ISOLATE (what a graded function may
call while it is graded), stand_in (what such a call computes, in the grader's process) and forward_texts (the
texts the notebook runs the store's model on, whose forward passes the grader records once per class).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder import assignments, model
from autograder.checks import (
    ATOL,
    EXACT,
    Broken,
    Budget,
    Call,
    Check,
    Mapped,
    Result,
    StudentFailed,
    Tolerance,
    Unavailable,
    close,
    describe_call,
    diagnose,
    driven_result,
    largest_difference,
    mistake,
    require_shape,
    scalar,
)
from autograder.coverage import MODEL_SIZES, Cover, Size, values
from lib import experiments, transformer
from lib.products import product_texts

ref = assignments.reference(Path(__file__).parent)  # reference.py: the answer key, loaded here, never released

CACHED_TEXTS = 300  # the notebook measures heads on the first 300 validation products (sections 7 and 8)


def forward_texts() -> list:
    """The texts (token ids) every notebook runs the store's model on: the grader records lib's forward passes of
    them once per class (autograder.grading.forward), and each kernel maps them instead of recomputing them."""
    return [ids for ids, _ in product_texts("validation", CACHED_TEXTS)]


ABLATION_TEXTS = 100  # section 6 finds its copy positions in the first 100 validation products


def forward_probabilities() -> list:
    """The ablation queries every notebook runs (lib.experiments.next_token_probability's (cases, heads zeroed)):
    section 6's table (every head, each head alone, each layer's four) and section 7's two sets of early heads. The
    grader records them with the forward passes; each kernel reads them instead of recomputing them."""
    vocabulary, settings = transformer.load()[1], transformer.load()[2]["settings"]
    layers, heads = settings["layers"], settings["heads"]
    cases = experiments.copy_cases(product_texts("validation", ABLATION_TEXTS), vocabulary)
    previous = experiments.recorded_head_statistics()["previous"]  # (layers, heads), as section 7 reads it
    zeroed = [None]
    zeroed += [{(layer, head)} for layer in range(layers) for head in range(heads)]
    zeroed += [{(layer, head) for head in range(heads)} for layer in range(layers)]
    zeroed += [{(layer, int(previous[layer].argmax())) for layer in (0, 1)}]  # layers 1-2's strongest previous-token
    zeroed += [{(layer, head) for layer in (0, 1) for head in range(heads)}]  # all of layers 1-2
    return [(cases, heads_zeroed) for heads_zeroed in zeroed]


# graded function -> its reference in reference.py, when the names differ (the yardstick, and what a stand-in
# computes): the reference's softmax already is a safe softmax
REFERENCES = {"safe_softmax": "softmax"}

# graded function -> the other graded functions it may call, computed by the grader while it is graded
# (contracts.md, "Isolation"): a mistake loses points on its own exercise only. safe_softmax gets the textbook
# softmax: the reference's softmax already is a safe softmax, so handing it over would hand over the answer.
ISOLATE = {
    "attention": ("softmax",),
    "average_largest_weight": ("softmax", "attention"),
    "multi_head_attention": ("softmax", "attention", "causal_mask", "split_heads", "join_heads"),
    "safe_softmax": ("softmax",),
    "even_previous_weight": ("previous_token_weight",),  # the statistic of an even pattern
    "even_marker_weight": ("marker_weight",),
}


def textbook_softmax(scores):
    """Softmax over the last axis with the row maximum subtracted; a fully masked row gives NaN."""
    scores = np.asarray(scores, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return exps / exps.sum(axis=-1, keepdims=True)


TEXTBOOK = {("safe_softmax", "softmax"): textbook_softmax}


def reference(function: str):
    """The reference of graded ``function`` (reference.py)."""
    return getattr(ref, REFERENCES.get(function, function))


def stand_in(graded: str, name: str):
    """What ``graded`` gets when it calls graded function ``name`` while it is graded (ISOLATE's names only)."""
    if name not in ISOLATE.get(graded, ()):
        raise KeyError(f"{graded} may not call a stand-in for {name}")
    return TEXTBOOK.get((graded, name)) or reference(name)


# --- the store's model, driven from the grader ----------------------------------------------------------


def forward_with_attention(student, function: str, ids, seconds: float) -> Result:
    """The store's model's logits (T, V) with the student's ``function`` (attention) in every head, as written
    (no stand-ins)."""
    from lib import transformer

    if not (model.MODEL_DIR / "weights.npz").exists():
        return Result(model.UNAVAILABLE)
    budget, returned = Budget(seconds), []

    def students_attention(*args, **kwargs):
        if budget.left <= 0:
            raise StudentFailed(f"attention used up the {seconds:g} s of CPU time for driving the model")
        result = budget.charge(*student(function, args, kwargs, (), 2, budget.left))
        returned.extend(result.returned)
        return result.values

    try:
        logits = transformer.forward(np.asarray(ids, dtype=np.int64), attention=students_attention)
    except StudentFailed as failure:
        return Result(str(failure))
    except Exception as error:  # noqa: BLE001 - what the student returned did not fit the model
        return Result(f"the store's model could not use what your attention returned ({type(error).__name__}: {error})")
    return driven_result(logits, returned)


def over_model_patterns(
    student, function: str, index, queries, offsets, per: str, layers: int, heads: int, seconds: float
) -> Result:
    """The student's statistic over every recorded text's patterns: (layers, heads, N).

    index: (texts, 3) rows (offset into the flat patterns file, T, sep); text t's description positions
    are queries[offsets[t]:offsets[t+1]]. Each text's layers go in one call, stacked as layers * heads
    heads. per: "head" (F(pattern) -> (heads,), one column per text) or "query" (F(pattern, sep,
    queries) -> (heads, Q), one column per description token; a text without one is left out, as
    the reference's head_statistics leaves it out). The patterns reach the runner as Mapped arguments: it reads
    them from the patterns file (the model's attention on these texts: inputs, not answers), not the pipe.
    """
    patterns = str(model.cache().file)
    stacked, budget, columns, returned, texts = layers * heads, Budget(seconds), [], [], []
    for text, (offset, positions, sep) in enumerate(np.asarray(index).tolist()):
        mine = np.asarray(queries[offsets[text] : offsets[text + 1]])
        if per == "query" and not len(mine):
            continue
        pattern = Mapped(patterns, offset, stacked * positions * positions, (stacked, positions, positions))
        args, expected = (
            ((pattern,), (stacked,)) if per == "head" else ((pattern, int(sep), mine.copy()), (stacked, len(mine)))
        )
        texts.append((text, positions, args, expected))
    # the texts' calls do not depend on each other: sent at once, with the seconds for them all (after the first
    # that fails, none is made); judged below one by one, in order, as if made one after the other
    made = student.many(function, [(args, {}) for _, _, args, _ in texts], (), 1, seconds)
    try:
        for (text, positions, _, expected), outcome in zip(texts, made):
            if budget.left <= 0:
                raise StudentFailed(
                    f"{function} used up its {seconds:g} s of CPU time before the last of the model's texts"
                )
            result = budget.charge(*outcome)
            where = f"for the model's text {text}, its {layers} layers' patterns stacked as {stacked} heads"
            if tuple(result.values[0].shape) != expected:
                raise StudentFailed(
                    f"returned shape {tuple(result.values[0].shape)} {where} "
                    f"{(stacked, positions, positions)}; expected {expected}"
                )
            returned.extend(result.returned)
            columns.append(result.values[0].reshape(layers, heads, -1))
    except StudentFailed as failure:
        return Result(str(failure))
    return driven_result(np.concatenate(columns, axis=-1), returned)


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


# --- head statistics ----------------------------------------------------------------------------


def model_call(function, per):
    """The call that applies ``function`` to every layer's pattern of the recorded texts (or None without the model)."""
    if not model.available():
        return None
    measured = model.cache()
    return Call(
        function,
        (measured.index, measured.queries, measured.offsets),
        {"per": per, "layers": measured.layers, "heads": measured.heads},
        slow=6.0,
        drive=over_model_patterns,
        files=(str(measured.file),),
        role="model",
        about=f"{function} on every layer's pattern of the recorded texts",
    )


def with_model(calls, function, per):
    extra = model_call(function, per)
    return calls + ([extra] if extra else [])


def recorded_judge(key, message):
    """A judge comparing the student's statistic over the recorded texts with head_statistics.json[key].

    The runner returns (layers, heads, N): one column per text for previous_token_weight (the
    record averages over texts), one per description token for far_back_weight (the record
    averages over all description tokens). Either way the record is the mean over the last axis.
    """

    def judge(out):
        if not out.numbers("model"):
            raise Unavailable(model.UNAVAILABLE)
        gap = model.cache().record_gap
        if gap > ATOL:
            raise Unavailable(
                "not available: data/model/head_statistics.json does not belong to the model and catalogue "
                f"here (lib's own statistics differ from it by {gap:.3g}); re-record it (recordings/transformer.py)"
            )
        number = out.number("model")
        actual = out.value(number).mean(axis=-1)  # (layers, heads)
        expected = model.recorded_statistics()[key]
        if close(actual, expected, out.tolerance(number)):
            return None
        return f"{message} ({largest_difference(actual, expected)}; the recorded values are rounded to 6 decimals)"

    return judge


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


def token_ids(rng, count, avoid) -> list[int]:
    choices = np.setdiff1d(np.arange(3, 60), avoid)
    return [int(x) for x in rng.choice(choices, size=count)]


def text_ids(rng, name, description, ends, end=None):
    """(ids, sep, end_id): <s> name <sep> description <end>*ends, as random token ids (the end marker's id ``end``
    when given); ids a list of ints, as the task says (a function written with ids.index is right)."""
    markers = np.setdiff1d(np.arange(60, 90), [] if end is None else [end])
    bos, sep_id, drawn_end = (int(x) for x in rng.choice(markers, size=3, replace=False))
    end = drawn_end if end is None else end
    words = token_ids(rng, name + description, [bos, sep_id, end])
    return [bos, *words[:name], sep_id, *words[name:], *[end] * ends], name + 1, end


TEXT_COVERS = {  # the end marker's id drawn as small as a position: a function that compares positions with it loses
    "name, description, ends": Cover(
        {"name": Size(0, 6), "description": Size(0, 12), "ends": Size(0, 3), "end": Size(1, 24)},
        pairs=(("name", "description"), ("sep", "end"), ("length", "end")),
        derived={
            "sep": lambda drawn: drawn["name"] + 1,
            "length": lambda drawn: drawn["name"] + drawn["description"] + drawn["ends"] + 2,
        },
    )
}


def description_calls(rng):
    cases = [
        (int(rng.integers(2, 6)), int(rng.integers(3, 10)), 1),  # a normal text
        (int(rng.integers(2, 6)), int(rng.integers(3, 10)), 3),  # padded with end markers
        (int(rng.integers(2, 6)), 0, 1),  # no description
        (int(rng.integers(2, 6)), int(rng.integers(3, 10)), 0),  # cut before <end>
        (int(rng.integers(2, 6)), window_size(rng), 1),  # a text as long as the model's window, or longer
    ]
    cases.append(cases[0])  # the first text's shape again, with other token ids
    designs = designed(rng, TEXT_COVERS, "name, description, ends")
    calls = []
    chosen = [(*case, None, {}) for case in cases]
    chosen += [(d["name"], d["description"], d["ends"], d["end"], d) for d in designs]
    for name, description, ends, end_id, drawn in chosen:
        ids, sep, end = text_ids(rng, name, description, ends, end_id)
        calls.append(Call("description_positions", (ids, sep, end), drawn=drawn))
    return calls


def description_values(out):
    for number in out.numbers():
        ids, sep, end = out.calls[number].args
        ids = np.asarray(ids)  # drawn as a list, as the task says
        actual, expected = out.value(number), ref.description_positions(ids, sep, end)
        if close(actual, expected, out.tolerance(number)):
            continue
        after = np.arange(sep + 1, len(ids))
        return diagnose(
            actual,
            [
                ("includes the end marker's position: leave out positions whose token is end_id", lambda: after),
                (
                    "starts at sep: <sep> is a marker, the description starts at sep + 1",
                    lambda: np.arange(sep, len(ids))[ids[sep:] != end],
                ),
                ("returned the token ids at those positions: return the positions themselves", lambda: ids[expected]),
                (
                    "returned one True/False per token: return the positions where it is True (np.flatnonzero)",
                    lambda: (np.arange(len(ids)) > sep) & (ids != end),
                ),
                (
                    (
                        "dropped the last position whether or not it is <end>: leave out exactly the positions whose"
                        " token is end_id"
                    ),
                    lambda: after[:-1],
                ),
            ],
            f"{describe_call(out.calls[number])} returned {np.asarray(actual).tolist()}, expected positions"
            f" {expected.tolist()}",
            out.tolerance(number),
        )
    return None


# far-back and marker weights --------------------------------------------------------------------------


def pattern_case(rng, low, high):
    """(pattern, sep, queries) of a random text: a causal pattern and its description positions."""
    heads, positions = sizes(rng, 2, 5, 1)[0], int(rng.integers(low, high))
    sep = int(rng.integers(2, 6))
    return causal_pattern(rng, heads, positions), sep, np.arange(sep + 1, positions)


TEXT_PATTERN = Cover(  # queries: the description's positions, sep + 1 .. T - 1, none to many
    {"heads": Size(1, 5), "positions": Size(2, 20), "sep": Size(1, 7)},
    pairs=(("heads", "sep"), ("sep", "queries")),
    where=lambda drawn: drawn["sep"] < drawn["positions"],
    derived={"queries": lambda drawn: drawn["positions"] - drawn["sep"] - 1},
)
PATTERN_TEXT_COVERS = {"heads, positions, sep": TEXT_PATTERN}


def designed_patterns(rng, function: str, **keywords) -> list[Call]:
    """``function`` on the designed patterns (TEXT_PATTERN: one head, as many heads as sep and not, sep odd and
    even and 1, texts odd and even in length), each with its description positions."""
    calls = []
    for drawn in designed(rng, PATTERN_TEXT_COVERS, "heads, positions, sep"):
        pattern = causal_pattern(rng, drawn["heads"], drawn["positions"])
        queries = np.arange(drawn["sep"] + 1, drawn["positions"])
        calls.append(Call(function, (pattern, drawn["sep"], queries), drawn=drawn, **keywords))
    return calls


def marker_only_pattern(rng):
    """A pattern whose far-back queries put all weight on a marker: <s> for even rows, <sep> for odd rows."""
    heads, positions, sep = int(rng.integers(2, 4)), int(rng.integers(12, 17)), int(rng.integers(2, 5))
    pattern = causal_pattern(rng, heads, positions)
    queries = np.arange(sep + 4, positions)
    for i in queries:
        pattern[:, i] = 0.0
        pattern[:, i, 0 if i % 2 == 0 else sep] = 1.0
    return pattern, sep, queries


def far_back_calls(rng):
    pattern, sep, queries = pattern_case(rng, 12, 21)
    markers = marker_only_pattern(rng)
    again = causal_pattern(rng, pattern.shape[0], pattern.shape[-1])  # the same shape, other values
    return with_model(
        [
            Call("far_back_weight", (pattern, sep, queries), role="random"),
            Call("far_back_weight", (again, sep, queries.copy()), role="random"),
            Call("far_back_weight", window_pattern_case(rng), role="random"),
            Call("far_back_weight", markers, role="markers only"),
            *designed_patterns(rng, "far_back_weight", role="random"),
        ],
        "far_back_weight",
        "query",
    )


def far_back_rule(queries, sep, positions, distance=4, markers=(True, True), strict=False):
    """(Q, T) True where j counts as far back from query i, with knobs for the known mistakes."""
    j = np.arange(positions)
    gap = queries[:, None] - j[None, :]
    far = gap > distance if strict else gap >= distance
    if markers[0]:
        far &= j[None, :] != 0
    if markers[1]:
        far &= j[None, :] != sep
    return far


def far_back_variants(pattern, sep, queries):
    positions = pattern.shape[-1]
    rows = pattern[:, queries, :]

    def total(**knobs):
        return lambda: (rows * far_back_rule(queries, sep, positions, **knobs)).sum(-1)

    return [
        ("counted positions 5 or more back (i - j > 4): 4 back is far too (i - j >= 4)", total(strict=True)),
        ("counted positions 3 back (i - j >= 3): far back starts at 4 (i - j >= 4)", total(distance=3)),
        (
            "counted the markers <s> (0) and <sep> as far back: leave them out, marker_weight reports them",
            total(markers=(False, False)),
        ),
        ("counted <sep> as far back: leave out both markers, positions 0 and sep", total(markers=(True, False))),
        (
            "counted <s> (position 0) as far back: leave out both markers, positions 0 and sep",
            total(markers=(False, True)),
        ),
    ]


def far_back_values(out):
    for number in out.numbers("random"):
        pattern, sep, queries = out.calls[number].args
        actual, expected = out.value(number), ref.far_back_weight(pattern, sep, queries)
        message = mistake(
            out,
            number,
            actual,
            expected,
            far_back_variants(pattern, sep, queries),
            f"{describe_call(out.calls[number])}: {largest_difference(actual, expected)} from the weight on j with "
            "i - j >= 4, j not 0 or sep",
        )
        if message:
            return message
    return None


def far_back_markers(out):
    number = out.number("markers only")
    pattern, sep, queries = out.calls[number].args
    actual = out.value(number)
    require_shape(actual, (pattern.shape[0], len(queries)), "the result on a pattern that looks only at the markers")
    counted = sorted(
        {"<s> (0)" if i % 2 == 0 else "<sep>" for i, column in zip(queries, actual.T) if np.abs(column).max() > ATOL}
    )
    if counted:
        return (
            f"on a pattern whose far queries look only at the markers, {' and '.join(counted)} counted as far back:"
            " leave out positions 0 and sep"
        )
    return None


def marker_calls(rng):
    calls = [Call("marker_weight", pattern_case(rng, 8, 16)) for _ in range(2)]
    pattern, sep, queries = calls[0].args
    again = causal_pattern(rng, pattern.shape[0], pattern.shape[-1])  # the first shape again, other values
    return [
        *calls,
        Call("marker_weight", (again, sep, queries.copy())),
        Call("marker_weight", window_pattern_case(rng)),
        *designed_patterns(rng, "marker_weight"),
    ]


def marker_values(out):
    for number in out.numbers():
        pattern, sep, queries = out.calls[number].args
        actual, expected = out.value(number), ref.marker_weight(pattern, sep, queries)
        if not close(actual, expected, out.tolerance(number)):
            return diagnose(
                actual,
                [
                    (
                        "counts only <s> (position 0): add the weight on <sep> (position sep)",
                        lambda: pattern[:, queries, 0],
                    ),
                    ("counts only <sep>: add the weight on <s> (position 0)", lambda: pattern[:, queries, sep]),
                ],
                f"{describe_call(out.calls[number])}: {largest_difference(actual, expected)} from pattern[:, i, 0] +"
                " pattern[:, i, sep]",
                out.tolerance(number),
            )
    return None


SPAN_COVERS = {
    "sep, end": Cover(
        {"sep": Size(1, 8), "end": Size(2, 40)},
        pairs=(("sep", "end"), ("sep", "queries")),
        where=lambda drawn: drawn["end"] > drawn["sep"],
        derived={"queries": lambda drawn: drawn["end"] - drawn["sep"] - 1},  # sep + 1 .. end - 1: none to many
    )
}


def designed_spans(rng) -> list[tuple[int, np.ndarray, dict]]:
    """(sep, the description positions sep + 1 .. end - 1, drawn) of the designed texts (sep odd, even and 1, texts
    odd and even in length, as short as one description token)."""
    return [(d["sep"], np.arange(d["sep"] + 1, d["end"]), d) for d in designed(rng, SPAN_COVERS, "sep, end")]


def even_far_calls(rng):
    sep = int(rng.integers(2, 7))
    end = int(rng.integers(15, 41))
    subset = np.sort(rng.choice(np.arange(sep + 1, end), size=6, replace=False))
    other = int(rng.integers(2, 7))
    return [
        Call("even_far_back_weight", (sep, np.arange(sep + 1, end))),
        Call("even_far_back_weight", (sep + 1, subset)),
        Call("even_far_back_weight", (other, np.sort(rng.choice(np.arange(other + 1, 2 * end), 6, replace=False)))),
        Call("even_far_back_weight", (sep, np.arange(sep + 1, window_size(rng)))),
        *[Call("even_far_back_weight", (at, queries), drawn=drawn) for at, queries, drawn in designed_spans(rng)],
    ]


def even_far_values(out):
    for number in out.numbers():
        sep, queries = out.calls[number].args
        actual, expected = out.value(number), ref.even_far_back_weight(sep, queries)
        if close(actual, expected, out.tolerance(number)):
            continue

        def spread(denominator=1, **knobs):
            return lambda: far_back_rule(queries, sep, int(queries.max()) + 1, **knobs).sum(1) / (queries + denominator)

        return diagnose(
            actual,
            [
                ("counted positions 5 or more back (i - j > 4): 4 back is far too (i - j >= 4)", spread(strict=True)),
                (
                    "counted the markers (positions 0 and sep): leave them out of the count",
                    spread(markers=(False, False)),
                ),
                ("counted <sep>: leave out both markers, positions 0 and sep", spread(markers=(True, False))),
                (
                    "counted <s> (position 0): leave out both markers, positions 0 and sep",
                    spread(markers=(False, True)),
                ),
                ("divided by i: position i sees i + 1 positions (0..i)", spread(denominator=0)),
            ],
            f"{describe_call(out.calls[number])}: {largest_difference(actual, expected)} from count / (i + 1)",
            out.tolerance(number),
        )
    return None


def even_marker_calls(rng):
    sep, end = int(rng.integers(2, 7)), int(rng.integers(12, 30))
    shifted = int(rng.integers(8, 40))
    return [
        Call("even_marker_weight", (np.arange(sep + 1, end),)),
        Call("even_marker_weight", (np.arange(sep + 1, end) + shifted,)),  # the same shape, other positions
        Call("even_marker_weight", (np.arange(sep + 1, window_size(rng)),)),
        *[Call("even_marker_weight", (queries,), drawn=drawn) for _, queries, drawn in designed_spans(rng)],
    ]


def even_marker_values(out):
    for number in out.numbers():
        message = even_marker_mistake(out, number)
        if message:
            return message
    return None


def even_marker_mistake(out, number):
    queries = out.arg(number)
    actual, expected = out.value(number), ref.even_marker_weight(queries)
    return mistake(
        out,
        number,
        actual,
        expected,
        [
            (
                "one marker's weight: there are two markers, <s> and <sep>, each with 1 / (i + 1)",
                lambda: 1 / (queries + 1),
            ),
            ("divided by i: position i sees i + 1 positions (0..i)", lambda: 2 / queries),
        ],
        f"{describe_call(out.calls[number])}: {largest_difference(actual, expected)} from 2 / (i + 1)",
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


# --- wrong versions that autograder.validate grades under every seed it tries ------------------------------

_ATTENTION = """def attention(queries, keys, values, mask=None):
    queries, keys, values = (np.asarray(a, dtype=float) for a in (queries, keys, values))
    scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(queries.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights, weights @ {output}
"""
_SOFTMAX = """def softmax(scores):
    scores = np.asarray(scores, dtype={dtype})
    exps = np.exp(scores - scores.max(axis={axis}, keepdims=True))
    return {result}
"""
# The mistakes whose points once depended on the draw (issue 27): each must lose on every seed. The store's model,
# run with the student's attention and softmax as written, notices the wrong softmaxes too (check_masked_attention).
WRONG_VERSIONS = {
    "attention: weights @ keys": {
        "answers": {"attention": _ATTENTION.format(output="keys")},
        "loses": ["check_attention", "check_masked_attention"],
    },
    "softmax: float16": {
        "answers": {
            "softmax": _SOFTMAX.format(dtype="np.float16", axis=-1, result="exps / exps.sum(-1, keepdims=True)")
        },
        "loses": ["check_softmax", "check_masked_attention"],
    },
    "softmax: no division": {
        "answers": {"softmax": _SOFTMAX.format(dtype="float", axis=-1, result="exps")},
        "loses": ["check_softmax", "check_masked_attention"],
    },
    "softmax: the column's maximum": {
        "answers": {"softmax": _SOFTMAX.format(dtype="float", axis=-2, result="exps / exps.sum(-1, keepdims=True)")},
        "loses": ["check_softmax", "check_masked_attention"],
    },
}


# --- the registry ---------------------------------------------------------------------------------------


CHECKS = {
    check.check_id: check
    for check in [
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
        Check(
            "check_description_positions",
            "description_positions",
            1,
            description_calls,
            (("values (end marker out)", description_values),),
            TEXT_COVERS,
        ),
        Check(
            "check_far_back_weight",
            "far_back_weight",
            2,
            far_back_calls,
            (
                ("values", far_back_values),
                ("markers excluded", far_back_markers),
                (
                    "matches recorded statistics",
                    recorded_judge(
                        "far",
                        "on the store's model, the average over all description tokens differs from"
                        " head_statistics.json",
                    ),
                ),
            ),
            PATTERN_TEXT_COVERS,
        ),
        Check(
            "check_marker_weight", "marker_weight", 1, marker_calls, (("values", marker_values),), PATTERN_TEXT_COVERS
        ),
        Check(
            "check_even_far_back_weight",
            "even_far_back_weight",
            1,
            even_far_calls,
            (("values", even_far_values),),
            SPAN_COVERS,
        ),
        Check(
            "check_even_marker_weight",
            "even_marker_weight",
            1,
            even_marker_calls,
            (("values", even_marker_values),),
            SPAN_COVERS,
        ),
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
    ]
}


# --- mutants of reference.py that no input of the task tells apart (python -m autograder.validate) -----------------

TWO_D = "queries and keys are (Q, d) and (K, d), as the task says: axis 1 is the last axis"
HEADS_DIVIDE = "D = heads * d, never fewer numbers than heads (split_heads raises otherwise)"
X_IS_2D = "x is (T, D), as the task says: axis 1 is the last axis"
SQUARE = "a pattern is (heads, T, T): axis 1 and axis -2 hold T, as axis -1 does"
TWO_POSITIONS = "the task's texts have at least 2 positions: <s> and <sep>"
SEP_INSIDE = "sep is a position of the text (the task): 1 <= sep < T"
GUARD = "only the guard's bound changes: sep < 32 holds for every text the task describes as it does for sep < T"
QUERIES_AFTER_SEP = "the task's queries are description positions, after sep: fewer than T"
WIDER = (
    "the far-back count's columns past the largest query are never 4 back from any query (and j = max - 1 is "
    "not either): how many the count's matrix holds changes nothing"
)
EQUIVALENT_MUTANTS = {
    "average_largest_weight: return float(weights.max(axis=-1).mean()) -> return float(weights.max(axis=1).mean())": (
        TWO_D
    ),
    "split_heads: wrong only when x.shape[-1] < heads": HEADS_DIVIDE,
    "multi_head_attention: width = x.shape[-1] -> width = x.shape[1]": X_IS_2D,
    "multi_head_attention: mask = causal_mask(x.shape[-2]) if causal else None -> mask = causal_mask(x.shape[-2])": (
        "the graded multi_head_attention(x, w_query, w_key, w_value, w_output, heads) has no causal argument: it is "
        "always causal"
    ),
    "multi_head_attention: wrong only when x.shape[-1] < heads": HEADS_DIVIDE,
    "previous_token_weight: positions = pattern.shape[-1] -> positions = pattern.shape[1]": SQUARE,
    "previous_token_weight: positions = pattern.shape[-1] -> positions = pattern.shape[-2]": SQUARE,
    "previous_token_weight: return pattern[..., rows, rows - 1].mean(-1) -> return pattern[..., rows, rows - 1]"
    ".mean(1)": "pattern[..., rows, rows - 1] of a (heads, T, T) pattern is (heads, T - 1): axis 1 is the last",
    "previous_token_weight: wrong only when pattern.shape[-1] = 1": TWO_POSITIONS,
    "even_previous_weight: wrong only when positions = 1": TWO_POSITIONS,
    "description_positions: sep = _check_sep(sep, len(ids)) -> sep = _check_sep(sep, 32)": GUARD,
    "description_positions: sep = _check_sep(sep, len(ids)) -> sep = _check_sep(sep, 128)": GUARD.replace("32", "128"),
    "description_positions: sep = _check_sep(sep, len(ids)) -> sep = _check_sep(sep, 160)": GUARD.replace("32", "160"),
    "description_positions: wrong only when ids.shape[-1] = 1": TWO_POSITIONS,
    "description_positions: wrong only when ids.shape[-1] == sep": SEP_INSIDE,
    "description_positions: wrong only when ids.shape[-1] < sep": SEP_INSIDE,
    **{
        f"{function}: {change}": reason
        for function in ("far_back_weight", "marker_weight")
        for change, reason in {
            "positions = pattern.shape[-1] -> positions = pattern.shape[1]": SQUARE,
            "positions = pattern.shape[-1] -> positions = pattern.shape[-2]": SQUARE,
            "wrong only when pattern.shape[-1] = 1": TWO_POSITIONS,
            "wrong only when pattern.shape[-1] == sep": SEP_INSIDE,
            "wrong only when pattern.shape[-1] < sep": SEP_INSIDE,
            "wrong only when pattern.shape[-1] == queries.shape[-1]": QUERIES_AFTER_SEP,
            "wrong only when pattern.shape[-1] < queries.shape[-1]": QUERIES_AFTER_SEP,
        }.items()
    },
    **{
        f"even_far_back_weight: far = _far_back(queries, sep, int(queries.max()) + 1) -> far = _far_back(queries, sep, "
        f"int(queries.max()){tail})": WIDER
        for tail in ("", " - 1", " + 2", " + 0")
    },
}
