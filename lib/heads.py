"""Head statistics: measured averages that describe what a trained attention head does.

A *pattern* is one layer's attention weights, shape (heads, T, T): pattern[h, i, j] is
how much weight head h puts on position j when computing position i. (Every function
that takes a pattern also accepts extra leading axes, e.g. (layers, heads, T, T), and
keeps them in its result.)

Each statistic has exactly one definition, written in its docstring, and an "even"
baseline: the same statistic for a head that spreads its weight evenly, 1 / (i + 1), over
the i + 1 positions that position i can see. A measured value only means something next
to its baseline.

Texts are laid out as  <s> name <sep> description <end>:  position 0 is the start marker
<s>, position ``sep`` is the separator <sep>, and the description runs from sep + 1 to
the end. These two positions, 0 and sep, are "the markers".

This module does not import the model: head_statistics takes the forward function as an
argument, so it works (and is tested) without lib.transformer.
"""

import numbers

import numpy as np

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
