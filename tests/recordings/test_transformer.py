"""Training smoke test on a tiny catalogue: runs when torch is installed, skipped (saying so) when not."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="torch is not installed: `make install-train` (pip install -e '.[train]') runs this test"
)

ROOT = Path(__file__).resolve().parents[2]


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "recordings" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_training_a_tiny_model_records_what_lib_recomputes(tmp_path, monkeypatch):
    from lib import store, transformer

    torch.set_num_threads(1)  # 2 threads on a busy 2-core machine measured 3x slower
    training = load_script("transformer")
    catalogue = load_script("catalogue")
    catalogue.write(tmp_path / "products.csv.gz", n_products=400, seed=7)  # a tiny catalogue in the real format
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    products = store.load_products("all")
    tmp_path = tmp_path / "model"
    settings = dict(training.SETTINGS, layers=2, heads=2, dimensions=32, mlp=64, merges=80)
    manifest = training.train(
        products, tmp_path, settings, seed=3, epochs=2, batch=16, lr=3e-3, evaluate_every=5, log=lambda *_: None
    )
    history = manifest["losses"]["history"]
    assert history[-1]["validation"] < history[0]["validation"]  # it learned something
    assert manifest["tokens_seen"] > 0 and manifest["settings"]["layers"] == 2
    for name in ("weights.npz", "vocabulary.json", "merges.txt", "manifest.json", "reference_logits.npz"):
        assert (tmp_path / name).exists()
    with np.load(tmp_path / "reference_logits.npz") as recorded:
        for i in range(3):
            logits = transformer.forward(recorded[f"ids_{i}"], folder=tmp_path)
            assert np.abs(logits - recorded[f"logits_{i}"]).max() < 1e-4
