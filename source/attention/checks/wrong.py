"""What ``python -m autograder.validate`` grades as wrong, and what it must not: the named wrong versions, each of
which loses its points under every seed, and the mutants of reference.py that no input of the task tells apart."""

from __future__ import annotations

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
