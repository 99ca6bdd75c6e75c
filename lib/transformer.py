"""The store's model, recomputed in NumPy from its recorded weights.

A decoder-only transformer, pre-norm, trained once by ``recordings/transformer.py``:

    x = embedding[ids]                                   # (T, D)
    for each layer:
        x = x + _attention_layer(norm1(x))               # rotary positions inside every head
        x = x + mlp(norm2(x))                            # D -> 4D -> D, GELU (tanh form)
    logits = norm(x) @ embedding.T                       # (T, V), the embedding is tied

Each layer's attention is one function, ``_attention_layer``: the projections, rotary positions, causal
scaled dot-product attention in every head, the heads joined and projected back, written out together
(lib holds no function of its own for any operation the course's students write, attention's or rotary
positions': those live with the grader, source/<assignment>/reference.py). ``forward(..., attention=f)``
puts ``f`` in place of the attention step, so a student's attention can drive the real model. Weights are
stored in the ``x @ W`` convention, the chapter's: ``queries = x @ w_query``.

``recorded`` is a hook: when set, ``forward`` with lib's own attention first asks ``recorded(ids, folder)``
for passes computed earlier and computes only when it answers None. Nobody needs it to learn or use the model;
a grader sets it in its kernels so that a class's notebooks share lib's passes.

``forward(ids, dtype=np.float32)`` is a second, fast path for throughput: the same model in float32 (the
weights exactly as stored), with q|k|v in one product and attention written out in place, about 2.5x the
float64 path's tokens per second. Its logits are within about 2e-5 of the float64 ones, not 1e-12, so
graders and the chapter's checks use the float64 default; the fast path is checked against it
(tests/lib/test_transformer.py).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from lib import DATA_DIR
from lib.tokenizer import BOS, END, SEP, Tokenizer

MODEL_DIR = DATA_DIR / "model"  # lib.data_folder: the installed copy, or the repository's data/

__all__ = [
    "BOS",
    "SEP",
    "END",
    "MODEL_DIR",
    "load",
    "forward",
    "product_ids",
    "recorded",
    "PRECISIONS",
]
recorded = None  # (ids, folder) -> (logits, patterns) computed before, or None: see the docstring


@functools.lru_cache(maxsize=None)
def _load(folder: str):
    folder = Path(folder)
    if not (folder / "weights.npz").exists():
        raise FileNotFoundError(
            f"no recorded model in {folder}: the repository ships one in data/model/; "
            "restore it with `git checkout -- data/model` or re-train it with `python recordings/transformer.py`"
        )
    with np.load(folder / "weights.npz") as stored:
        weights = {name: stored[name].astype(np.float64) for name in stored.files}
    for array in weights.values():
        array.setflags(write=False)
    manifest = json.loads((folder / "manifest.json").read_text())
    return weights, Tokenizer.load(folder), manifest


def load(folder: Path | str = MODEL_DIR):
    """The recorded model: (weights, vocabulary, manifest). Weights are read-only float64 arrays."""
    weights, tokenizer, manifest = _load(str(folder))
    return weights, list(tokenizer.vocabulary), manifest


def tokenizer(folder: Path | str = MODEL_DIR) -> Tokenizer:
    """The model's BPE tokenizer (vocabulary and merges recorded beside the weights)."""
    return _load(str(folder))[1]


def product_ids(name: str, description: str, index: dict, longest: int, folder: Path | str = MODEL_DIR) -> list[int]:
    """Token ids of one product, ``<s> name <sep> description <end>``, cut to its first ``longest`` tokens."""
    bpe = tokenizer(folder)
    pieces = [BOS, *bpe.tokens(name), SEP, *bpe.tokens(description or ""), END]
    return [index[p] for p in pieces[:longest]]


def layer_norm(x, weight, bias, eps):
    centered = x - x.mean(-1, keepdims=True)  # x - mean, computed once (it was twice)
    variance = (centered * centered).mean(-1, keepdims=True)
    return centered / np.sqrt(variance + eps) * weight + bias


_GELU_SCALE = np.sqrt(2.0 / np.pi)


def gelu(x):
    """GELU in its tanh form, the one the training code uses: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    For float64 and float32 input (what forward passes) it is computed step by step in one buffer, with the cube as
    ``x * x * x``: NumPy's ``x**3`` goes through the general ``pow`` (about 135 ns an element here, 17x
    the rest of the function) and each (T, 4D) temporary costs fresh pages; together they were over half
    of a forward pass. The result differs from the formula with ``x**3`` by a rounding of the cube
    (below 1e-14 in the logits). Other dtypes take the formula as written.
    """
    if not isinstance(x, np.ndarray) or x.dtype not in (np.float64, np.float32):
        return 0.5 * x * (1.0 + np.tanh(_GELU_SCALE * (x + 0.044715 * x**3)))
    inner = x * x
    inner *= x
    inner *= 0.044715
    inner += x
    inner *= _GELU_SCALE
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= x
    inner *= 0.5
    return inner


@functools.lru_cache(maxsize=1024)  # one entry per text length (up to 160 here): 8 thrashed on mixed lengths
def _angles(positions: int, size: int, base: float):
    frequencies = base ** (-np.arange(0, size, 2) / size)  # (size/2,)
    angles = np.arange(positions)[:, None] * frequencies[None, :]  # (T, size/2)
    return np.cos(angles), np.sin(angles)


def _attention_layer(x, weights, prefix, settings, attention=None):
    """One layer's multi-head attention on normalised input x (T, D): returns output (T, D) and pattern
    (heads, T, T). The heads are each head's share of the numbers (head h: columns h*d:(h+1)*d); each
    position sees itself and the positions before it; ``attention(queries, keys, values, mask)``, when
    given, takes the place of the scaled dot-product attention written out here."""
    positions, width = x.shape
    heads = settings["heads"]
    size = width // heads
    shape = (positions, heads, size)
    queries = (x @ weights[prefix + "query"]).reshape(shape).swapaxes(0, 1)  # (heads, T, d)
    keys = (x @ weights[prefix + "key"]).reshape(shape).swapaxes(0, 1)  # (heads, T, d)
    values = (x @ weights[prefix + "value"]).reshape(shape).swapaxes(0, 1)  # (heads, T, d)
    cos, sin = _angles(positions, size, settings["rotary_base"])  # (T, d/2) each: position t turns by t * frequency
    both = np.stack([queries, keys])  # (2, heads, T, d)
    first, second = both[..., : size // 2], both[..., size // 2 :]
    queries, keys = np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)  # rotary
    seen = np.tril(np.ones((positions, positions), dtype=bool))  # (T, T): True where j <= i
    if attention is None:
        scores = queries @ keys.swapaxes(-1, -2) / np.sqrt(size)  # (heads, T, T)
        scores = np.where(seen, scores, -np.inf)  # later positions: weight exactly 0
        exps = np.exp(scores - scores.max(-1, keepdims=True))  # the diagonal is always seen: the max is finite
        pattern = exps / exps.sum(-1, keepdims=True)  # (heads, T, T), each row sums to 1
        mixed = pattern @ values  # (heads, T, d)
    else:
        pattern, mixed = attention(queries, keys, values, seen)
        mixed = np.asarray(mixed, dtype=np.float64)
        if mixed.ndim < 3:
            raise ValueError(f"attention's output must have shape (heads, T, d), got {mixed.shape}")
    *lead, heads, rows, size = mixed.shape
    joined = mixed.swapaxes(-3, -2).reshape(*lead, rows, heads * size)  # (T, heads * d)
    return joined @ weights[prefix + "output"], np.asarray(pattern)


PRECISIONS = (np.float64, np.float32)  # forward's dtypes: the reference, and the fast path


def _precision(dtype):
    try:
        dtype = np.dtype(dtype).type
    except TypeError:
        dtype = None
    if dtype not in PRECISIONS:
        raise ValueError(
            "forward's dtype must be np.float64 (the default, the reference) or np.float32 (the fast path)"
        )
    return dtype


def _checked_ids(ids, folder) -> np.ndarray:
    """ids as a 1-D int64 array, or a ValueError that says what is wrong with them."""
    weights, _, manifest = _load(str(folder))
    longest, vocabulary = manifest["settings"]["longest"], len(weights["embedding"])
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1 or len(ids) == 0:
        raise ValueError(f"forward takes one text as a 1-D list of token ids, got shape {ids.shape}")
    if len(ids) > longest:
        raise ValueError(f"{len(ids)} tokens is longer than the model's {longest}: cut the text first")
    if ids.min() < 0 or ids.max() >= vocabulary:
        raise ValueError(f"token ids must lie in 0..{vocabulary - 1}")
    return ids


# ----------------------------------------------------------------------------------------------
# the fast path: float32, fused. The same model as forward's float64 path, written for throughput.


@functools.lru_cache(maxsize=None)
def _fast_weights(folder: str) -> dict:
    """The stored float32 weights as they are, with each layer's query|key|value side by side (D, 3D)."""
    with np.load(Path(folder) / "weights.npz") as stored:
        weights = {name: stored[name].astype(np.float32) for name in stored.files}
    layers = _load(folder)[2]["settings"]["layers"]
    for layer in range(layers):
        p = f"layers.{layer}."
        weights[p + "qkv"] = np.concatenate([weights[p + "query"], weights[p + "key"], weights[p + "value"]], axis=1)
    weights["unembedding"] = np.ascontiguousarray(weights["embedding"].T)  # (D, V)
    for array in weights.values():
        array.setflags(write=False)
    return weights


@functools.lru_cache(maxsize=1024)
def _fast_tables(positions: int, size: int, base: float):
    """float32 rotary cos and sin (T, size/2) and the causal mask as scores to add: 0 or -inf (T, T)."""
    cos, sin = _angles(positions, size, base)
    hidden = np.triu(np.full((positions, positions), -np.inf, dtype=np.float32), k=1)
    return cos.astype(np.float32), sin.astype(np.float32), hidden


def _fast_layer_norm(x, weight, bias, eps):
    centered = x - x.mean(-1, keepdims=True)
    spread = (centered * centered).mean(-1, keepdims=True)
    spread += eps
    np.sqrt(spread, out=spread)
    centered /= spread
    centered *= weight
    centered += bias
    return centered


def _fast_forward(ids: np.ndarray, keep: bool, folder: str):
    weights, settings = _fast_weights(folder), _load(folder)[2]["settings"]
    heads, width, eps = settings["heads"], settings["dimensions"], settings["norm_eps"]
    positions, size = len(ids), width // settings["heads"]
    half, scale = size // 2, np.float32(1.0 / np.sqrt(size))
    cos, sin, hidden = _fast_tables(positions, size, settings["rotary_base"])
    x = weights["embedding"][ids]  # (T, D)
    patterns = []
    for layer in range(settings["layers"]):
        p = f"layers.{layer}."
        normed = _fast_layer_norm(x, weights[p + "norm1.weight"], weights[p + "norm1.bias"], eps)
        qkv = (normed @ weights[p + "qkv"]).reshape(positions, 3, heads, size).transpose(1, 2, 0, 3)  # (3, heads, T, d)
        first, second = qkv[:2, ..., :half], qkv[:2, ..., half:]  # queries and keys together
        turned = np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)  # (2, heads, T, d)
        pattern = turned[0] @ turned[1].swapaxes(-1, -2)  # (heads, T, T) scores
        pattern *= scale
        pattern += hidden  # later positions: -inf
        pattern -= pattern.max(-1, keepdims=True)  # the diagonal is always seen
        np.exp(pattern, out=pattern)
        pattern /= pattern.sum(-1, keepdims=True)  # (heads, T, T) weights
        mixed = (pattern @ qkv[2]).transpose(1, 0, 2).reshape(positions, width)  # (T, D)
        x = x + mixed @ weights[p + "output"]
        normed = _fast_layer_norm(x, weights[p + "norm2.weight"], weights[p + "norm2.bias"], eps)
        inner = normed @ weights[p + "mlp.in"]  # (T, 4D)
        inner += weights[p + "mlp.in_bias"]
        x += gelu(inner) @ weights[p + "mlp.out"]
        x += weights[p + "mlp.out_bias"]
        patterns.append(pattern)
    logits = _fast_layer_norm(x, weights["norm.weight"], weights["norm.bias"], eps) @ weights["unembedding"]  # (T, V)
    return (logits, patterns) if keep else logits


def forward(ids, keep: bool = False, attention=None, folder: Path | str = MODEL_DIR, dtype=np.float64):
    """Logits (T, V) for token ids; with ``keep=True`` also each layer's pattern, (heads, T, T) per layer.

    ``attention(queries, keys, values, mask)`` takes the place of lib's own attention in every head and
    returns (weights, output); it receives (heads, T, size) arrays with rotary positions already applied and
    the causal mask (T, T), boolean, True where a position may be looked at.
    ``dtype=np.float32`` takes the fast path (see the module docstring; not with ``attention``).
    """
    dtype = _precision(dtype)
    if dtype == np.float32:
        if attention is not None:
            raise ValueError(
                "dtype=float32 is lib's fused fast path, with its own attention inline; "
                "a given attention runs in the float64 path: leave dtype at its default"
            )
        return _fast_forward(_checked_ids(ids, folder), keep, str(folder))
    if attention is None and recorded is not None:
        found = recorded(ids, folder)
        if found is not None:
            logits, patterns = found
            return (logits, patterns) if keep else logits
    ids = _checked_ids(ids, folder)
    weights, _, manifest = _load(str(folder))
    settings = manifest["settings"]
    eps = settings["norm_eps"]
    x = weights["embedding"][ids]  # (T, D)
    patterns = []
    for layer in range(settings["layers"]):
        p = f"layers.{layer}."
        mixed, pattern = _attention_layer(
            layer_norm(x, weights[p + "norm1.weight"], weights[p + "norm1.bias"], eps), weights, p, settings, attention
        )
        x = x + mixed
        hidden = layer_norm(x, weights[p + "norm2.weight"], weights[p + "norm2.bias"], eps)
        inner = hidden @ weights[p + "mlp.in"]  # (T, 4D)
        inner += weights[p + "mlp.in_bias"]
        x += gelu(inner) @ weights[p + "mlp.out"]  # x is this layer's own array: updated in place,
        x += weights[p + "mlp.out_bias"]  # the bias added last, as (x + mlp) + bias was
        patterns.append(pattern)
    logits = layer_norm(x, weights["norm.weight"], weights["norm.bias"], eps) @ weights["embedding"].T  # (T, V)
    return (logits, patterns) if keep else logits
