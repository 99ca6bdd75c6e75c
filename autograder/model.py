"""What the checks need from the store's model, computed in the grader's process with lib.

- available(): whether data/model holds the recorded model and its head statistics;
- recorded_statistics(): data/model/head_statistics.json, as recorded by recordings/transformer.py;
- statistics_texts(): the texts those statistics were measured on, as (ids, sep);
- patterns(): every layer's attention pattern of those texts, cached on disk once, for the runner
  to apply a student's statistic to (it reads the file memory-mapped);
- reference_logits(ids): lib's own forward pass, the yardstick for a student's attention.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib import heads as lib_heads

MODEL_DIR = Path(__file__).resolve().parent.parent / "data" / "model"
CACHE_DIR = Path(tempfile.gettempdir()) / f"attention-autograder-{os.getuid()}"


def available() -> bool:
    """True when data/model has the weights and the recorded head statistics."""
    return (MODEL_DIR / "weights.npz").exists() and (MODEL_DIR / "head_statistics.json").exists()


UNAVAILABLE = "not available: the store's model (data/model) is missing here; restore it with `git checkout -- data/model`"


@functools.lru_cache(maxsize=1)
def recorded_statistics() -> dict:
    """data/model/head_statistics.json: "previous", "far", "markers" as (layers, heads) arrays, and counts."""
    record = json.loads((MODEL_DIR / "head_statistics.json").read_text())
    for key in ("previous", "far", "markers"):
        record[key] = np.asarray(record[key], dtype=np.float64)
    return record


def _text_count(record) -> int:
    """How many validation products the statistics were measured on ("texts", or the definition's n)."""
    if "texts" in record:
        return int(record["texts"])
    return int(re.search(r"(\d+)\)\s*$", record["definition"]).group(1))


@functools.lru_cache(maxsize=1)
def statistics_texts() -> tuple[tuple[tuple[int, ...], int], ...]:
    """The (ids, sep) texts behind head_statistics.json: the first n validation products."""
    from lib.products import product_texts

    texts = product_texts("validation", _text_count(recorded_statistics()))
    return tuple((tuple(ids), sep) for ids, sep in texts)


@functools.lru_cache(maxsize=1)
def end_id() -> int:
    from lib import transformer

    return transformer.load()[1].index(transformer.END)


def reference_logits(ids) -> np.ndarray:
    """lib's forward pass of the store's model: logits (T, V)."""
    from lib import transformer

    return transformer.forward(np.asarray(ids, dtype=np.int64))


@dataclass(frozen=True)
class Patterns:
    """Every layer's pattern of the statistics texts, flat in one .npy file.

    index: (texts, 3) int rows (offset into the flat file, T, sep); text t's patterns are
    flat[offset : offset + layers*heads*T*T] reshaped to (layers, heads, T, T).
    queries: all texts' description positions concatenated; text t's are
    queries[offsets[t]:offsets[t+1]].
    """

    file: Path
    index: np.ndarray
    queries: np.ndarray
    offsets: np.ndarray
    layers: int
    heads: int


def _model_digest() -> str:
    digest = hashlib.sha256()
    for name in ("weights.npz", "head_statistics.json"):
        digest.update((MODEL_DIR / name).read_bytes())
    return digest.hexdigest()[:16]


def _write_patterns(file: Path, texts, index: np.ndarray, layers: int, heads: int) -> None:
    """Run lib's forward on every text and write its (layers, heads, T, T) stack at its offset in ``file``."""
    from lib import transformer

    total = int(index[-1, 0] + layers * heads * index[-1, 1] ** 2)
    temporary = file.with_name(f"{file.stem}.{os.getpid()}.tmp.npy")
    flat = np.lib.format.open_memmap(temporary, mode="w+", dtype=np.float64, shape=(total,))
    for (ids, _), (offset, positions, _) in zip(texts, index):
        _, stack = transformer.forward(np.asarray(ids, dtype=np.int64), keep=True)
        flat[offset : offset + layers * heads * positions**2] = np.stack(stack).ravel()
    flat.flush()
    del flat
    os.replace(temporary, file)


@functools.lru_cache(maxsize=1)
def patterns() -> Patterns:
    """The statistics texts' patterns, computed once per model and kept in a cache file."""
    from lib import transformer

    texts = statistics_texts()
    settings = transformer.load()[2]["settings"]
    layers, heads = settings["layers"], settings["heads"]
    sizes = np.array([len(ids) for ids, _ in texts], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(layers * heads * sizes**2)[:-1]])
    index = np.stack([starts, sizes, [sep for _, sep in texts]], axis=1).astype(np.int64)
    CACHE_DIR.mkdir(exist_ok=True)
    file = CACHE_DIR / f"patterns-{_model_digest()}.npy"
    if not file.exists():
        _write_patterns(file, texts, index, layers, heads)
    described = [lib_heads.description_positions(np.asarray(ids), sep, end_id()) for ids, sep in texts]
    offsets = np.concatenate([[0], np.cumsum([len(q) for q in described])]).astype(np.int64)
    queries = np.concatenate(described).astype(np.int64)
    return Patterns(file, index, queries, offsets, layers, heads)
