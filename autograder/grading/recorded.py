"""The class's recorded forward passes, as a student's kernel reads them.

A class's forward cache (autograder.grading.forward writes it) holds lib's own forward passes (logits and every
layer's patterns) of the texts the assignment's notebook runs the store's model on. A grading kernel answers
those passes from the cache instead of recomputing them: the same float64 numbers, bit for bit, as fresh writable
arrays (private copy-on-write mappings of the files, so a text costs nothing until its numbers are read).

This module is what does it inside the kernel, where nothing of the grader exists: it imports only the standard
library, NumPy and lib. The forward cache carries a copy of it (``recorded.py``) and a start file (``start.py``)
that the kernel runs when it starts (IPython's ``exec_files``); ``install`` sets ``lib.transformer.recorded``, the
hook lib's ``forward`` asks before computing, and ``lib.transformer.recorded_probabilities``, the hook that
lib.experiments' ``next_token_probability`` asks (the ablation experiment: each case's P(next token) with some heads
zeroed). Nothing else changes: for other texts, other cases or zeroed heads, another model, or whenever a
student's ``attention`` is given, lib computes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from lib import transformer

FORWARD_CACHE = "ATTENTION_FORWARD_CACHE"  # the kernel's environment variable naming the cache (a folder)


@functools.lru_cache(maxsize=None)
def model_digest(folder: str) -> str:
    """A fingerprint of the recorded model in ``folder``: its weights and settings."""
    hashed = hashlib.sha256()
    for name in ("weights.npz", "manifest.json"):
        hashed.update((Path(folder) / name).read_bytes())
    return hashed.hexdigest()[:20]


@functools.lru_cache(maxsize=None)
def model_settings(folder: str) -> dict:
    """The recorded model's settings (layers, heads, ...) from its manifest."""
    return json.loads((Path(folder) / "manifest.json").read_text())["settings"]


def text_key(ids) -> str:
    """The name of one text (its token ids) in a cache's index."""
    return hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes()).hexdigest()[:24]


def probabilities_key(cases, dropped) -> str:
    """The name of one ablation query (lib.experiments.next_token_probability's cases, each (ids, next id), and the
    zeroed heads as ``{layer: (head, ...)}``) in a cache's index."""
    hashed = hashlib.sha256()
    for ids, following in cases:
        hashed.update(np.asarray(ids, dtype=np.int64).tobytes())
        hashed.update(np.asarray([-1, following], dtype=np.int64).tobytes())  # -1: no id, so no two cases run together
    hashed.update(json.dumps(sorted((int(layer), list(map(int, heads))) for layer, heads in dropped.items())).encode())
    return hashed.hexdigest()[:24]


@functools.lru_cache(maxsize=4)
def recorded_probabilities(path: str, digest: str) -> dict:
    """The ablation queries recorded in the cache at ``path`` for the model ``digest``: {key: [P, ...]}, else {}."""
    try:
        index = json.loads((Path(path) / "index.json").read_text())
        return index.get("probabilities", {}) if index.get("model") == digest else {}
    except (OSError, ValueError, AttributeError):
        return {}


@functools.lru_cache(maxsize=4)
def open_cache(path: str, digest: str):
    """The forward cache in the folder ``path`` when it was written for the model ``digest``, else None:
    (its index, the byte offset of the data in logits.npy and in patterns.npy, the logits' width)."""
    try:
        index = json.loads((Path(path) / "index.json").read_text())
        if index.get("model") != digest:
            return None
        offsets = {}
        for name in ("logits", "patterns"):
            stored = np.load(Path(path) / f"{name}.npy", mmap_mode="r")  # only its header is read
            if stored.dtype != np.float64:
                return None
            offsets[name] = stored.offset
            if name == "logits":
                width = stored.shape[1]
            del stored
        return index["texts"], offsets, width
    except (OSError, ValueError, KeyError, TypeError):
        return None


def private_copy(path: Path, offset: int, shape: tuple) -> np.ndarray:
    """float64 numbers at ``offset`` bytes into ``path``, as a fresh writable array of its own: a private
    copy-on-write mapping, so nothing is copied until it is written and a write never reaches the file."""
    return np.memmap(path, dtype=np.float64, mode="c", offset=offset, shape=shape).view(np.ndarray)


class RecordedPasses:
    """``lib.transformer.recorded`` for the cache in ``path``: ``(ids, folder)`` -> (logits, patterns) recorded
    for these ids and this model, or None to compute."""

    def __init__(self, path: Path | str):
        self.path = Path(path)

    def __call__(self, ids, folder) -> tuple | None:
        opened = open_cache(str(self.path), model_digest(str(folder)))
        if opened is None:
            return None
        texts, offsets, width = opened
        found = texts.get(text_key(ids))
        if found is None:
            return None
        row, element = found  # where this text starts in each file
        settings = model_settings(str(folder))
        positions = len(ids)
        logits = private_copy(self.path / "logits.npy", offsets["logits"] + 8 * row * width, (positions, width))
        patterns = private_copy(
            self.path / "patterns.npy",
            offsets["patterns"] + 8 * element,
            (settings["layers"], settings["heads"], positions, positions),
        )
        return logits, list(patterns)


class RecordedProbabilities:
    """``lib.transformer.recorded_probabilities`` for the cache in ``path``: ``(cases, dropped, folder)`` -> the
    (cases,) probabilities recorded for exactly these cases, zeroed heads and model, as a fresh array, or None to
    compute."""

    def __init__(self, path: Path | str):
        self.path = Path(path)

    def __call__(self, cases, dropped, folder) -> np.ndarray | None:
        found = recorded_probabilities(str(self.path), model_digest(str(folder))).get(probabilities_key(cases, dropped))
        if found is None or len(found) != len(cases):
            return None
        return np.array(found, dtype=np.float64)


def install(path: Path | str | None = None) -> RecordedPasses | None:
    """Answer lib's forward passes and its ablation queries from the cache at ``path`` (default:
    $ATTENTION_FORWARD_CACHE); nothing when neither names a folder."""
    path = path or os.environ.get(FORWARD_CACHE)
    if not path or not Path(path).is_dir():
        return None
    transformer.recorded = RecordedPasses(path)
    transformer.recorded_probabilities = RecordedProbabilities(path)
    return transformer.recorded
