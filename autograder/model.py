"""What the checks need from the store's model, computed with lib in trusted processes only.

- available(): whether data/model holds the recorded model and its head statistics;
- recorded_statistics(): data/model/head_statistics.json, as recorded by recordings/transformer.py;
- cache(): the model's measurements the checks compare with, computed once per model and kept on
  disk (a few hundred MB): every layer's attention pattern of the texts head_statistics.json was
  measured on (the runner applies a student's statistic to them, memory-mapped), their
  description positions, and lib's logits for a pool of those texts (the yardstick for a
  student's attention driving the model).

The cache is built by ``python -m autograder.model MODEL_DIR CACHE`` in a process of its own with
one BLAS thread (lib's forward pass is several times slower with threads fighting over a busy
machine), never in the student's process.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder import REPOSITORY, assignments
from autograder.sandbox import SINGLE_THREAD

MODEL_DIR = REPOSITORY / "data" / "model"
# The assignment whose reference.py defines the head statistics that head_statistics.json records and this cache
# measures (the one written definition of each, never released: autograder.assignments.reference)
STATISTICS = REPOSITORY / "source" / "attention"
CACHE_DIR = Path(tempfile.gettempdir()) / f"attention-autograder-{os.getuid()}"
POOL = 12  # texts whose lib logits are kept, for the "drives the store's model" property
UNAVAILABLE = (
    "not available: the store's model (data/model) is missing here; restore it with `git checkout -- data/model`"
)


def available() -> bool:
    """True when data/model has the weights and the recorded head statistics."""
    return (MODEL_DIR / "weights.npz").exists() and (MODEL_DIR / "head_statistics.json").exists()


@functools.lru_cache(maxsize=4)
def _statistics(folder: str) -> dict:
    record = json.loads((Path(folder) / "head_statistics.json").read_text())
    for key in ("previous", "far", "markers"):
        record[key] = np.asarray(record[key], dtype=np.float64)
    return record


def recorded_statistics() -> dict:
    """data/model/head_statistics.json: "previous", "far", "markers" as (layers, heads) arrays, and counts."""
    return _statistics(str(MODEL_DIR))


def text_count(record: dict, source: str = "head_statistics.json") -> int:
    """How many validation products the statistics were measured on ("texts", else the n that ends the definition,
    "...product_texts('validation', n)"). There is no default: the cache must measure exactly the texts the record
    was measured on, so a record that says neither raises ValueError, naming ``source`` and what to do."""
    texts = record.get("texts")
    if isinstance(texts, int) and not isinstance(texts, bool) and texts > 0:
        return texts
    if isinstance(texts, str) and texts.strip().isdigit() and int(texts) > 0:
        return int(texts)
    definition = record.get("definition")
    found = re.search(r"(\d+)\)\s*$", definition) if isinstance(definition, str) else None
    if texts is None and found and int(found.group(1)) > 0:
        return int(found.group(1))
    said = f'"texts" is {texts!r}' if texts is not None else f'"definition" is {definition!r}'
    raise ValueError(
        f"{source} does not say how many validation texts its statistics were measured on ({said}): it needs "
        '"texts", a whole number above 0, or a "definition" ending in product_texts(\'validation\', n); restore '
        "data/model (git checkout -- data/model) or record it again (make train)"
    )


@dataclass(frozen=True)
class ModelCache:
    """The store's model measured by lib on the statistics texts.

    file: flat .npy of every text's (layers, heads, T, T) patterns, one after the other, in float32
    (half the bytes to read per grading; the recorded statistics are rounded to 1e-6, float32
    weights are within 6e-8 of lib's float64 ones);
    index: (texts, 3) int rows (offset into file, T, sep); queries: all texts' description
    positions concatenated, text t's are queries[offsets[t]:offsets[t+1]]; pool: (ids, logits)
    pairs, lib's logits (T, V) of a few of the texts; record_gap: how far lib's own statistics of this
    model and catalogue are from head_statistics.json (above the record's rounding, the record
    belongs to another model or catalogue, and comparing a student with it would be unfair).
    """

    file: Path
    index: np.ndarray
    queries: np.ndarray
    offsets: np.ndarray
    layers: int
    heads: int
    pool: tuple
    record_gap: float

    def logits_for(self, ids) -> np.ndarray:
        """lib's logits of a pool text, found by its ids."""
        ids = [int(i) for i in ids]
        for text, logits in self.pool:
            if list(text) == ids:
                return logits
        raise KeyError("that text is not in the model cache's pool")


def model_fingerprint(folder: Path) -> str:
    """A fingerprint of everything the cache depends on: the model's files, the catalogue and the statistics'
    definitions."""
    hashed = hashlib.sha256()
    statistics = [STATISTICS / assignments.REFERENCE_FILE]
    for path in sorted(folder.glob("*")) + sorted((REPOSITORY / "data").glob("products*")) + statistics:
        if path.is_file():
            hashed.update(path.name.encode() + path.read_bytes())
    return hashed.hexdigest()[:16]


_building = threading.Lock()  # graders in threads of one process build the cache once


@functools.lru_cache(maxsize=4)
def _cache(folder: str) -> ModelCache:
    place = CACHE_DIR / f"model-{model_fingerprint(Path(folder))}"
    with _building:
        if not (place / "meta.npz").exists():
            _build_in_subprocess(folder, place)
    with np.load(place / "meta.npz", allow_pickle=False) as meta:
        pool = tuple((tuple(meta[f"ids_{k}"].tolist()), meta[f"logits_{k}"]) for k in range(int(meta["pool"])))
        return ModelCache(
            place / "patterns.npy",
            meta["index"],
            meta["queries"],
            meta["offsets"],
            int(meta["layers"]),
            int(meta["heads"]),
            pool,
            float(meta["record_gap"]),
        )


def _build_in_subprocess(folder: str, place: Path) -> None:
    """Run ``python -m autograder.model`` with one BLAS thread; raise with its stderr if it fails."""
    CACHE_DIR.mkdir(exist_ok=True)
    env = {**os.environ, **SINGLE_THREAD, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(
        [sys.executable, "-m", "autograder.model", folder, str(place)], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"measuring the store's model for the checks failed:\n{done.stderr[-3000:]}")


def cache() -> ModelCache:
    """The model's measurements (built on first use, then read from the disk cache)."""
    return _cache(str(MODEL_DIR))


# --- building the cache (python -m autograder.model MODEL_DIR CACHE) ----------------------------


def layout(texts, layers: int, heads: int) -> np.ndarray:
    """(texts, 3) rows (offset, T, sep): where each text's patterns start in the flat file."""
    sizes = np.array([len(ids) for ids, _ in texts], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(layers * heads * sizes**2)[:-1]])
    return np.stack([starts, sizes, [sep for _, sep in texts]], axis=1).astype(np.int64)


def build(folder: Path, place: Path) -> None:
    """Measure the model on the statistics texts and write patterns.npy and meta.npz into ``place``.

    The forward passes are the reference's head_statistics's own (one per text, in order), so the cache
    also learns how far the statistics of this model and catalogue are from the record:
    meta["record_gap"], which should be below the record's rounding (5e-7).
    """
    from lib import transformer  # the model and the catalogue: only here, where the model is measured, never
    from lib.products import product_texts  # in the process that runs a student's answers (autograder.model's users)

    heads = assignments.reference(STATISTICS)  # the head statistics' definitions (reference.py)

    _, vocabulary, manifest = transformer.load(folder)
    layers, head_count = manifest["settings"]["layers"], manifest["settings"]["heads"]
    record = _statistics(str(folder))
    texts = product_texts("validation", text_count(record, str(folder / "head_statistics.json")), folder=folder)
    index = layout(texts, layers, head_count)
    step = max(1, len(texts) // POOL)
    building = Path(tempfile.mkdtemp(prefix=place.name + ".", dir=place.parent))
    total = int(index[-1, 0] + layers * head_count * index[-1, 1] ** 2)
    flat = np.lib.format.open_memmap(building / "patterns.npy", mode="w+", dtype=np.float32, shape=(total,))
    meta, numbers = {}, iter(range(len(texts)))

    def measured_forward(ids, keep=True):
        """lib's forward pass, keeping each text's patterns in the file and a few texts' logits."""
        number = next(numbers)
        logits, patterns = transformer.forward(ids, keep=True, folder=folder)
        offset, positions, _ = index[number]
        flat[offset : offset + layers * head_count * positions**2] = np.stack(patterns).ravel()
        if number % step == 0 and number // step < POOL:
            meta[f"ids_{number // step}"], meta[f"logits_{number // step}"] = np.asarray(ids), logits
        return logits, patterns

    end = vocabulary.index(transformer.END)
    measured = heads.head_statistics(texts, measured_forward, end)
    flat.flush()
    flat = None  # the mapping closed before the folder is renamed
    described = [heads.description_positions(np.asarray(ids), sep, end) for ids, sep in texts]
    meta.update(
        index=index,
        layers=layers,
        heads=head_count,
        pool=len([k for k in meta if k.startswith("ids_")]),
        queries=np.concatenate(described).astype(np.int64),
        offsets=np.concatenate([[0], np.cumsum([len(q) for q in described])]).astype(np.int64),
        record_gap=max(float(np.abs(measured[key] - record[key]).max()) for key in ("previous", "far", "markers")),
    )
    np.savez(building / "meta.npz", **meta)
    try:
        os.rename(building, place)
    except OSError:  # another grader built it meanwhile
        shutil.rmtree(building, ignore_errors=True)


if __name__ == "__main__":
    build(Path(sys.argv[1]), Path(sys.argv[2]))
