"""The class's recorded forward passes: written by the grader (grading.forward), read in a kernel (grading.recorded)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from autograder import assignments
from autograder.grading import forward, recorded
from lib import transformer
from lib.products import product_texts


def test_forward_cache_returns_lib_s_own_numbers_bit_for_bit(tmp_path, monkeypatch):
    """write_forward_cache + install: the same arrays, writable copies; only for lib's attention, only for the
    texts it holds and only for the model it was written for."""
    texts = [ids for ids, _ in product_texts("validation", 3)]
    cache = forward.write_forward_cache(tmp_path / "forward", texts[:2] + texts[:1])  # a repeat is stored once
    assert sorted(p.name for p in cache.iterdir()) == [
        "index.json",
        "logits.npy",
        "patterns.npy",
        "recorded.py",
        "start.py",
    ]
    assert (cache / "recorded.py").read_bytes() == Path(recorded.__file__).read_bytes()
    computed = [transformer.forward(ids, keep=True) for ids in texts]
    monkeypatch.setattr(transformer, "recorded", None)  # restored after the test
    monkeypatch.setenv(recorded.FORWARD_CACHE, str(cache))
    assert recorded.install() is transformer.recorded is not None
    for ids, (logits, patterns) in zip(texts, computed):
        cached_logits, cached_patterns = transformer.forward(ids, keep=True)
        assert type(cached_logits) is np.ndarray and cached_logits.dtype == np.float64
        assert np.array_equal(cached_logits, logits)
        assert all(np.array_equal(a, b) for a, b in zip(cached_patterns, patterns)) and len(cached_patterns) == len(
            patterns
        )
        cached_logits[0, 0] = 1e9  # writable, and its own: neither the next call nor the file is affected
        cached_patterns[0][0, 0, 0] = -1.0
    assert transformer.forward(texts[0])[0, 0] == computed[0][0][0, 0]
    assert transformer.forward(texts[0], keep=True)[1][0][0, 0, 0] == computed[0][1][0][0, 0, 0]
    assert np.array_equal(np.load(cache / "logits.npy")[: len(texts[0])], computed[0][0])
    assert transformer.recorded(texts[2], transformer.MODEL_DIR) is None  # not recorded: computed
    assert transformer.recorded(texts[1], transformer.MODEL_DIR) is not None  # recorded: read

    def halved(queries, keys, values, mask):
        reference = assignments.reference(Path(__file__).resolve().parents[3] / "source" / "attention")
        weights, output = reference.attention(queries, keys, values, mask)
        return weights, output * 0.5

    assert not np.array_equal(transformer.forward(texts[0], attention=halved), computed[0][0])  # computed, not cached

    doctored = tmp_path / "doctored"
    shutil.copytree(cache, doctored)
    np.save(doctored / "logits.npy", 2 * np.load(cache / "logits.npy"))  # right model, other numbers: read, so live
    recorded.install(doctored)
    assert np.array_equal(transformer.forward(texts[0]), 2 * computed[0][0])
    other = tmp_path / "other"
    shutil.copytree(doctored, other)
    index = json.loads((other / "index.json").read_text())
    (other / "index.json").write_text(json.dumps({**index, "model": "another model"}))  # another model: ignored
    recorded.install(other)
    assert np.array_equal(transformer.forward(texts[0]), computed[0][0])
    assert recorded.install(tmp_path / "missing") is None  # no such folder: nothing installed
