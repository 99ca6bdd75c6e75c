"""autograder.grading.forward, without the store's model's forward passes (a fake ``transformer.forward`` and a fake
model folder stand in): where the caches live, a cache's name (the model's digest and the texts'), the folder
write_forward_cache lays out (each text once, where each starts, the kernel's reader and start script, written
whole and another writer's finished cache kept), what prune removes (half-written, long unused, a link without
following it), and when a cache is built or used (class_forward_cache, shared_forward_cache). That the kernel reads
lib's own numbers back bit for bit is tests/autograder/grading/test_recorded.py's."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from autograder import model
from autograder.grading import forward, recorded
from lib import transformer

LAYERS, HEADS, VOCABULARY = 2, 3, 5


@pytest.fixture
def fake_model(tmp_path, monkeypatch) -> SimpleNamespace:
    """A model folder (what model_digest reads), and a forward pass whose numbers say which text and layer they are
    (the texts it was called with: ``calls``)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.npz").write_bytes(b"weights")
    (folder / "manifest.json").write_text('{"settings": {}}')
    calls = []

    def fake_forward(ids, keep=False, folder=None):
        calls.append(list(ids))
        size = len(ids)
        logits = np.arange(size * VOCABULARY, dtype=np.float64).reshape(size, VOCABULARY) + 1000 * ids[0]
        patterns = [np.full((HEADS, size, size), layer + ids[0], dtype=np.float64) for layer in range(LAYERS)]
        return logits, patterns

    monkeypatch.setattr(transformer, "forward", fake_forward)
    return SimpleNamespace(folder=folder, calls=calls)


def test_the_caches_home_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(forward.FORWARD_CACHE_HOME, str(tmp_path / "moved"))
    assert forward.forward_cache_home() == tmp_path / "moved"
    monkeypatch.delenv(forward.FORWARD_CACHE_HOME)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert forward.forward_cache_home() == tmp_path / "xdg" / "attention-course" / "forward"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert forward.forward_cache_home() == tmp_path / "home" / ".cache" / "attention-course" / "forward"


def test_a_caches_name_is_the_models_digest_and_the_texts():
    name = forward.cache_name([[1, 2, 3], [4, 5]])
    digest, texts = name.rsplit("-", 1)
    assert digest == recorded.model_digest(str(transformer.MODEL_DIR)) and len(texts) == 12
    assert forward.cache_name([np.array([1, 2, 3], dtype=np.int32), (4, 5)]) == name  # the ids, not their type
    assert forward.cache_name([[4, 5], [1, 2, 3]]) != name
    assert forward.cache_name([[1, 2, 3]]) != name


def test_the_cache_holds_each_text_once_and_where_it_starts(tmp_path, fake_model):
    texts = [[1, 2, 3], [4, 5], [1, 2, 3]]
    path = forward.write_forward_cache(tmp_path / "forward", texts, folder=fake_model.folder)
    assert path == tmp_path / "forward"
    assert fake_model.calls == [[1, 2, 3], [4, 5]]  # the repeat is not computed again
    assert sorted(p.name for p in path.iterdir()) == [
        "index.json",
        "logits.npy",
        "patterns.npy",
        "recorded.py",
        "start.py",
    ]
    index = json.loads((path / "index.json").read_text())
    assert index["model"] == recorded.model_digest(str(fake_model.folder))
    first, second = recorded.text_key([1, 2, 3]), recorded.text_key([4, 5])
    assert index["texts"] == {first: [0, 0], second: [3, LAYERS * HEADS * 9]}
    logits, patterns = np.load(path / "logits.npy"), np.load(path / "patterns.npy")
    assert logits.shape == (5, VOCABULARY) and logits[3, 0] == 4000.0
    assert patterns.shape == (LAYERS * HEADS * (9 + 4),)
    assert patterns[LAYERS * HEADS * 9] == 4.0 and patterns[-1] == 1 + 4.0  # text two, its last layer
    assert (path / "start.py").read_text() == forward.START
    assert (path / "recorded.py").read_bytes() == Path(recorded.__file__).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forward", "model"]  # no half-written folder left


def test_a_cache_of_no_texts_is_empty(tmp_path, fake_model):
    path = forward.write_forward_cache(tmp_path / "forward", [], folder=fake_model.folder)
    assert json.loads((path / "index.json").read_text())["texts"] == {}
    assert np.load(path / "logits.npy").size == 0 and np.load(path / "patterns.npy").size == 0


def test_another_writers_finished_cache_is_kept(tmp_path, fake_model):
    path = tmp_path / "forward"
    path.mkdir()
    (path / "index.json").write_text('{"theirs": true}')
    assert forward.write_forward_cache(path, [[1, 2]], folder=fake_model.folder) == path
    assert json.loads((path / "index.json").read_text()) == {"theirs": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forward", "model"]


def test_a_folder_in_the_way_without_an_index_is_an_error(tmp_path, fake_model):
    path = tmp_path / "forward"
    path.mkdir()
    (path / "junk").write_text("x")
    with pytest.raises(OSError):
        forward.write_forward_cache(path, [[1, 2]], folder=fake_model.folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forward", "model"]


def test_prune_removes_the_half_written_and_the_long_unused_but_never_follows_a_link(tmp_path):
    home, outside = tmp_path / "home", tmp_path / "outside"
    outside.mkdir()
    (outside / "keep-me").write_text("x")
    home.mkdir()
    (home / ".lock").write_text("")
    for name, days in (("kept", 30), ("old", forward.FORWARD_CACHE_KEPT_DAYS + 0.1), ("recent", 1)):
        (home / name).mkdir()
        (home / name / "index.json").write_text("{}")
        os.utime(home / name / "index.json", (time.time() - days * 86400,) * 2)
    (home / "half-written").mkdir()
    (home / "stray-file").write_text("x")
    (home / "link").symlink_to(outside)
    forward.prune(home, keep=home / "kept")
    assert sorted(p.name for p in home.iterdir()) == [".lock", "kept", "recent"]
    assert (outside / "keep-me").exists()


def test_the_shared_cache_is_none_without_texts_or_model_and_clears_the_old_course_copy(tmp_path, monkeypatch):
    monkeypatch.setenv(forward.FORWARD_CACHE_HOME, str(tmp_path / "home"))
    course = tmp_path / "course"
    (course / ".grading" / "forward" / "old").mkdir(parents=True)
    monkeypatch.setattr(model, "available", lambda: False)
    assert forward.shared_forward_cache(lambda: [[1, 2]], course=course) is None
    assert not (course / ".grading" / "forward").exists() and (course / ".grading").exists()
    assert not (tmp_path / "home").exists()  # nothing made for a model that is missing
    monkeypatch.setattr(model, "available", lambda: True)
    assert forward.shared_forward_cache(None, course=course) is None


def test_using_a_cache_keeps_it_from_being_pruned(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv(forward.FORWARD_CACHE_HOME, str(home))
    monkeypatch.setattr(model, "available", lambda: True)
    texts = [[1, 2]]
    path = home / forward.cache_name(texts)
    path.mkdir(parents=True)
    (path / "index.json").write_text("{}")
    long_ago = time.time() - 10 * 86400
    os.utime(path / "index.json", (long_ago, long_ago))
    assert forward.shared_forward_cache(lambda: texts, build=False) == str(path)
    assert (path / "index.json").stat().st_mtime > long_ago + 86400


def test_the_forward_cache_is_shared_per_model_and_built_only_for_a_class_it_pays_for(tmp_path, monkeypatch):
    """class_forward_cache: one cache per model and texts (the assignment's declared forward_texts) for every
    course of the user (in forward_cache_home()), built only from FORWARD_CACHE_FROM new submissions (or on
    request), used whenever it exists; none for an assignment that declares no texts; half-written caches,
    long-unused caches and the course-local copy of earlier versions are removed."""
    built = []

    def fake_write(path, texts, folder=None, queries=()):  # the real one takes ~20 s: what is decided is tested here
        built.append(path)
        path.mkdir()
        (path / "index.json").write_text("{}")
        return path

    home = tmp_path / "home"
    monkeypatch.setenv(forward.FORWARD_CACHE_HOME, str(home))
    monkeypatch.setattr(model, "available", lambda: True)
    monkeypatch.setattr(forward, "write_forward_cache", fake_write)
    texts = [[1, 2, 3], [4, 5]]
    declared = lambda: texts  # noqa: E731 - what an assignment's checks.py declares
    digest = forward.cache_name(texts)
    assert digest.startswith(recorded.model_digest(str(transformer.MODEL_DIR)))
    ada, bob = tmp_path / "ada", tmp_path / "bob"
    (ada / ".grading" / "forward" / "old").mkdir(parents=True)  # where earlier versions kept it
    (home / "half-written").mkdir(parents=True)
    for other, days in (("old-model", forward.FORWARD_CACHE_KEPT_DAYS + 1), ("recent-model", 0)):
        (home / other).mkdir()
        (home / other / "index.json").write_text("{}")
        os.utime(home / other / "index.json", (time.time() - days * 86400,) * 2)

    def cache(course, new, wanted):
        return forward.class_forward_cache(declared, course=course, new=new, wanted=wanted)

    enough = forward.FORWARD_CACHE_FROM
    assert cache(ada, enough - 1, None) is None and not built, "built for a class too small to pay"
    assert not (ada / ".grading" / "forward").exists()
    assert sorted(p.name for p in home.iterdir()) == [".lock", "recent-model"]
    assert cache(ada, enough, False) is None and not built
    assert cache(ada, enough, None) == str(home / digest)
    assert cache(bob, 1, None) == str(home / digest), "another course does not reuse it"
    assert cache(bob, 1, True) == str(home / digest)
    assert built == [home / digest], "built more than once"
    assert forward.class_forward_cache(None, course=bob, new=100, wanted=True) is None, "no texts declared: none"
    assert forward.cache_name([[1, 2]]) != digest, "another assignment's texts get a cache of their own"


def test_a_worker_of_another_machine_builds_the_named_cache_there_once(tmp_path, monkeypatch):
    """issue 36: the coordinator names a cache folder of its own machine; a worker where it is missing builds the
    same cache (same name: the model's and the texts' digest) in its own forward_cache_home(), once for every
    worker of that machine, from the assignment's checks.py; a cache of another model is not taken for it."""
    built = []

    def fake_write(path, texts, folder=None, queries=()):
        built.append((path, texts, queries))
        path.mkdir()
        (path / "index.json").write_text("{}")
        return path

    monkeypatch.setattr(forward, "write_forward_cache", fake_write)
    monkeypatch.setattr(model, "available", lambda: True)
    monkeypatch.setenv(forward.FORWARD_CACHE_HOME, str(tmp_path / "worker-home"))
    source = tmp_path / "source" / "week1"
    source.mkdir(parents=True)
    (source / "checks.py").write_text(
        "from autograder.checks import Check\n\n"
        "CHECKS = {'check_f': Check('check_f', 'f', 1, lambda rng: [], ())}\n\n\n"
        "def forward_texts():\n    return [[1, 2, 3], [4, 5]]\n\n\n"
        "def forward_probabilities():\n    return [([([1, 2], 3)], {(0, 1)})]\n"
    )
    (source / "week1.ipynb").write_text("{}")
    texts, queries = [[1, 2, 3], [4, 5]], [([([1, 2], 3)], {(0, 1)})]
    coordinators = tmp_path / "coordinator-home" / forward.cache_name(texts, queries)  # not on this machine
    here = forward.on_this_machine(str(coordinators), source)
    assert here == str(tmp_path / "worker-home" / forward.cache_name(texts, queries))
    assert forward.on_this_machine(str(coordinators), source) == here  # the next submission: built once
    assert [(texts, queries) for _, texts, queries in built] == [(texts, queries)]  # the passes and the queries
    assert forward.on_this_machine(str(tmp_path / "coordinator-home" / forward.cache_name(texts)), source) is None
    coordinators.mkdir(parents=True)
    (coordinators / "index.json").write_text("{}")
    assert forward.on_this_machine(str(coordinators), source) == str(coordinators)  # a shared disk: used as it is
    other = tmp_path / "coordinator-home" / "another-model-0123456789ab"
    assert forward.on_this_machine(str(other), source) is None and len(built) == 1
    assert forward.on_this_machine(None, source) is None


def test_a_caches_name_also_names_its_ablation_queries():
    cases = [([1, 2, 3], 4), ([1, 5], 6)]
    plain = forward.cache_name([[1, 2, 3]])
    with_queries = forward.cache_name([[1, 2, 3]], [(cases, None)])
    assert with_queries != plain and with_queries.rsplit("-", 1)[0] == plain.rsplit("-", 1)[0]
    assert forward.cache_name([[1, 2, 3]], [(cases, {(0, 1)})]) != with_queries
    assert forward.cache_name([[1, 2, 3]], [(cases, [(0, 1)])]) == forward.cache_name([[1, 2, 3]], [(cases, {(0, 1)})])
    assert forward.cache_name([[1, 2, 3]], [(cases[:1], None)]) != with_queries
