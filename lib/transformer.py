"""The store's model, recomputed in NumPy from its recorded weights.

A decoder-only transformer, pre-norm, trained once by ``recordings/transformer.py``:

    x = embedding[ids]                                   # (T, D)
    for each layer:
        x = x + _attention_layer(norm1(x))               # rotary positions inside every head
        x = x + mlp(norm2(x))                            # D -> 4D -> D, GELU (tanh form)
    logits = norm(x) @ embedding.T                       # (T, V), the embedding is tied

Each layer's attention is ``_attention_layer`` (the projections, the heads joined and projected back) around one
fused private step, ``_attend``: rotary positions, the scaling, the causal mask and the softmax inside it, the
scaling folded into its rotary table, the mask applied in place. lib holds no function of its own for any operation
the course's students write, attention's or rotary positions', and no function whose output is one of theirs (the
angles, their cos and sin, the mask): those live with the grader, source/<assignment>/reference.py, and
tests/packaging/wheel_scan.py calls every function of the student wheel, private ones too, to make sure.
``forward(..., ablate={(layer, head), ...})`` zeroes heads' outputs, the experiment the notebook runs to test what
a head is for. ``forward(..., attention=f)`` puts ``f`` in place of the attention step, so a student's attention
can drive the real model. Weights are stored in the ``x @ W`` convention, the chapter's: ``queries = x @ w_query``.

``recorded`` is a hook: when set, ``forward`` with lib's own attention first asks ``recorded(ids, folder)``
for passes computed earlier and computes only when it answers None. Nobody needs it to learn or use the model;
a grader sets it in its kernels so that a class's notebooks share lib's passes. ``recorded_probabilities`` is the
same for ``lib.experiments.next_token_probability`` (the ablation experiment): when set, it is asked
``recorded_probabilities(cases, dropped, folder)``, ``dropped`` the zeroed heads as ``{layer: (head, ...)}``, for the
probabilities that function computed before for exactly these cases; here, not in lib.experiments, so that a kernel
sets it without importing the catalogue's pandas.

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
    "recorded_probabilities",
    "PRECISIONS",
]
recorded = None  # (ids, folder) -> (logits, patterns) computed before, or None: see the docstring
recorded_probabilities = None  # (cases, dropped, folder) -> (cases,) P(next token) computed before, or None


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


@functools.lru_cache(maxsize=1024)  # one entry per text length (up to 160 here) and precision
def _turns(positions: int, size: int, base: float, dtype=np.float64) -> np.ndarray:
    """The rotary table of ``_attend``, (2, T, size/2), read-only: for position t and pair i, cos and then sin of
    t * base ** (-2i / size), both multiplied by size ** -0.25, so that a turned query dotted with a turned key
    comes out already divided by sqrt(size). (Scaled, so that the table is the model's step, not anything a
    student is asked to write.)"""
    frequencies = base ** (-np.arange(0, size, 2) / size)  # (size/2,)
    turn = np.arange(positions)[:, None] * frequencies[None, :]  # (T, size/2)
    table = (np.stack([np.cos(turn), np.sin(turn)]) * size**-0.25).astype(dtype)
    table.setflags(write=False)
    return table


def _attend(paired, values, base, attention=None, dropped=()):
    """One layer's attention in every head, the model's rotary positions and causal mask inside it.

    paired: (2, heads, T, d) the layer's queries and keys, split into heads; values (heads, T, d); base: the rotary
    base. Returns (pattern (heads, T, T), mixed (heads, T, d)). Each position sees itself and the positions before
    it. ``attention(queries, keys, values, mask)``, when given, takes the place of the softmax and the mixing
    written out here: it receives the turned queries and keys (heads, T, d) and the mask (T, T), True where a
    position may be looked at. The heads listed in ``dropped`` hand on zeros instead of their mix (their pattern is
    still returned): ``forward(..., ablate=...)``.
    """
    positions, size = paired.shape[-2:]
    table = _turns(positions, size, base, paired.dtype.type)
    first, second = paired[..., : size // 2], paired[..., size // 2 :]
    turned = np.concatenate([first * table[0] - second * table[1], first * table[1] + second * table[0]], axis=-1)
    hidden = ~np.tri(positions, dtype=bool)  # (T, T): True above the diagonal, the later positions
    if attention is None:
        pattern = turned[0] @ turned[1].swapaxes(-1, -2)  # (heads, T, T) scores, already scaled (see _turns)
        np.copyto(pattern, -np.inf, where=hidden)  # later positions: weight exactly 0
        pattern -= pattern.max(-1, keepdims=True)  # the diagonal is always seen: the max is finite
        np.exp(pattern, out=pattern)
        pattern /= pattern.sum(-1, keepdims=True)  # each row sums to 1
        mixed = pattern @ values  # (heads, T, d)
    else:
        queries, keys = turned * size**0.25  # the scaling taken back out: the given attention scales
        pattern, mixed = attention(queries, keys, values, ~hidden)
        mixed = np.array(mixed, dtype=np.float64) if len(dropped) else np.asarray(mixed, dtype=np.float64)
        if mixed.ndim < 3:
            raise ValueError(f"attention's output must have shape (heads, T, d), got {mixed.shape}")
    if len(dropped):
        mixed[..., list(dropped), :, :] = 0.0
    return pattern, mixed


def _attention_layer(x, weights, prefix, settings, attention=None, dropped=()):
    """One layer's multi-head attention on normalised input x (T, D): returns output (T, D) and pattern
    (heads, T, T). Head h reads columns h*d:(h+1)*d of the projections; ``_attend`` does the rest."""
    positions, width = x.shape
    heads = settings["heads"]
    shape = (positions, heads, width // heads)
    paired = np.stack([(x @ weights[prefix + m]).reshape(shape).swapaxes(0, 1) for m in ("query", "key")])
    values = (x @ weights[prefix + "value"]).reshape(shape).swapaxes(0, 1)  # (heads, T, d)
    pattern, mixed = _attend(paired, values, settings["rotary_base"], attention, dropped)
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


def _fast_layer_norm(x, weight, bias, eps):
    centered = x - x.mean(-1, keepdims=True)
    spread = (centered * centered).mean(-1, keepdims=True)
    spread += eps
    np.sqrt(spread, out=spread)
    centered /= spread
    centered *= weight
    centered += bias
    return centered


def _fast_forward(ids: np.ndarray, keep: bool, folder: str, ablate: dict, rows=None):
    """The float32 pass over one text's ids (T,), or over a batch of texts of one length (B, T), each on its own
    (a text cut short and padded at its end keeps its logits: no position sees a later one). ``rows`` (B,): the
    one position per text whose logits to return, (B, V), instead of every position's."""
    weights, settings = _fast_weights(folder), _load(folder)[2]["settings"]
    heads, width, eps = settings["heads"], settings["dimensions"], settings["norm_eps"]
    *lead, positions = ids.shape
    size = width // settings["heads"]
    x = weights["embedding"][ids]  # (..., T, D)
    patterns = []
    for layer in range(settings["layers"]):
        p = f"layers.{layer}."
        normed = _fast_layer_norm(x, weights[p + "norm1.weight"], weights[p + "norm1.bias"], eps)
        projected = (normed @ weights[p + "qkv"]).reshape(*lead, positions, 3, heads, size)
        qkv = np.moveaxis(projected, -3, 0).swapaxes(-3, -2)  # (3, ..., heads, T, d)
        pattern, mixed = _attend(qkv[:2], qkv[2], settings["rotary_base"], dropped=ablate.get(layer, ()))
        x = x + mixed.swapaxes(-3, -2).reshape(*lead, positions, width) @ weights[p + "output"]
        normed = _fast_layer_norm(x, weights[p + "norm2.weight"], weights[p + "norm2.bias"], eps)
        inner = normed @ weights[p + "mlp.in"]  # (..., T, 4D)
        inner += weights[p + "mlp.in_bias"]
        x += gelu(inner) @ weights[p + "mlp.out"]
        x += weights[p + "mlp.out_bias"]
        patterns.append(pattern)
    if rows is not None:
        x = x[np.arange(len(rows)), rows]  # (B, D): only the positions asked for
    logits = _fast_layer_norm(x, weights["norm.weight"], weights["norm.bias"], eps) @ weights["unembedding"]  # (T, V)
    return (logits, patterns) if keep else logits


def _ablated(ablate, folder) -> dict:
    """``ablate`` as {layer: (heads, ...)}, or a ValueError that says which pair is out of the model's range."""
    settings = _load(str(folder))[2]["settings"]
    layers, heads = settings["layers"], settings["heads"]
    dropped: dict = {}
    for pair in ablate or ():
        try:
            layer, head = (int(number) for number in pair)
        except (TypeError, ValueError):
            raise ValueError(f"ablate takes (layer, head) pairs of integers, counted from 0; got {pair!r}") from None
        if not (0 <= layer < layers and 0 <= head < heads):
            raise ValueError(
                f"ablate's pair {pair!r} is outside the model: layers 0..{layers - 1} and heads 0..{heads - 1}, "
                "counted from 0 as patterns[layer][head] is"
            )
        dropped.setdefault(layer, set()).add(head)
    return {layer: tuple(sorted(found)) for layer, found in dropped.items()}


def forward(ids, keep: bool = False, attention=None, folder: Path | str = MODEL_DIR, dtype=np.float64, ablate=None):
    """Logits (T, V) for token ids; with ``keep=True`` also each layer's pattern, (heads, T, T) per layer.

    ``attention(queries, keys, values, mask)`` takes the place of lib's own attention in every head and
    returns (weights, output); it receives (heads, T, size) arrays with rotary positions already applied and
    the causal mask (T, T), boolean, True where a position may be looked at.
    ``ablate``: (layer, head) pairs, counted from 0 as ``patterns[layer][head]``; each of those heads hands on
    zeros instead of its output (the experiment "zero one head"; its pattern is still computed and kept).
    ``dtype=np.float32`` takes the fast path (see the module docstring; not with ``attention``).
    """
    dtype = _precision(dtype)
    dropped = _ablated(ablate, folder)
    if dtype == np.float32:
        if attention is not None:
            raise ValueError(
                "dtype=float32 is lib's fused fast path, with its own attention inline; "
                "a given attention runs in the float64 path: leave dtype at its default"
            )
        return _fast_forward(_checked_ids(ids, folder), keep, str(folder), dropped)
    if attention is None and recorded is not None and not dropped:
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
        normed = layer_norm(x, weights[p + "norm1.weight"], weights[p + "norm1.bias"], eps)
        mixed, pattern = _attention_layer(normed, weights, p, settings, attention, dropped.get(layer, ()))
        x = x + mixed
        hidden = layer_norm(x, weights[p + "norm2.weight"], weights[p + "norm2.bias"], eps)
        inner = hidden @ weights[p + "mlp.in"]  # (T, 4D)
        inner += weights[p + "mlp.in_bias"]
        x += gelu(inner) @ weights[p + "mlp.out"]  # x is this layer's own array: updated in place,
        x += weights[p + "mlp.out_bias"]  # the bias added last, as (x + mlp) + bias was
        patterns.append(pattern)
    logits = layer_norm(x, weights["norm.weight"], weights["norm.bias"], eps) @ weights["embedding"].T  # (T, V)
    return (logits, patterns) if keep else logits
