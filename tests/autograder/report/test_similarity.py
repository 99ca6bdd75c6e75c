"""The similarity threshold, proved both ways (autograder.report.similarity).

- Near-copies of one student (variables renamed, independent statements swapped, comments and blank lines
  added) are flagged against the original.
- Six solutions written independently, in different styles (loops; einsum; np.where; boolean indexing and
  in-place updates; helper functions; comprehensions), plus the course's own solution, are not flagged
  against each other. Each of them is first shown to be correct: every function equals the assignment's
  reference (source/attention/reference.py) on random inputs, so these are real solutions, not strawmen.
- The answer keys: code copied from the reference (renamed) is listed against it, on its own, with its key; the
  course's solution against the notebook's solution; the independent solutions against neither.
"""

from __future__ import annotations

import ast
import io
import json
import re
import time
import tokenize
from pathlib import Path

import numpy as np
import pytest

from autograder import assignments
from autograder.report import similarity

REPOSITORY = Path(__file__).resolve().parents[3]
RELEASE = REPOSITORY / "release" / "attention" / "attention.ipynb"
REFERENCE = REPOSITORY / "source" / "attention" / "reference.py"
FULL_SOLUTION = REPOSITORY / "examples" / "submissions" / "full_solution" / "attention" / "attention.ipynb"
FUNCTIONS = [
    "softmax",
    "attention",
    "causal_mask",
    "average_largest_weight",
    "split_heads",
    "join_heads",
    "multi_head_attention",
    "previous_token_weight",
    "even_previous_weight",
    "description_positions",
    "far_back_weight",
    "marker_weight",
    "even_far_back_weight",
    "even_marker_weight",
    "safe_softmax",
]


def answer_cells(path: Path) -> dict:
    cells = json.loads(path.read_text())["cells"]
    found = {}
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("solution") and meta.get("grade_id") in FUNCTIONS:
            found[meta["grade_id"]] = "".join(cell["source"])
    return {name: found[name] for name in FUNCTIONS}


def cells_of(text: str) -> dict:
    """Split a solution written as one text (``# --- name`` before each answer cell) into {function: cell}."""
    parts = re.split(r"^# --- (\w+)\n", text.strip("\n"), flags=re.M)[1:]
    cells = {name: body.strip("\n") + "\n" for name, body in zip(parts[::2], parts[1::2])}
    assert list(cells) == FUNCTIONS
    return cells


LOOPS = """
# --- softmax
def softmax(scores):
    s = np.array(scores, dtype=float)
    out = np.empty_like(s)
    for idx in np.ndindex(s.shape[:-1]):
        row = s[idx]
        biggest = max(row)
        e = np.exp(row - biggest)
        out[idx] = e / e.sum()
    return out
# --- attention
import math

def attention(queries, keys, values, mask=None):
    q = np.array(queries, dtype=float)
    k = np.array(keys, dtype=float)
    val = np.array(values, dtype=float)
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) / math.sqrt(q.shape[-1])
    if mask is not None:
        allowed = np.broadcast_to(mask, scores.shape)
        for idx in np.ndindex(scores.shape):
            if not allowed[idx]:
                scores[idx] = -np.inf
    weights = softmax(scores)
    return weights, np.matmul(weights, val)
# --- causal_mask
def causal_mask(positions):
    grid = np.zeros((positions, positions), dtype=bool)
    for row in range(positions):
        for col in range(row + 1):
            grid[row, col] = True
    return grid
# --- average_largest_weight
def average_largest_weight(queries, keys, scaled=True):
    q = np.array(queries, dtype=float)
    k = np.array(keys, dtype=float)
    total = 0.0
    for query in q:
        row = k @ query
        if scaled:
            row = row / math.sqrt(len(query))
        total += softmax(row).max()
    return total / len(q)
# --- split_heads
def split_heads(x, heads):
    x = np.array(x, dtype=float)
    width = x.shape[1] // heads
    parts = []
    for h in range(heads):
        parts.append(x[:, h * width:(h + 1) * width])
    return np.array(parts)
# --- join_heads
def join_heads(x):
    x = np.array(x, dtype=float)
    pieces = []
    for h in range(x.shape[0]):
        pieces.append(x[h])
    return np.concatenate(pieces, axis=1)
# --- multi_head_attention
def multi_head_attention(x, w_query, w_key, w_value, w_output, heads):
    x = np.array(x, dtype=float)
    q_all = split_heads(x @ w_query, heads)
    k_all = split_heads(x @ w_key, heads)
    v_all = split_heads(x @ w_value, heads)
    mask = causal_mask(len(x))
    pattern, outputs = [], []
    for h in range(heads):
        w, o = attention(q_all[h], k_all[h], v_all[h], mask)
        pattern.append(w)
        outputs.append(o)
    return np.stack(pattern), join_heads(np.stack(outputs)) @ w_output
# --- previous_token_weight
def previous_token_weight(pattern):
    pattern = np.array(pattern, dtype=float)
    count = pattern.shape[-1]
    result = np.zeros(pattern.shape[0])
    for i in range(1, count):
        result += pattern[:, i, i - 1]
    return result / (count - 1)
# --- even_previous_weight
def even_previous_weight(positions):
    acc = 0.0
    for i in range(1, positions):
        acc += 1 / (i + 1)
    return acc / (positions - 1)
# --- description_positions
def description_positions(ids, sep, end_id):
    found = []
    for i in range(sep + 1, len(ids)):
        if ids[i] != end_id:
            found.append(i)
    return np.array(found, dtype=int)
# --- far_back_weight
def far_back_weight(pattern, sep, queries):
    pattern = np.array(pattern, dtype=float)
    out = np.zeros((pattern.shape[0], len(queries)))
    for n, i in enumerate(queries):
        for j in range(i + 1):
            if i - j >= 4 and j != 0 and j != sep:
                out[:, n] += pattern[:, i, j]
    return out
# --- marker_weight
def marker_weight(pattern, sep, queries):
    pattern = np.array(pattern, dtype=float)
    out = np.zeros((len(pattern), len(queries)))
    for n, i in enumerate(queries):
        out[:, n] = pattern[:, i, 0] + pattern[:, i, sep]
    return out
# --- even_far_back_weight
def even_far_back_weight(sep, queries):
    result = []
    for i in queries:
        count = 0
        for j in range(i + 1):
            if i - j >= 4 and j not in (0, sep):
                count += 1
        result.append(count / (i + 1))
    return np.array(result)
# --- even_marker_weight
def even_marker_weight(queries):
    values = []
    for i in queries:
        values.append(2 / (i + 1))
    return np.array(values, dtype=float)
# --- safe_softmax
def safe_softmax(scores):
    s = np.array(scores, dtype=float)
    out = np.zeros_like(s)
    for idx in np.ndindex(s.shape[:-1]):
        row = s[idx]
        if np.all(np.isneginf(row)):
            continue
        e = np.exp(row - row.max())
        out[idx] = e / e.sum()
    return out
"""

EINSUM = """
# --- softmax
def softmax(scores):
    z = np.asarray(scores, dtype=np.float64)
    z = z - np.amax(z, axis=-1, keepdims=True)
    np.exp(z, out=z)
    z /= np.sum(z, axis=-1, keepdims=True)
    return z
# --- attention
def attention(queries, keys, values, mask=None):
    dim = np.shape(queries)[-1]
    logits = np.einsum("...qd,...kd->...qk", queries, keys) * dim ** -0.5
    if mask is not None:
        logits = logits - np.where(mask, 0.0, np.inf)
    probs = softmax(logits)
    return probs, np.einsum("...qk,...kv->...qv", probs, values)
# --- causal_mask
def causal_mask(positions):
    return np.arange(positions)[:, None] >= np.arange(positions)[None, :]
# --- average_largest_weight
def average_largest_weight(queries, keys, scaled=True):
    s = np.einsum("qd,kd->qk", queries, keys)
    if scaled:
        s = s / np.sqrt(np.shape(queries)[1])
    return float(np.mean(np.max(softmax(s), axis=1)))
# --- split_heads
def split_heads(x, heads):
    T, D = np.shape(x)
    return np.einsum("thd->htd", np.reshape(x, (T, heads, D // heads)))
# --- join_heads
def join_heads(x):
    h, t, d = np.shape(x)
    return np.einsum("htd->thd", x).reshape(t, h * d)
# --- multi_head_attention
def multi_head_attention(x, w_query, w_key, w_value, w_output, heads):
    n = np.shape(x)[0]
    q = split_heads(np.einsum("td,de->te", x, w_query), heads)
    k = split_heads(np.einsum("td,de->te", x, w_key), heads)
    v = split_heads(np.einsum("td,de->te", x, w_value), heads)
    w, o = attention(q, k, v, causal_mask(n))
    return w, np.einsum("te,ef->tf", join_heads(o), w_output)
# --- previous_token_weight
def previous_token_weight(pattern):
    return np.einsum("hii->hi", np.asarray(pattern)[:, 1:, :-1]).mean(axis=1)
# --- even_previous_weight
def even_previous_weight(positions):
    i = np.arange(1, positions)
    return float(np.sum(1 / (i + 1)) / (positions - 1))
# --- description_positions
def description_positions(ids, sep, end_id):
    keep = np.flatnonzero(np.asarray(ids) != end_id)
    return keep[keep > sep]
# --- far_back_weight
def far_back_weight(pattern, sep, queries):
    q = np.asarray(queries)
    i, j = q[:, None], np.arange(np.shape(pattern)[-1])[None, :]
    ok = ((i - j) >= 4) & (j > 0) & (j != sep)
    return np.einsum("hqk,qk->hq", np.asarray(pattern)[:, q], ok.astype(float))
# --- marker_weight
def marker_weight(pattern, sep, queries):
    onehot = np.zeros(np.shape(pattern)[-1])
    onehot[0] += 1
    onehot[sep] += 1
    return np.einsum("hqk,k->hq", np.asarray(pattern)[:, np.asarray(queries)], onehot)
# --- even_far_back_weight
def even_far_back_weight(sep, queries):
    q = np.asarray(queries)
    counts = np.maximum(q - 4, 0) - ((sep >= 1) & (sep <= q - 4))
    return counts / (q + 1)
# --- even_marker_weight
def even_marker_weight(queries):
    return 2 / (np.asarray(queries) + 1.0)
# --- safe_softmax
def safe_softmax(scores):
    z = np.asarray(scores, dtype=float)
    peak = np.max(z, axis=-1, keepdims=True)
    peak[~np.isfinite(peak)] = 0
    e = np.exp(z - peak)
    norm = e.sum(-1, keepdims=True)
    norm[norm == 0] = 1
    return e / norm
"""

WHERE = """
# --- softmax
def softmax(scores):
    arr = np.array(scores, dtype=float)
    shifted = arr - arr.max(axis=-1)[..., np.newaxis]
    expd = np.exp(shifted)
    return expd / expd.sum(axis=-1)[..., np.newaxis]
# --- attention
def attention(queries, keys, values, mask=None):
    qq = np.asarray(queries, float)
    kk = np.asarray(keys, float)
    raw = qq @ kk.swapaxes(-1, -2)
    raw = raw / np.sqrt(qq.shape[-1])
    if mask is not None:
        raw = np.where(np.asarray(mask, dtype=bool), raw, -np.inf)
    att = softmax(raw)
    return att, att @ np.asarray(values, float)
# --- causal_mask
def causal_mask(positions):
    idx = np.arange(positions)
    return np.where(idx[None, :] <= idx[:, None], True, False)
# --- average_largest_weight
def average_largest_weight(queries, keys, scaled=True):
    qq = np.asarray(queries, float)
    s = qq @ np.asarray(keys, float).T
    s = np.where(scaled, s / np.sqrt(qq.shape[1]), s)
    return softmax(s).max(axis=1).mean().item()
# --- split_heads
def split_heads(x, heads):
    return np.stack(np.split(np.asarray(x, float), heads, axis=1))
# --- join_heads
def join_heads(x):
    return np.hstack(list(np.asarray(x, float)))
# --- multi_head_attention
def multi_head_attention(x, w_query, w_key, w_value, w_output, heads):
    T = len(x)
    proj = [split_heads(np.dot(x, w), heads) for w in (w_query, w_key, w_value)]
    lower = np.where(np.tri(T) > 0, True, False)
    att, mixed = attention(*proj, mask=lower)
    return att, np.dot(join_heads(mixed), w_output)
# --- previous_token_weight
def previous_token_weight(pattern):
    p = np.asarray(pattern, float)
    T = p.shape[-1]
    sub = np.where(np.eye(T, k=-1, dtype=bool), p, 0.0)
    return sub.sum(axis=(1, 2)) / (T - 1)
# --- even_previous_weight
def even_previous_weight(positions):
    return float(sum(1.0 / k for k in range(2, positions + 1)) / (positions - 1))
# --- description_positions
def description_positions(ids, sep, end_id):
    ids = np.asarray(ids)
    idx = np.arange(len(ids))
    return np.where((idx > sep) & (ids != end_id))[0]
# --- far_back_weight
def far_back_weight(pattern, sep, queries):
    p = np.asarray(pattern, float)
    qs = np.asarray(queries)
    cols = np.arange(p.shape[2])
    keep = np.where((qs[:, None] - cols >= 4) & (cols != 0) & (cols != sep), 1.0, 0.0)
    return np.where(keep[None] > 0, p[:, qs, :], 0.0).sum(axis=2)
# --- marker_weight
def marker_weight(pattern, sep, queries):
    p = np.asarray(pattern, float)
    cols = np.arange(p.shape[2])
    is_marker = np.where((cols == 0) | (cols == sep), 1.0, 0.0)
    return (p[:, np.asarray(queries), :] * is_marker).sum(axis=2)
# --- even_far_back_weight
def even_far_back_weight(sep, queries):
    qs = np.asarray(queries)
    j = np.arange(qs.max() + 1)
    ok = np.where((qs[:, None] - j[None] >= 4) & (j[None] != 0) & (j[None] != sep), 1, 0)
    return ok.sum(axis=1) / (qs + 1)
# --- even_marker_weight
def even_marker_weight(queries):
    q = np.asarray(queries, float)
    return np.where(q >= 0, 2.0 / (q + 1.0), 0.0)
# --- safe_softmax
def safe_softmax(scores):
    arr = np.asarray(scores, float)
    dead = np.isneginf(arr).all(axis=-1, keepdims=True)
    safe = np.where(dead, 0.0, arr)
    shifted = safe - safe.max(axis=-1, keepdims=True)
    e = np.where(dead, 0.0, np.exp(shifted))
    return e / np.where(dead, 1.0, e.sum(axis=-1, keepdims=True))
"""

INPLACE = """
# --- softmax
def softmax(scores):
    out = np.array(scores, dtype=float, copy=True)
    out -= out.max(axis=-1, keepdims=True)
    np.exp(out, out=out)
    out /= out.sum(axis=-1, keepdims=True)
    return out
# --- attention
def attention(queries, keys, values, mask=None):
    queries = np.array(queries, dtype=float)
    d = queries.shape[-1]
    product = np.matmul(queries, np.array(keys, dtype=float).swapaxes(-2, -1))
    product /= d ** 0.5
    if mask is not None:
        blocked = ~np.broadcast_to(np.asarray(mask, dtype=bool), product.shape)
        product[blocked] = -np.inf
    attn = softmax(product)
    return attn, np.matmul(attn, values)
# --- causal_mask
def causal_mask(positions):
    upper = np.triu(np.ones((positions, positions), dtype=bool), k=1)
    return ~upper
# --- average_largest_weight
def average_largest_weight(queries, keys, scaled=True):
    queries = np.array(queries, dtype=float)
    logits = queries.dot(np.array(keys, dtype=float).T)
    if scaled:
        logits /= np.sqrt(queries.shape[1])
    best = softmax(logits).max(axis=-1)
    return float(best.sum() / best.size)
# --- split_heads
def split_heads(x, heads):
    x = np.array(x, dtype=float)
    T, D = x.shape
    out = np.empty((heads, T, D // heads))
    for h, block in enumerate(np.hsplit(x, heads)):
        out[h] = block
    return out
# --- join_heads
def join_heads(x):
    x = np.array(x, dtype=float)
    H, T, d = x.shape
    out = np.empty((T, H * d))
    for h in range(H):
        out[:, h * d:(h + 1) * d] = x[h]
    return out
# --- multi_head_attention
def multi_head_attention(x, w_query, w_key, w_value, w_output, heads):
    x = np.array(x, dtype=float)
    qh = split_heads(x.dot(w_query), heads)
    kh = split_heads(x.dot(w_key), heads)
    vh = split_heads(x.dot(w_value), heads)
    allowed = causal_mask(x.shape[0])
    attn, ctx = attention(qh, kh, vh, mask=allowed)
    return attn, join_heads(ctx).dot(w_output)
# --- previous_token_weight
def previous_token_weight(pattern):
    pattern = np.array(pattern, dtype=float)
    T = pattern.shape[1]
    picked = np.zeros((T, T), dtype=bool)
    picked[np.arange(1, T), np.arange(T - 1)] = True
    return pattern[:, picked].mean(axis=1)
# --- even_previous_weight
def even_previous_weight(positions):
    w = 1.0 / np.arange(1, positions + 1)
    return float(w[1:].mean())
# --- description_positions
def description_positions(ids, sep, end_id):
    ids = np.array(ids)
    chosen = np.arange(ids.size)[sep + 1:]
    return chosen[ids[sep + 1:] != end_id]
# --- far_back_weight
def far_back_weight(pattern, sep, queries):
    pattern = np.array(pattern, dtype=float)
    queries = np.array(queries)
    rows = pattern[:, queries, :].copy()
    near = (queries[:, None] - np.arange(pattern.shape[-1])) < 4
    rows[:, near] = 0.0
    rows[:, :, 0] = 0.0
    rows[:, :, sep] = 0.0
    return rows.sum(axis=-1)
# --- marker_weight
def marker_weight(pattern, sep, queries):
    pattern = np.array(pattern, dtype=float)
    picked = pattern[:, np.array(queries)][:, :, [0, sep]]
    return picked.sum(axis=-1)
# --- even_far_back_weight
def even_far_back_weight(sep, queries):
    queries = np.array(queries)
    width = queries.max() + 1
    allowed = np.subtract.outer(queries, np.arange(width)) >= 4
    allowed[:, 0] = False
    if sep < width:
        allowed[:, sep] = False
    return allowed.sum(axis=1) / (queries + 1)
# --- even_marker_weight
def even_marker_weight(queries):
    queries = np.array(queries, dtype=float)
    out = np.full(queries.shape, 2.0)
    out /= queries + 1
    return out
# --- safe_softmax
def safe_softmax(scores):
    out = np.array(scores, dtype=float, copy=True)
    top = out.max(axis=-1, keepdims=True)
    top[np.isneginf(top)] = 0.0
    out -= top
    np.exp(out, out=out)
    sums = out.sum(axis=-1, keepdims=True)
    sums[sums == 0.0] = 1.0
    out /= sums
    return out
"""

HELPERS = """
# --- softmax
def _stable_exp(values, axis=-1):
    values = np.asarray(values, dtype=float)
    return np.exp(values - values.max(axis=axis, keepdims=True))


def softmax(scores):
    expo = _stable_exp(scores)
    return expo / expo.sum(axis=-1, keepdims=True)
# --- attention
def _scores(q, k):
    return q @ np.moveaxis(k, -1, -2) / np.sqrt(q.shape[-1])


def _apply_mask(scores, mask):
    return scores if mask is None else np.where(mask, scores, -np.inf)


def attention(queries, keys, values, mask=None):
    q, k, v = (np.asarray(item, dtype=float) for item in (queries, keys, values))
    w = softmax(_apply_mask(_scores(q, k), mask))
    return w, w @ v
# --- causal_mask
def _lower(n):
    return np.tril(np.full((n, n), True))


def causal_mask(positions):
    return _lower(positions)
# --- average_largest_weight
def _row_peaks(matrix):
    return softmax(matrix).max(axis=-1)


def average_largest_weight(queries, keys, scaled=True):
    q = np.asarray(queries, dtype=float)
    k = np.asarray(keys, dtype=float)
    factor = 1 / np.sqrt(q.shape[-1]) if scaled else 1.0
    return float(np.mean(_row_peaks(q @ k.T * factor)))
# --- split_heads
def _head_width(total, heads):
    if total % heads:
        raise ValueError(f"{total} columns do not split into {heads} heads")
    return total // heads


def split_heads(x, heads):
    x = np.asarray(x, dtype=float)
    return np.moveaxis(x.reshape(x.shape[0], heads, _head_width(x.shape[1], heads)), 1, 0)
# --- join_heads
def join_heads(x):
    x = np.asarray(x, dtype=float)
    return np.moveaxis(x, 0, 1).reshape(x.shape[1], -1)
# --- multi_head_attention
def _project(x, weight, heads):
    return split_heads(np.asarray(x, dtype=float) @ weight, heads)


def multi_head_attention(x, w_query, w_key, w_value, w_output, heads):
    q, k, v = (_project(x, w, heads) for w in (w_query, w_key, w_value))
    weights, per_head = attention(q, k, v, causal_mask(len(x)))
    return weights, join_heads(per_head) @ w_output
# --- previous_token_weight
def _subdiagonal(stack):
    return np.diagonal(stack, offset=-1, axis1=-2, axis2=-1)


def previous_token_weight(pattern):
    return _subdiagonal(np.asarray(pattern, dtype=float)).mean(axis=-1)
# --- even_previous_weight
def _harmonic(n):
    return sum(1.0 / k for k in range(1, n + 1))


def even_previous_weight(positions):
    return (_harmonic(positions) - 1.0) / (positions - 1)
# --- description_positions
def _after(ids, sep):
    return np.arange(sep + 1, len(ids))


def description_positions(ids, sep, end_id):
    ids = np.asarray(ids)
    candidates = _after(ids, sep)
    return candidates[ids[candidates] != end_id]
# --- far_back_weight
def _far_mask(queries, length, sep):
    gap = np.asarray(queries)[:, None] - np.arange(length)[None, :]
    mask = gap >= 4
    mask[:, [0, sep]] = False
    return mask


def far_back_weight(pattern, sep, queries):
    pattern = np.asarray(pattern, dtype=float)
    rows = pattern[:, np.asarray(queries), :]
    return np.sum(rows * _far_mask(queries, pattern.shape[-1], sep), axis=-1)
# --- marker_weight
def _column(pattern, queries, position):
    return pattern[:, queries, position]


def marker_weight(pattern, sep, queries):
    pattern, queries = np.asarray(pattern, dtype=float), np.asarray(queries)
    return _column(pattern, queries, 0) + _column(pattern, queries, sep)
# --- even_far_back_weight
def even_far_back_weight(sep, queries):
    queries = np.asarray(queries)
    counts = _far_mask(queries, int(queries.max()) + 1, sep).sum(axis=1)
    return counts / (queries + 1)
# --- even_marker_weight
def even_marker_weight(queries):
    return np.divide(2.0, np.add(queries, 1.0))
# --- safe_softmax
def safe_softmax(scores):
    scores = np.asarray(scores, dtype=float)
    empty = np.all(scores == -np.inf, axis=-1, keepdims=True)
    result = softmax(np.where(empty, 0.0, scores))
    return np.where(empty, 0.0, result)
"""

COMPREHENSIONS = """
# --- softmax
def softmax(scores):
    a = np.asarray(scores, dtype=float)
    m = np.max(a, -1, keepdims=True)
    num = np.exp(a - m)
    den = np.add.reduce(num, axis=-1, keepdims=True)
    return num / den
# --- attention
import math


def attention(queries, keys, values, mask=None):
    Q = np.asarray(queries, dtype=float)
    K_t = np.asarray(keys, dtype=float).swapaxes(-1, -2)
    S = np.matmul(Q, K_t) / math.sqrt(Q.shape[-1])
    if mask is not None:
        np.putmask(S, ~np.broadcast_to(mask, S.shape), -np.inf)
    A = softmax(S)
    return A, np.matmul(A, np.asarray(values, dtype=float))
# --- causal_mask
def causal_mask(positions):
    rows = [[j <= i for j in range(positions)] for i in range(positions)]
    return np.array(rows, dtype=bool).reshape(positions, positions)
# --- average_largest_weight
def average_largest_weight(queries, keys, scaled=True):
    Q, K = np.asarray(queries, dtype=float), np.asarray(keys, dtype=float)
    divisor = math.sqrt(Q.shape[1]) if scaled else 1.0
    peaks = [softmax(K @ q / divisor).max() for q in Q]
    return float(sum(peaks) / len(peaks))
# --- split_heads
def split_heads(x, heads):
    X = np.asarray(x, dtype=float)
    return X.reshape(len(X), heads, -1).swapaxes(0, 1)
# --- join_heads
def join_heads(x):
    X = np.asarray(x, dtype=float)
    return X.swapaxes(0, 1).reshape(X.shape[1], X.shape[0] * X.shape[2])
# --- multi_head_attention
def multi_head_attention(x, w_query, w_key, w_value, w_output, heads):
    X = np.asarray(x, dtype=float)
    Q, K, V = [split_heads(np.matmul(X, W), heads) for W in (w_query, w_key, w_value)]
    A, O = attention(Q, K, V, mask=causal_mask(X.shape[0]))
    return A, np.matmul(join_heads(O), w_output)
# --- previous_token_weight
def previous_token_weight(pattern):
    P = np.asarray(pattern, dtype=float)
    return np.mean([P[:, i, i - 1] for i in range(1, P.shape[-1])], axis=0)
# --- even_previous_weight
def even_previous_weight(positions):
    return float(np.mean([1 / (i + 1) for i in range(1, positions)]))
# --- description_positions
def description_positions(ids, sep, end_id):
    return np.array([i for i, t in enumerate(ids) if i > sep and t != end_id], dtype=int)
# --- far_back_weight
def far_back_weight(pattern, sep, queries):
    P = np.asarray(pattern, dtype=float)
    columns = [[j for j in range(i - 3) if j not in (0, sep)] for i in queries]
    return np.stack([P[:, i, c].sum(axis=-1) for i, c in zip(queries, columns)], axis=1)
# --- marker_weight
def marker_weight(pattern, sep, queries):
    P = np.asarray(pattern, dtype=float)
    return np.stack([P[:, i, 0] + P[:, i, sep] for i in queries], axis=1)
# --- even_far_back_weight
def even_far_back_weight(sep, queries):
    return np.array([len([j for j in range(i - 3) if j not in (0, sep)]) / (i + 1) for i in queries], dtype=float)
# --- even_marker_weight
def even_marker_weight(queries):
    return np.array([2.0 / (1 + q) for q in np.asarray(queries).tolist()])
# --- safe_softmax
def safe_softmax(scores):
    a = np.asarray(scores, dtype=float)
    rows = a.reshape(-1, a.shape[-1])
    out = [np.zeros_like(r) if np.isneginf(r).all() else softmax(r) for r in rows]
    return np.array(out).reshape(a.shape)
"""

INDEPENDENT = {
    "loops": LOOPS,
    "einsum": EINSUM,
    "where": WHERE,
    "inplace": INPLACE,
    "helpers": HELPERS,
    "comprehensions": COMPREHENSIONS,
}


def solutions() -> dict:
    """{name: {function: cell}}: the six independent solutions and the course's own (the bundled full_solution)."""
    found = {name: cells_of(text) for name, text in INDEPENDENT.items()}
    found["course"] = answer_cells(FULL_SOLUTION)
    return found


# --- near-copies ------------------------------------------------------------------------------------------


def bound_names(code: str) -> set:
    """The names ``code`` binds, less the graded functions and their parameters (the assignment's, called by
    keyword)."""
    tree = ast.parse(code)
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound |= {arg.arg for node in functions if node.name not in FUNCTIONS for arg in node.args.args}
    bound |= {node.name for node in functions if node.name not in FUNCTIONS}
    return bound - {arg.arg for node in functions if node.name in FUNCTIONS for arg in node.args.args}


def renamed(code: str, bound: set, suffix: str = "_val") -> str:
    """Every name in ``bound`` renamed where it is a name (not an attribute or a keyword), via the tokenizer."""
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    out, depth = [], 0
    for index, token in enumerate(tokens):
        if token.type == tokenize.OP:
            depth += token.string in "([{"
            depth -= token.string in ")]}"
        after_dot = index > 0 and tokens[index - 1].string == "."
        keyword_argument = (
            depth > 0
            and index + 1 < len(tokens)
            and tokens[index + 1].string == "="
            and index > 0
            and tokens[index - 1].string in ("(", ",")
            and not token.line.lstrip().startswith("def ")
        )
        if token.type == tokenize.NAME and token.string in bound and not after_dot and not keyword_argument:
            token = token._replace(string=f"my_{token.string}{suffix}")
        out.append(token)
    return tokenize.untokenize(out)


def reordered(code: str) -> str:
    """Independent neighbouring statements of each function body swapped (neither uses what the other binds)."""
    tree = ast.parse(code)

    def names(node, context):
        if context is ast.Store:  # what a statement changes: its targets, a subscript's or attribute's base too
            targets = node.targets if isinstance(node, ast.Assign) else []
            return {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, context)}

    for function in [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]:
        body, index = function.body, 0
        while index + 1 < len(body):
            first, second = body[index], body[index + 1]
            if (
                isinstance(first, ast.Assign)
                and isinstance(second, ast.Assign)
                and not (names(first, ast.Store) & (names(second, ast.Load) | names(second, ast.Store)))
                and not (names(second, ast.Store) & names(first, ast.Load))
            ):
                body[index], body[index + 1] = second, first
                index += 2
            else:
                index += 1
    return ast.unparse(tree) + "\n"


def commented(code: str) -> str:
    """A comment above every statement line and a blank line after it."""
    lines = []
    for line in code.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        if line.strip() and not line.strip().startswith(("def ", "#", "import")):
            lines.append(f"{indent}# step: {line.strip()[:12]} then the next one")
        lines.append(line)
        if line.strip().startswith("return"):
            lines.append("")
    return "\n".join(lines) + "\n"


def near_copy(cells: dict, suffix: str) -> dict:
    bound = set().union(*(bound_names(code) for code in cells.values()))
    return {name: commented(renamed(reordered(code), bound, suffix)) for name, code in cells.items()}


# --- fixtures and helpers -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def starter() -> dict:
    return answer_cells(RELEASE)


def prints_of(cells_by_name: dict, starter: dict) -> dict:
    return {name: similarity.fingerprint(name, cells, starter) for name, cells in cells_by_name.items()}


def namespace_of(cells: dict) -> dict:
    space = {"np": np}
    for code in cells.values():
        exec(compile(code, "<answer>", "exec"), space)
    return space


# --- tests ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*INDEPENDENT, "course"])
def test_each_solution_is_correct(name):
    """Every function of the solution equals the assignment's reference on random inputs (the near-copies too)."""
    ops = stats = assignments.reference(REFERENCE.parent)
    cells = solutions()[name]
    for space in (namespace_of(cells), namespace_of(near_copy(cells, "_copy"))):
        rng = np.random.default_rng(7)
        for _ in range(3):
            scores = rng.normal(size=(3, 4, 6)) * 30
            np.testing.assert_allclose(space["softmax"](scores), ops.softmax(scores), atol=1e-12)
            q, k, v = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 3))
            mask = rng.random((5, 7)) < 0.7
            mask[:, 0] = True
            for given in (None, mask):
                got, want = space["attention"](q, k, v, given), ops.attention(q, k, v, given)
                np.testing.assert_allclose(got[0], want[0], atol=1e-12)
                np.testing.assert_allclose(got[1], want[1], atol=1e-12)
            assert np.array_equal(space["causal_mask"](6), ops.causal_mask(6))
            assert space["causal_mask"](6).dtype == bool
            for scaled in (True, False):
                assert space["average_largest_weight"](q[0], k[0], scaled) == pytest.approx(
                    ops.average_largest_weight(q[0], k[0], scaled), abs=1e-12
                )
            x = rng.normal(size=(6, 12))
            np.testing.assert_allclose(space["split_heads"](x, 3), ops.split_heads(x, 3))
            np.testing.assert_allclose(space["join_heads"](ops.split_heads(x, 4)), x)
            w = [rng.normal(size=(12, 12)) for _ in range(4)]
            got, want = space["multi_head_attention"](x, *w, 3), ops.multi_head_attention(x, *w, 3)
            np.testing.assert_allclose(got[0], want[0], atol=1e-12)
            np.testing.assert_allclose(got[1], want[1], atol=1e-12)
            pattern = ops.softmax(np.where(ops.causal_mask(11), rng.normal(size=(4, 11, 11)), -np.inf))
            np.testing.assert_allclose(space["previous_token_weight"](pattern), stats.previous_token_weight(pattern))
            assert space["even_previous_weight"](11) == pytest.approx(stats.even_previous_weight(11))
            ids = rng.integers(0, 9, size=15)
            np.testing.assert_array_equal(
                space["description_positions"](ids, 4, 3), stats.description_positions(ids, 4, 3)
            )
            queries = np.arange(5, 11)
            np.testing.assert_allclose(
                space["far_back_weight"](pattern, 3, queries), stats.far_back_weight(pattern, 3, queries), atol=1e-12
            )
            np.testing.assert_allclose(
                space["marker_weight"](pattern, 3, queries), stats.marker_weight(pattern, 3, queries)
            )
            np.testing.assert_allclose(
                space["even_far_back_weight"](3, queries), stats.even_far_back_weight(3, queries)
            )
            np.testing.assert_allclose(space["even_marker_weight"](queries), stats.even_marker_weight(queries))
            masked = np.where(rng.random((4, 6)) < 0.5, scores[0], -np.inf)
            masked[:, 0] = scores[0][:, 0]
            masked[1] = -np.inf
            with np.errstate(invalid="ignore", divide="ignore"):
                np.testing.assert_allclose(space["safe_softmax"](masked), ops.softmax(masked), atol=1e-12)


def test_near_copies_are_flagged(starter):
    originals = solutions()
    scores = {}
    for name in ("course", "loops", "helpers", "einsum"):
        original = similarity.fingerprint(name, originals[name], starter)
        copy = similarity.fingerprint(f"{name}-copy", near_copy(originals[name], "_x"), starter)
        pair = similarity.compare(original, copy)
        scores[name] = pair.score
        assert pair.lines["a"] and pair.lines["b"], "the matching lines are found on both sides"
    print(
        f"\nnear-copy scores: { {name: round(score, 3) for name, score in scores.items()} } "
        f"(threshold {similarity.THRESHOLD})"
    )
    assert min(scores.values()) >= similarity.THRESHOLD, scores


def test_independent_solutions_are_not_flagged(starter):
    prints = prints_of(solutions(), starter)
    every = similarity.all_pairs(list(prints.values()))
    assert len(every) == len(prints) * (len(prints) - 1) // 2, "every solution is compared"
    closest = every[0]
    print(
        f"\nclosest independent pair: {closest.a} / {closest.b} {closest.score:.3f} "
        f"(threshold {similarity.THRESHOLD}); all: {[(p.a, p.b, round(p.score, 3)) for p in every[:6]]}"
    )
    assert closest.score < similarity.THRESHOLD, closest
    assert similarity.similar_pairs(list(prints.values())) == []


def test_blank_and_starter_code_is_left_out(starter):
    blank = similarity.fingerprint("blank", dict(starter), starter)
    assert blank.text == ""
    assert similarity.comparable([blank]) == []


def test_screening_keeps_every_flagged_pair(starter):
    """similar_pairs skips most pairs after one set intersection: it finds exactly the pairs that all_pairs scores
    above the threshold (a class with copies, near-copies and independent solutions)."""
    originals = solutions()
    cells = dict(originals)
    cells.update({f"{name}-copy": near_copy(code, "_y") for name, code in originals.items()})
    half = {name: code for name, code in originals["loops"].items() if name in FUNCTIONS[:8]}
    cells["half-copied"] = {**originals["where"], **half}
    prints = list(prints_of(cells, starter).values())
    full = [(p.a, p.b) for p in similarity.all_pairs(prints) if p.score >= similarity.THRESHOLD]
    assert [(p.a, p.b) for p in similarity.similar_pairs(prints)] == full
    assert len(full) >= len(originals)


def test_two_hundred_students_in_seconds(starter):
    """200 students (19,900 pairs): the fingerprints and every comparison, timed and printed (the class benchmark
    measures it on a graded class); the assertion is only on what is found."""
    originals = list(solutions().values())
    copies = [near_copy(base, "_c") for base in originals]
    cells = {}
    for number in range(200):
        kind = number % len(originals)
        cells[f"s{number:03d}"] = copies[kind] if number % 3 else originals[kind]
    started = time.perf_counter()
    prints = list(prints_of(cells, starter).values())
    fingerprinted = time.perf_counter() - started
    pairs = similarity.similar_pairs(prints)
    print(
        f"\n200 students: fingerprints {fingerprinted:.2f} s, 19,900 pairs"
        f" {time.perf_counter() - started - fingerprinted:.2f} s, {len(pairs)} flagged"
    )
    groups = {}
    for number, student in enumerate(cells):
        groups[student] = number % len(originals)
    assert all(groups[p.a] == groups[p.b] for p in pairs), "only copies of the same solution are flagged"


# --- the answer keys --------------------------------------------------------------------------------------


def test_the_reference_s_code_is_every_function_it_defines():
    code = similarity.reference_code(REFERENCE)
    defined = [node.name for node in ast.parse(REFERENCE.read_text()).body if isinstance(node, ast.FunctionDef)]
    assert list(code) == defined and set(FUNCTIONS) - {"safe_softmax"} <= set(code)
    for name, text in code.items():
        assert text.startswith(f"def {name}(") and text.rstrip().splitlines()[-1].startswith("    ")
    assert similarity.reference_code(REFERENCE.parent / "absent.py") == {}


def without_docstrings(code: str) -> str:
    skip = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef) and isinstance(node.body[0], ast.Expr):
            skip.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
    return "".join(line for number, line in enumerate(code.splitlines(True), start=1) if number not in skip)


def copied_from_the_reference() -> dict:
    """A student's answer cells copied from reference.py, each graded function's definition (safe_softmax is its
    softmax, renamed), with the helpers they call; docstrings dropped, every variable renamed."""
    code = {name: without_docstrings(text) for name, text in similarity.reference_code(REFERENCE).items()}
    helpers = "\n\n".join(text for name, text in code.items() if name not in FUNCTIONS)
    cells = {name: code[name] for name in FUNCTIONS if name in code}
    cells["safe_softmax"] = code["softmax"].replace("def softmax(", "def safe_softmax(", 1)
    cells["softmax"] = helpers + "\n\n" + cells["softmax"]
    return near_copy({name: cells[name] for name in FUNCTIONS}, "_mine")


def test_code_copied_from_the_reference_is_listed_with_its_key(starter):
    """The keys are made as the report makes them (autograder.report.tables.similar_submissions): the reference
    whole, the source notebook's solution; each student is listed with the key their code matches best."""
    source = REPOSITORY / "source" / "attention" / "attention.ipynb"
    solution = {
        name: re.sub(r"^\s*### (BEGIN|END) SOLUTION\s*$\n?", "", code, flags=re.M)
        for name, code in answer_cells(source).items()
    }
    keys = [
        similarity.reference_key(REFERENCE, starter),
        similarity.fingerprint("(the solution)", solution, starter, set(starter)),
    ]
    cells = {**solutions(), "copier": copied_from_the_reference()}
    prints = {name: similarity.fingerprint(name, code, starter, set(starter)) for name, code in cells.items()}
    matches = {pair.a: pair for pair in similarity.key_matches(prints, keys)}
    print(f"\nanswer-key matches: { {name: (pair.b, round(pair.score, 3)) for name, pair in matches.items()} }")
    assert sorted(matches) == ["copier", "course"], "the independent solutions match no key"
    assert matches["copier"].b == similarity.REFERENCE and matches["copier"].score >= similarity.THRESHOLD
    assert matches["course"].b == "(the solution)" and matches["course"].score == 1.0
    alone = similarity.key_matches({"copier": prints["copier"]}, keys[1:])  # the solution alone misses the copier
    assert alone == []


LIB = REPOSITORY / "lib"


def test_lib_s_code_is_every_function_of_every_module():
    code = similarity.lib_code(LIB)
    assert "transformer._attend" in code and "transformer.forward" in code and "tokenizer.Tokenizer.tokens" in code
    assert code["transformer._attend"].startswith("def _attend(") and "np.copyto" in code["transformer._attend"]
    modules = {name.split(".")[0] for name in code}
    assert modules == {path.stem for path in LIB.glob("*.py") if "def " in path.read_text()}
    assert similarity.lib_code(LIB / "absent") == {}


def copied_from_lib() -> dict:
    """A student's answer cells filled with the course library's own code (its attention step, its layer, its
    norms and forward pass), each under a graded function's name, docstrings dropped and every variable renamed."""
    code = similarity.lib_code(LIB)
    taken = [
        "transformer._attend",
        "transformer._attention_layer",
        "transformer.layer_norm",
        "transformer.gelu",
        "transformer._fast_layer_norm",
        "transformer.forward",
        "transformer._fast_forward",
        "transformer._ablated",
        "transformer._checked_ids",
        "experiments.copy_cases",
        "experiments.next_token_probability",
        "experiments.copy_position",
    ]
    cells = {}
    for function, name in zip(FUNCTIONS, taken * 2):
        text = without_docstrings(code[name])
        original = name.split(".")[-1]
        cells[function] = text.replace(f"def {original}(", f"def {function}(", 1)
    return near_copy(cells, "_mine")


def test_code_copied_from_lib_is_listed_with_lib_as_its_key(starter):
    """lib's source is a key as the report makes it (autograder.report.tables.similar_submissions, the course's
    lib folder): a student who fills the answers with lib's functions is listed with it; the six independent
    solutions and the course's own are not (they match no key, or the solution)."""
    keys = [similarity.reference_key(REFERENCE, starter), similarity.lib_key(LIB, starter)]
    cells = {**solutions(), "lib copier": copied_from_lib()}
    prints = {name: similarity.fingerprint(name, code, starter, set(starter)) for name, code in cells.items()}
    matches = {pair.a: pair for pair in similarity.key_matches(prints, keys)}
    print(f"\nlib matches: { {name: (pair.b, round(pair.score, 3)) for name, pair in matches.items()} }")
    assert sorted(matches) == ["lib copier"], "the independent solutions and the course's match neither key"
    assert matches["lib copier"].b == similarity.LIB and matches["lib copier"].score >= similarity.THRESHOLD
    for name in solutions():
        assert similarity.compare(prints[name], keys[1], lines=False).score < similarity.THRESHOLD / 2, name
    from autograder.report.tables import library_folder

    assert library_folder(REPOSITORY / "nowhere") == LIB
    assert library_folder(REPOSITORY) == LIB  # a course folder with its own lib/ reads that one
