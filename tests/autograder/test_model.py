"""autograder.model's bookkeeping, on tiny folders in tmp_path (no forward pass of the store's model): whether the
model is there, the recorded statistics read as arrays, how many texts they were measured on, the flat file's
layout, a pool text's logits found by its ids, the fingerprint that names a cache, and the disk cache: read when
built, built once (in a subprocess, one thread of a process at a time), its failure said with the builder's
stderr. That the measurements match lib's is tests/autograder/answers/test_grading.py's (record_gap)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from autograder import model

STATISTICS = {
    "previous": [[0.1, 0.2], [0.3, 0.4]],
    "far": [[0.5, 0.6], [0.7, 0.8]],
    "markers": [[0.0, 1.0], [1.0, 0.0]],
    "texts": 300,
    "definition": "lib.heads.head_statistics over lib.products.product_texts('validation', 300)",
}


def model_folder(root: Path, *names: str) -> Path:
    folder = root / "model"
    folder.mkdir(exist_ok=True)
    for name in names:
        content = json.dumps(STATISTICS) if name == "head_statistics.json" else f"{name} bytes"
        (folder / name).write_text(content)
    return folder


def test_the_model_is_available_only_with_weights_and_statistics(tmp_path, monkeypatch):
    monkeypatch.setattr(model, "MODEL_DIR", model_folder(tmp_path, "weights.npz"))
    assert model.available() is False
    monkeypatch.setattr(model, "MODEL_DIR", model_folder(tmp_path, "head_statistics.json"))
    assert model.available() is True
    (tmp_path / "model" / "weights.npz").unlink()
    assert model.available() is False


def test_the_recorded_statistics_are_read_as_arrays(tmp_path, monkeypatch):
    monkeypatch.setattr(model, "MODEL_DIR", model_folder(tmp_path, "head_statistics.json"))
    record = model.recorded_statistics()
    for key in ("previous", "far", "markers"):
        assert record[key].dtype == np.float64 and record[key].shape == (2, 2)
        assert np.array_equal(record[key], np.array(STATISTICS[key]))
    assert record["texts"] == 300
    assert model.recorded_statistics() is record  # read once per folder


def test_the_text_count_is_the_records_or_its_definitions():
    assert model.text_count({"texts": "12", "definition": "product_texts('validation', 300)"}) == 12
    assert model.text_count({"definition": "lib.products.product_texts('validation', 300)"}) == 300
    assert model.text_count({"definition": "product_texts('validation', 7)  "}) == 7
    assert model.text_count({"texts": 300}) == 300


@pytest.mark.parametrize(
    "record, said",
    [
        ({}, '"definition" is None'),
        ({"definition": "lib.heads.head_statistics over every validation text"}, '"definition" is \'lib.heads'),
        ({"definition": 300}, '"definition" is 300'),
        ({"texts": "many", "definition": "product_texts('validation', 300)"}, "\"texts\" is 'many'"),
        ({"texts": 0}, '"texts" is 0'),
        ({"texts": True}, '"texts" is True'),
        ({"texts": None, "definition": "product_texts('validation', 0)"}, '"definition" is "product_texts'),
    ],
)
def test_a_record_without_its_text_count_is_refused_with_what_to_do(record, said):
    """No default: the cache measured on other texts than the record's would grade students against other numbers."""
    with pytest.raises(ValueError) as refused:
        model.text_count(record, "/srv/model/head_statistics.json")
    message = str(refused.value)
    assert message.startswith("/srv/model/head_statistics.json does not say how many validation texts"), message
    assert said in message and "git checkout -- data/model" in message and "make train" in message


def test_the_layout_says_where_each_texts_patterns_start():
    texts = [([1, 2, 3], 1), ([4, 5], 0), ([6, 7, 8, 9], 2)]
    index = model.layout(texts, layers=2, heads=3)
    assert index.dtype == np.int64
    assert index.tolist() == [[0, 3, 1], [2 * 3 * 9, 2, 0], [2 * 3 * (9 + 4), 4, 2]]


def cache_with_pool() -> model.ModelCache:
    pool = (((1, 2, 3), np.ones((3, 4))), ((4, 5), np.zeros((2, 4))))
    empty = np.zeros((0, 3), dtype=np.int64)
    return model.ModelCache(Path("patterns.npy"), empty, np.zeros(0), np.zeros(1), 2, 3, pool, 0.0)


def test_a_pool_texts_logits_are_found_by_its_ids():
    cache = cache_with_pool()
    assert cache.logits_for(np.array([4, 5], dtype=np.int32)).shape == (2, 4)
    assert cache.logits_for([1, 2, 3]).sum() == 12
    with pytest.raises(KeyError, match="that text is not in the model cache's pool"):
        cache.logits_for([1, 2])


def test_the_fingerprint_follows_the_models_files_and_their_names(tmp_path):
    folder = model_folder(tmp_path, "weights.npz", "manifest.json")
    (folder / "a-folder").mkdir()
    first = model.model_fingerprint(folder)
    assert len(first) == 16 and model.model_fingerprint(folder) == first
    (folder / "a-folder" / "ignored").write_text("x")  # only the folder's own files count
    assert model.model_fingerprint(folder) == first
    (folder / "weights.npz").write_text("other weights")
    changed = model.model_fingerprint(folder)
    assert changed != first
    (folder / "weights.npz").rename(folder / "weights2.npz")
    assert model.model_fingerprint(folder) != changed


def write_meta(place: Path, record_gap: float = 2e-7) -> None:
    place.mkdir(parents=True)
    np.save(place / "patterns.npy", np.zeros(4, dtype=np.float32))
    np.savez(
        place / "meta.npz",
        index=np.array([[0, 2, 1]]),
        queries=np.array([1]),
        offsets=np.array([0, 1]),
        layers=1,
        heads=1,
        pool=1,
        ids_0=np.array([7, 8]),
        logits_0=np.full((2, 3), 0.5),
        record_gap=record_gap,
    )


def test_a_built_cache_is_read_from_the_disk_without_building(tmp_path, monkeypatch):
    folder = model_folder(tmp_path, "weights.npz")
    monkeypatch.setattr(model, "CACHE_DIR", tmp_path / "caches")
    write_meta(tmp_path / "caches" / f"model-{model.model_fingerprint(folder)}")
    monkeypatch.setattr(model, "_build_in_subprocess", lambda folder, place: pytest.fail("built again"))
    cache = model._cache(str(folder))
    assert cache.file == tmp_path / "caches" / f"model-{model.model_fingerprint(folder)}" / "patterns.npy"
    assert (cache.layers, cache.heads, cache.record_gap) == (1, 1, 2e-7)
    assert cache.index.tolist() == [[0, 2, 1]] and cache.offsets.tolist() == [0, 1]
    assert cache.pool[0][0] == (7, 8) and np.array_equal(cache.logits_for([7, 8]), np.full((2, 3), 0.5))


def test_threads_build_the_cache_once(tmp_path, monkeypatch):
    folder = model_folder(tmp_path, "weights.npz")
    monkeypatch.setattr(model, "CACHE_DIR", tmp_path / "caches")
    built = []

    def fake_build(folder, place):
        built.append(place)
        write_meta(place)

    monkeypatch.setattr(model, "_build_in_subprocess", fake_build)
    caches = []
    threads = [threading.Thread(target=lambda: caches.append(model._cache(str(folder)))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert built == [tmp_path / "caches" / f"model-{model.model_fingerprint(folder)}"]
    assert len(caches) == 4 and all(cache.record_gap == 2e-7 for cache in caches)


def test_a_failed_build_is_said_with_the_builders_stderr(tmp_path, monkeypatch):
    monkeypatch.setattr(model, "CACHE_DIR", tmp_path / "caches")
    with pytest.raises(RuntimeError, match="measuring the store's model for the checks failed:\n") as failed:
        model._build_in_subprocess(str(tmp_path / "no-model"), tmp_path / "caches" / "model-x")
    assert "Traceback" in str(failed.value) and "no-model" in str(failed.value)
    assert not (tmp_path / "caches" / "model-x").exists()
