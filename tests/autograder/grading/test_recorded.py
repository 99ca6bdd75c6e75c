"""The class's recorded forward passes: written by the grader (grading.forward), read in a kernel (grading.recorded)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograder import assignments
from autograder.grading import forward, recorded
from lib import experiments, transformer
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


def test_recorded_ablation_queries_return_lib_s_own_probabilities_bit_for_bit(tmp_path, monkeypatch):
    """write_forward_cache(queries=...) + install: next_token_probability answers each recorded (cases, heads zeroed)
    query with the very floats it computes, as a fresh array; other cases, other heads, a doctored number and
    another model's cache are each told apart (computed, read as recorded, or ignored)."""
    vocabulary = transformer.load()[1]
    cases = experiments.copy_cases(product_texts("validation", 12), vocabulary)
    assert len(cases) >= 3
    queries = [(cases, None), (cases, {(2, 1)}), (cases, {(0, 0), (0, 3)})]
    computed = [experiments.next_token_probability(found, zeroed) for found, zeroed in queries]
    cache = forward.write_forward_cache(tmp_path / "forward", [], queries=queries)
    monkeypatch.setattr(transformer, "recorded", None)  # both restored after the test
    monkeypatch.setattr(transformer, "recorded_probabilities", None)
    recorded.install(cache)
    asked = []
    monkeypatch.setattr(transformer, "_fast_forward", lambda *a, **k: asked.append(a) or pytest.fail("computed"))
    for (found, zeroed), probabilities in zip(queries, computed):
        answer = experiments.next_token_probability(found, zeroed)
        assert answer.dtype == np.float64 and np.array_equal(answer, probabilities)
        answer[0] = -1.0  # its own array: the next answer is unchanged
    assert experiments.next_token_probability(cases, {(0, 3), (0, 0)})[0] == computed[2][0]  # the same heads, any order
    assert experiments.next_token_probability(cases, [(2, 1)])[0] == computed[1][0]
    assert asked == []
    store = transformer.recorded_probabilities
    assert store(cases[:-1], {}, transformer.MODEL_DIR) is None  # fewer cases: not recorded
    assert store(cases, {1: (2,)}, transformer.MODEL_DIR) is None  # other heads zeroed: not recorded
    assert store([(ids, following + 1) for ids, following in cases], {}, transformer.MODEL_DIR) is None  # other next

    doctored = tmp_path / "doctored"
    shutil.copytree(cache, doctored)
    index = json.loads((doctored / "index.json").read_text())
    key = recorded.probabilities_key(cases, {})
    index["probabilities"][key] = [2 * p for p in index["probabilities"][key]]
    (doctored / "index.json").write_text(json.dumps(index))
    recorded.install(doctored)
    assert np.array_equal(experiments.next_token_probability(cases), 2 * computed[0])  # read, so live
    (doctored / "index.json").write_text(json.dumps({**index, "model": "another model"}))
    recorded.recorded_probabilities.cache_clear()
    recorded.install(doctored)
    assert transformer.recorded_probabilities(cases, {}, transformer.MODEL_DIR) is None  # another model: ignored


def test_the_attention_notebooks_ablation_queries_are_the_ones_it_runs(monkeypatch):
    """Section 6's head_ablations and section 7's two sets of early heads ask exactly what attention's checks.py
    declares (forward_probabilities): with them recorded, the notebook's experiment computes nothing."""
    declared = assignments.load(Path(__file__).resolve().parents[3] / "source" / "attention").forward_probabilities()
    keys = set(forward.probability_keys(declared))
    asked = []

    def records(cases, dropped, folder):
        asked.append(recorded.probabilities_key(cases, dropped))
        return np.zeros(len(cases))

    monkeypatch.setattr(transformer, "recorded_probabilities", records)
    cases = declared[0][0]
    experiments.head_ablations(cases, 4, 4)
    previous = experiments.recorded_head_statistics()["previous"]
    experiments.next_token_probability(cases, {(layer, int(previous[layer].argmax())) for layer in (0, 1)})
    experiments.next_token_probability(cases, {(layer, head) for layer in (0, 1) for head in range(4)})
    assert len(asked) == len(declared) == 23 and set(asked) == keys
