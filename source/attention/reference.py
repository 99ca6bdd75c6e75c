"""The attention assignment's reference: the one written definition of each graded function, never handed out.

This file is the answer key. It lives beside ``checks.py`` and, like it, is never released: nbgrader's
``CourseDirectory.ignore`` (autograder.notebook.pipeline.IGNORED) leaves it out of every release, the student
wheel (packaging/student_wheel.py) ships ``lib`` only, and the hub serves releases only. The student's kernel
and the runner that grades a student's functions cannot import it; the grader loads it beside ``checks.py``
(``autograder.assignments.reference``), as do the recordings (recordings/transformer.py writes
``head_statistics.json`` with ``head_statistics``), the model cache (autograder.model) and the tests.

The rule for an assignment's reference: every graded function's reference is written here once, under the
graded name, and nowhere that students receive. ``lib`` (what students install) may compute the same thing
only fused inside something bigger (the store's model computes attention inside its forward pass), never as
a function of its own; tests/packaging/test_student_wheel.py builds the wheel and looks for both.

Two parts, one convention for each:

The chapter's operations (sections 1-4 and 9), one small function per idea:

    softmax              scores -> weights, each row positive and summing to one (also safe_softmax's reference)
    causal_mask          which positions each position may look at (itself and earlier)
    scaled_scores        how well each query matches each key, divided by sqrt(d)
    attention            scores -> mask -> softmax -> weighted average of the values
    split_heads          (T, D) -> (heads, T, D // heads)
    join_heads           (heads, T, d) -> (T, heads * d), the inverse
    multi_head_attention project, split, attend causally per head, join, project back
    average_largest_weight  the scaling experiment: mean of each row's largest weight

- Arrays are float64. Every function converts its inputs with ``np.asarray(x, dtype=np.float64)`` and returns
  float64, whatever came in.
- Sequences are rows: queries, keys and values have shape (..., T, d), where the leading axes (for example
  heads) are carried along and broadcast by ``@``.
- A mask is boolean and True means "may look there". Masked scores are set to -inf before softmax, so they get
  a weight of exactly 0.0 and each row still sums to one over the positions that are left.
- Weight matrices follow the "x @ W" convention: W has shape (inputs, outputs).

The head statistics (sections 7 and 8): measured averages that describe what a trained attention head does.

A *pattern* is one layer's attention weights, shape (heads, T, T): pattern[h, i, j] is how much weight head h
puts on position j when computing position i. (Every function that takes a pattern also accepts extra leading
axes, e.g. (layers, heads, T, T), and keeps them in its result.) Each statistic has exactly one definition,
written in its docstring, and an "even" baseline: the same statistic for a head that spreads its weight
evenly, 1 / (i + 1), over the i + 1 positions that position i can see. A measured value only means something
next to its baseline. Texts are laid out as  <s> name <sep> description <end>:  position 0 is the start marker
<s>, position ``sep`` is the separator <sep>, and the description runs from sep + 1 to the end. These two
positions, 0 and sep, are "the markers". head_statistics takes the forward function as an argument, so this
file imports nothing of the model.
"""

import numbers

import numpy as np


def _as_float(x, name):
    """Return ``x`` as a float64 array, or raise a ValueError that names the argument."""
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of numbers; could not convert it to float64 ({error})") from None


def _positive_int(value, name):
    """Check that ``value`` is a positive integer (not a bool, not a float) and return it as int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)


def softmax(scores, axis=-1):
    """Turn scores into weights that are positive and sum to one along ``axis``.

    scores: array of any shape, for example (..., Tq, Tk); entries may be -inf (masked).
    Returns a float64 array of the same shape.

    Decisions:
    - The maximum of each row is subtracted before exponentiating. That changes nothing
      mathematically (softmax(s) == softmax(s - c) for any constant c), but it makes the
      largest exponent exp(0) = 1, so scores such as 1e4 never overflow to inf.
    - -inf means "masked": exp(-inf) is 0, so that entry gets a weight of exactly 0.0.
    - A row whose entries are ALL -inf (a fully masked row) returns all-zero weights,
      not NaN. Such a position has nothing it is allowed to look at, so the honest
      answer is that it attends to nothing, and its attention output is the zero vector.
      The naive formula would compute (-inf) - (-inf) = NaN and spread NaN through
      every later layer; here the row's maximum is taken as 0 instead, every exponent
      is exp(-inf) = 0, and dividing by a total of 0 is replaced by 0.
    - NaN or +inf scores are errors (they have no meaningful weight), so they raise
      ValueError instead of being passed on.
    """
    scores = _as_float(scores, "scores")
    if np.isnan(scores).any() or np.isposinf(scores).any():
        raise ValueError("scores contain NaN or +inf; only finite values and -inf (masked) are allowed")
    top = np.max(scores, axis=axis, keepdims=True)  # (..., 1) the largest score of each row
    top = np.where(np.isneginf(top), 0.0, top)  # a fully masked row: shift by 0, not by -inf
    exps = np.exp(scores - top)  # largest entry of each row becomes exp(0) = 1
    total = np.sum(exps, axis=axis, keepdims=True)  # (..., 1) zero only for a fully masked row
    return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)


def causal_mask(positions):
    """Boolean (positions, positions) matrix, True where position i may look at position j.

    Position i may look at itself and every earlier position, so mask[i, j] = (j <= i):
    the lower triangle including the diagonal. Nothing later is visible, which is what
    keeps a language model from seeing the token it has to predict.
    """
    positions = _positive_int(positions, "positions")
    return np.tril(np.ones((positions, positions), dtype=bool))  # (T, T)


def scaled_scores(queries, keys, scale=True):
    """Scores of every query against every key: queries @ keys^T / sqrt(d).

    queries: (..., Tq, d), keys: (..., Tk, d); leading axes broadcast.
    Returns (..., Tq, Tk) float64. d = queries.shape[-1], the size of each query and key.

    Dividing by sqrt(d) keeps the scores at roughly unit variance whatever d is, so
    softmax does not start out putting nearly all the weight on one key. scale=False
    gives the raw dot products (for comparison, or for models that fold the factor
    into their query weights).
    """
    queries = _as_float(queries, "queries")
    keys = _as_float(keys, "keys")
    if queries.ndim < 2 or keys.ndim < 2:
        raise ValueError(
            f"queries and keys must have shape (..., T, d); got {queries.shape} and {keys.shape}. "
            "For a single vector, add a positions axis of length 1, e.g. x[None, :]"
        )
    d = queries.shape[-1]
    if keys.shape[-1] != d:
        raise ValueError(
            f"queries and keys must have the same size d (last axis) to be compared: "
            f"queries have d = {d}, keys have d = {keys.shape[-1]}"
        )
    scores = queries @ np.swapaxes(keys, -1, -2)  # (..., Tq, d) @ (..., d, Tk) -> (..., Tq, Tk)
    if scale:
        scores = scores / np.sqrt(d)
    return scores


def attention(queries, keys, values, mask=None, scale=True):
    """Scaled dot-product attention: softmax(queries @ keys^T / sqrt(d)) @ values.

    queries: (..., Tq, d), keys: (..., Tk, d), values: (..., Tk, dv); leading axes
    (such as heads) broadcast.
    mask: None (every position visible) or a boolean array broadcastable to
    (..., Tq, Tk); True = may look there, False = hidden. Use causal_mask(T) for a
    language model.
    Returns (weights, output): weights (..., Tq, Tk), output (..., Tq, dv), float64.

    Masked scores are set to -inf BEFORE softmax, never zeroed afterwards, so each row
    still sums to one over the visible positions and a hidden position's weight is
    exactly 0.0. A row with no visible position gets all-zero weights and a zero
    output vector (see softmax for why that is chosen over NaN).

    The mask must be boolean: an additive float mask (0 / -inf) or a 0/1 integer mask
    would be silently misread, so those raise TypeError.
    """
    values = _as_float(values, "values")
    scores = scaled_scores(queries, keys, scale=scale)  # (..., Tq, Tk)
    keys_seen = scores.shape[-1]
    if values.ndim < 2 or values.shape[-2] != keys_seen:
        raise ValueError(
            f"values must have shape (..., Tk, dv) with one row per key: there are {keys_seen} keys, "
            f"but values have shape {values.shape}"
        )
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise TypeError(
                f"mask must be a boolean array (True = may look there), got dtype {mask.dtype}; "
                "build one with causal_mask(T) or a comparison such as ids != pad"
            )
        try:
            np.broadcast_shapes(mask.shape, scores.shape)
        except ValueError:
            raise ValueError(
                f"mask of shape {mask.shape} does not broadcast to the scores' shape {scores.shape} (..., Tq, Tk)"
            ) from None
        scores = np.where(mask, scores, -np.inf)  # hidden positions: -inf, so weight 0 after softmax
    weights = softmax(scores, axis=-1)  # (..., Tq, Tk) rows sum to 1 (or 0 if fully masked)
    output = weights @ values  # (..., Tq, Tk) @ (..., Tk, dv) -> (..., Tq, dv)
    return weights, output


def split_heads(x, heads):
    """Split the last axis into heads: (..., T, D) -> (..., heads, T, D // heads).

    Head h holds columns h*d:(h+1)*d of x, where d = D // heads: each head works in
    its own contiguous share of the numbers. D must be divisible by heads.
    """
    x = _as_float(x, "x")
    heads = _positive_int(heads, "heads")
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., T, D), got {x.shape}")
    *lead, positions, width = x.shape
    if width % heads:
        raise ValueError(
            f"D = {width} numbers cannot be split evenly into {heads} heads ({width} % {heads} = {width % heads}); "
            f"choose a number of heads that divides {width}, or a D that is a multiple of {heads}"
        )
    size = width // heads
    x = x.reshape(*lead, positions, heads, size)  # (..., T, heads, d)
    return np.swapaxes(x, -3, -2)  # (..., heads, T, d)


def join_heads(x):
    """Put the heads back side by side: (..., heads, T, d) -> (..., T, heads * d).

    The inverse of split_heads: head h ends up in columns h*d:(h+1)*d.
    """
    x = _as_float(x, "x")
    if x.ndim < 3:
        raise ValueError(f"x must have shape (..., heads, T, d), got {x.shape}")
    *lead, heads, positions, size = x.shape
    x = np.swapaxes(x, -3, -2)  # (..., T, heads, d)
    return x.reshape(*lead, positions, heads * size)  # (..., T, heads * d)


def multi_head_attention(x, w_query, w_key, w_value, w_output, heads, causal=True):
    """Multi-head attention over one sequence.

    x: (T, D), one D-number vector per position (leading axes before T also work).
    w_query, w_key, w_value, w_output: (D, D), used as x @ W.
    heads: number of heads; D must be divisible by it, each head works in d = D // heads.
    causal: True applies causal_mask(T), so no position sees a later one.
    Returns (weights, output): weights (heads, T, T), one pattern per head, and
    output (T, D).

    Steps: project x into queries, keys and values; split each into heads; run
    attention in every head at once (scores scaled by sqrt(d), the head size); join
    the heads' outputs side by side; mix them with the output projection.
    """
    x = _as_float(x, "x")
    if x.ndim < 2:
        raise ValueError(f"x must have shape (T, D), got {x.shape}")
    width = x.shape[-1]
    matrices = {}
    for name, w in [("w_query", w_query), ("w_key", w_key), ("w_value", w_value), ("w_output", w_output)]:
        w = _as_float(w, name)
        if w.shape != (width, width):
            raise ValueError(f"{name} must have shape (D, D) = ({width}, {width}) to match x's D, got {w.shape}")
        matrices[name] = w
    queries = split_heads(x @ matrices["w_query"], heads)  # (heads, T, d)
    keys = split_heads(x @ matrices["w_key"], heads)  # (heads, T, d)
    values = split_heads(x @ matrices["w_value"], heads)  # (heads, T, d)
    mask = causal_mask(x.shape[-2]) if causal else None  # (T, T), broadcast over heads
    weights, output = attention(queries, keys, values, mask=mask)  # (heads, T, T), (heads, T, d)
    return weights, join_heads(output) @ matrices["w_output"]  # (T, D)


def average_largest_weight(queries, keys, scaled=True):
    """The chapter's scaling experiment: the largest weight in each row, averaged over the queries.

    queries (Q, d), keys (K, d). Scores are queries @ keys.T, divided by sqrt(d) when ``scaled``;
    softmax over the keys (each row), then the mean over the Q rows of each row's largest weight.
    With random unit-variance vectors it stays near 0.25 for 16 keys at every d when scaled,
    and climbs towards 1 as d grows when not.
    """
    weights = softmax(scaled_scores(queries, keys, scale=scaled))  # (Q, K)
    return float(weights.max(axis=-1).mean())


# --- the head statistics ---------------------------------------------------------------------------------------------

FAR = 4  # "far back": at least 4 positions back, the nearest a 4-token window cannot see


def _pattern(pattern):
    """Return pattern as a float64 array of shape (..., T, T), or raise a clear ValueError."""
    pattern = np.asarray(pattern, dtype=np.float64)
    if pattern.ndim < 2 or pattern.shape[-1] != pattern.shape[-2]:
        raise ValueError(f"pattern must have shape (heads, T, T), square in its last two axes; got {pattern.shape}")
    return pattern


def _positions(queries, name="queries"):
    """Return queries as a 1-D int array of positions, or raise a clear error."""
    queries = np.asarray(queries)
    if queries.size == 0:
        return np.zeros(0, dtype=int)
    if queries.dtype == np.bool_ or not np.issubdtype(queries.dtype, np.integer):
        raise TypeError(f"{name} must be integer positions, got dtype {queries.dtype}")
    if queries.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of positions, got shape {queries.shape}")
    return queries.astype(int)


def _check_sep(sep, positions=None):
    """Check that sep is an integer position 1..positions-1 (0 is always <s>); no upper bound if positions is None."""
    if isinstance(sep, bool) or not isinstance(sep, numbers.Integral):
        raise TypeError(f"sep must be an integer position, got {sep!r}")
    if sep < 1:
        raise ValueError(f"sep must be a position >= 1 (0 is <s>), got {sep}")
    if positions is not None and sep >= positions:
        raise ValueError(f"sep = {sep} is past the end of a text of {positions} positions (last is {positions - 1})")
    return int(sep)


def _check_queries(queries, positions):
    """Check that every query position lies in 0..positions-1."""
    if queries.size and (queries.min() < 0 or queries.max() >= positions):
        raise ValueError(f"query positions must lie in 0..{positions - 1}, got {queries.min()}..{queries.max()}")


def previous_token_weight(pattern):
    """Weight each head puts on the previous token, averaged over positions.

    Definition: the mean over positions i = 1..T-1 of pattern[:, i, i-1].
    Position 0 is left out (it has no previous token); every other position counts,
    markers included, each position equally (denominator T - 1).

    pattern: (heads, T, T) with T >= 2. Returns (heads,).
    """
    pattern = _pattern(pattern)
    positions = pattern.shape[-1]
    if positions < 2:
        raise ValueError(
            f"previous_token_weight needs at least 2 positions (position 0 has no previous token); T = {positions}"
        )
    rows = np.arange(1, positions)  # i = 1..T-1
    return pattern[..., rows, rows - 1].mean(-1)  # (heads, T-1) -> (heads,)


def even_previous_weight(positions):
    """previous_token_weight of an even spread over a text of ``positions`` tokens.

    Definition: the mean over i = 1..T-1 of 1 / (i + 1), since an even spread puts
    1 / (i + 1) on each of the i + 1 positions that position i can see, including i - 1.
    Same positions and denominator (T - 1) as previous_token_weight. Requires T >= 2.
    """
    if isinstance(positions, bool) or not isinstance(positions, numbers.Integral):
        raise TypeError(f"positions must be an integer, got {positions!r}")
    if positions < 2:
        raise ValueError(f"even_previous_weight needs at least 2 positions; got {positions}")
    return float(np.mean(1.0 / np.arange(2, positions + 1)))  # i + 1 = 2..T


def description_positions(ids, sep, end_id):
    """Positions of the description's tokens: the query positions the far/marker statistics use.

    Definition: positions sep+1..T-1 whose token is not the end marker (end_id).
    <s> (0), the name (1..sep-1), <sep> (sep) and every <end> are left out.
    Returns a 1-D int array, possibly empty (a product with no description).
    """
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"ids must be a 1-D sequence of token ids, got shape {ids.shape}")
    sep = _check_sep(sep, len(ids))
    after = np.arange(sep + 1, len(ids))  # sep+1..T-1
    return after[ids[after] != end_id].astype(int)


def _far_back(queries, sep, positions):
    """Boolean (Q, positions): True where j is far back from query i and not a marker."""
    j = np.arange(positions)
    markers = (j == 0) | (j == sep)  # <s> and <sep>
    return (queries[:, None] - j[None, :] >= FAR) & ~markers[None, :]  # (Q, T)


def far_back_weight(pattern, sep, queries):
    """Weight each head puts far back, for each query position.

    Definition: for each query position i, the sum of pattern[:, i, j] over positions j
    with i - j >= 4 (4 or more positions back; 3 back is not far) and j not a marker,
    i.e. j not in {0, sep}. Markers are out: their weight is reported by marker_weight,
    so that attention to <s> or <sep> never looks like long-range attention.

    pattern: (heads, T, T); sep: position of <sep>; queries: int positions (Q,),
    usually description_positions(...). Returns (heads, Q).
    """
    pattern = _pattern(pattern)
    positions = pattern.shape[-1]
    sep = _check_sep(sep, positions)
    queries = _positions(queries)
    _check_queries(queries, positions)
    far = _far_back(queries, sep, positions)  # (Q, T)
    return (pattern[..., queries, :] * far).sum(-1)  # (heads, Q, T) -> (heads, Q)


def marker_weight(pattern, sep, queries):
    """Weight each head puts on the two markers, for each query position.

    Definition: for each query position i, pattern[:, i, 0] + pattern[:, i, sep], the
    weight on <s> (position 0) and on <sep> (position sep), wherever they are relative
    to i (this is the marker weight far_back_weight leaves out).

    pattern: (heads, T, T); sep: position of <sep>; queries: int positions (Q,).
    Returns (heads, Q).
    """
    pattern = _pattern(pattern)
    positions = pattern.shape[-1]
    sep = _check_sep(sep, positions)
    queries = _positions(queries)
    _check_queries(queries, positions)
    return pattern[..., queries, 0] + pattern[..., queries, sep]  # (heads, Q)


def even_far_back_weight(sep, queries):
    """far_back_weight of an even spread, for each query position.

    Definition: for query position i, the count of positions j = 0..i with i - j >= 4 and
    j not in {0, sep}, divided by i + 1 (the even spread's weight on each visible position).
    Returns (Q,).
    """
    queries = _positions(queries)
    if queries.size == 0:
        return np.zeros(0)
    if queries.min() < 0:
        raise ValueError(f"query positions must be >= 0, got {queries.min()}")
    sep = _check_sep(sep)
    far = _far_back(queries, sep, int(queries.max()) + 1)  # (Q, max+1); j > i are never far back
    return far.sum(1) / (queries + 1)  # (Q,)


def even_marker_weight(queries):
    """marker_weight of an even spread, for each query position.

    Definition: 2 / (i + 1) for query position i: two marker positions, each with the
    even weight 1 / (i + 1). This assumes both markers are visible from i (i >= sep),
    which holds for description positions. Returns (Q,).
    """
    queries = _positions(queries)
    if queries.size and queries.min() < 1:
        raise ValueError("even_marker_weight needs query positions >= 1 (both markers must be visible)")
    return 2.0 / (queries + 1)  # (Q,)


def head_statistics(texts, forward, end_id):
    """All head statistics over many texts, per layer and head, with their even baselines.

    texts: list of (ids, sep) pairs, ids a list of token ids and sep the position of <sep>.
    forward: forward(ids, keep=True) -> (logits, [pattern (heads, T, T) per layer]).
    end_id: the id of the end marker, left out of the description positions.

    Returns a dict:
      "previous"      (L, H) mean over texts of previous_token_weight (each text counts once)
      "previous_even" float, mean over texts of even_previous_weight(T)
      "far"           (L, H) far_back_weight averaged over ALL description tokens of all
                      texts together (token-weighted: a long description counts more)
      "markers"       (L, H) marker_weight, averaged the same way
      "far_even"      float, even_far_back_weight averaged the same way
      "markers_even"  float, even_marker_weight averaged the same way
      "texts"         number of texts
      "tokens"        number of description tokens measured
      "described"     number of texts with at least one description token

    Raises ValueError if texts is empty, if there is no description token at all (the
    far and marker averages would be 0 / 0), or if forward's patterns have the wrong shape.
    """
    texts = list(texts)
    if not texts:
        raise ValueError("head_statistics needs at least one (ids, sep) text; got none")
    previous = far = markers = None
    previous_even = far_even = markers_even = 0.0
    tokens = described = 0
    for number, (ids, sep) in enumerate(texts):
        _, patterns = forward(ids, keep=True)
        stacked = np.stack([np.asarray(p, dtype=np.float64) for p in patterns])  # (L, H, T, T)
        if stacked.ndim != 4 or stacked.shape[-2:] != (len(ids), len(ids)):
            raise ValueError(
                f"forward returned patterns of shape {stacked.shape} (layers, heads, T, T) for text {number} "
                f"of {len(ids)} tokens; expected each layer's pattern to be (heads, {len(ids)}, {len(ids)})"
            )
        if previous is None:
            previous = np.zeros(stacked.shape[:2])  # (L, H)
            far, markers = np.zeros_like(previous), np.zeros_like(previous)
        elif stacked.shape[:2] != previous.shape:
            raise ValueError(f"text {number} gave {stacked.shape[:2]} (layers, heads), earlier texts {previous.shape}")
        previous += previous_token_weight(stacked)  # (L, H)
        previous_even += even_previous_weight(len(ids))
        queries = description_positions(ids, sep, end_id)  # (Q,)
        if queries.size == 0:
            continue  # no description: nothing to add to the token-weighted averages
        far += far_back_weight(stacked, sep, queries).sum(-1)  # (L, H, Q) -> (L, H)
        markers += marker_weight(stacked, sep, queries).sum(-1)  # (L, H)
        far_even += float(even_far_back_weight(sep, queries).sum())
        markers_even += float(even_marker_weight(queries).sum())
        tokens += queries.size
        described += 1
    if tokens == 0:
        raise ValueError(
            f"none of the {len(texts)} texts has a description token (a position after <sep> that is not <end>), "
            "so the far-back and marker weights have nothing to average; pass texts with descriptions"
        )
    return {
        "previous": previous / len(texts),
        "previous_even": previous_even / len(texts),
        "far": far / tokens,
        "markers": markers / tokens,
        "far_even": far_even / tokens,
        "markers_even": markers_even / tokens,
        "texts": len(texts),
        "tokens": tokens,
        "described": described,
    }
