"""Scaled dot-product attention, the causal mask and multi-head attention, in NumPy.

One small function per idea, so each can be read, tested and swapped on its own:

    softmax              scores -> weights, each row positive and summing to one
    causal_mask          which positions each position may look at (itself and earlier)
    scaled_scores        how well each query matches each key, divided by sqrt(d)
    attention            scores -> mask -> softmax -> weighted average of the values
    split_heads          (T, D) -> (heads, T, D // heads)
    join_heads           (heads, T, d) -> (T, heads * d), the inverse
    multi_head_attention project, split, attend causally per head, join, project back
    average_largest_weight  the scaling experiment: mean of each row's largest weight

Conventions used throughout:

- Arrays are float64. Every function converts its inputs with
  ``np.asarray(x, dtype=np.float64)`` and returns float64, whatever came in.
- Sequences are rows: queries, keys and values have shape (..., T, d), where the
  leading axes (for example heads) are carried along and broadcast by ``@``.
- A mask is boolean and True means "may look there". Masked scores are set to
  -inf before softmax, so they get a weight of exactly 0.0 and each row still sums
  to one over the positions that are left.
- Weight matrices follow the "x @ W" convention: W has shape (inputs, outputs).
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
