"""The class's forward cache: lib's forward passes of the texts an assignment's notebook runs the store's model
on, recorded once and mapped by every kernel instead of recomputed (the same numbers to the last bit). The
kernel's side, what reads them, is autograder.grading.recorded; the cache carries a copy of it.

Which texts is the assignment's knowledge: its checks.py declares ``forward_texts()`` (read through
autograder.assignments); an assignment that declares none gets no cache. The engine names no assignment. It may
also declare ``forward_probabilities()``: the (cases, ablate) queries of lib.experiments.next_token_probability
that its notebook runs (the ablation experiment), recorded with the passes and answered the same way.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from autograder import assignments, model
from autograder.grading import recorded
from autograder.grading.task import LEDGER
from lib import transformer

# The class's forward cache is built only for a run with at least this many new or changed submissions (unless
# one is built already): below it, the build (about 20 s on the 2-core machine) costs more than it saves
# (benchmarks/forward_cache_cost.py measures both; benchmarks/README.md has the numbers)
FORWARD_CACHE_FROM = 8
FORWARD_CACHE_HOME = "ATTENTION_FORWARD_CACHE_HOME"  # the environment variable that moves the shared caches
FORWARD_CACHE_KEPT_DAYS = 2  # another cache unused this long is removed


def forward_cache_home() -> Path:
    """Where the forward caches live, shared by every course of this user: $ATTENTION_FORWARD_CACHE_HOME, else
    $XDG_CACHE_HOME/attention-course/forward, else ~/.cache/attention-course/forward."""
    if os.environ.get(FORWARD_CACHE_HOME):
        return Path(os.environ[FORWARD_CACHE_HOME])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-course" / "forward"


def cache_name(texts: list, queries: list = ()) -> str:
    """A cache's folder name: the model's digest, the texts' and the ablation queries' (so two assignments'
    caches never mix)."""
    hashed = hashlib.sha256(repr([list(map(int, ids)) for ids in texts]).encode())
    if queries:
        hashed.update(repr(probability_keys(queries)).encode())
    hashed.update(Path(recorded.__file__).read_bytes())  # the reader it carries
    return f"{recorded.model_digest(str(transformer.MODEL_DIR))}-{hashed.hexdigest()[:12]}"


# What a kernel runs when it starts (IPython's exec_files, in the notebook's namespace): the cache's copy of
# autograder.grading.recorded, loaded under a private name, answers lib's forward passes; no name is left behind.
START = """\
def _attention_recorded_passes():
    import importlib.util, os, sys
    path = os.path.join(os.environ["ATTENTION_FORWARD_CACHE"], "recorded.py")  # where the kernel sees the cache
    spec = importlib.util.spec_from_file_location("_attention_recorded", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["_attention_recorded"] = module
    module.install(os.path.dirname(path))
_attention_recorded_passes()
del _attention_recorded_passes
"""


def probability_keys(queries) -> list:
    """Each (cases, ablate) query's name in a cache's index (recorded.probabilities_key)."""
    return [
        recorded.probabilities_key(cases, transformer._ablated(ablate, transformer.MODEL_DIR))
        for cases, ablate in queries
    ]


def recorded_probabilities(queries) -> dict:
    """lib.experiments.next_token_probability of each (cases, ablate) query, computed here as a kernel would:
    {its key: [P, ...]} (a float's JSON text reads back as the same float, to the last bit)."""
    from lib import experiments  # here: it reads the catalogue (pandas), which only an assignment with queries needs

    found = {}
    for key, (cases, ablate) in zip(probability_keys(queries), queries):
        if key not in found:
            found[key] = [float(p) for p in experiments.next_token_probability(cases, ablate)]
    return found


def write_forward_cache(
    path: Path | str, texts, folder: Path | str = transformer.MODEL_DIR, queries: list = ()
) -> Path:
    """Record lib's forward pass (logits and patterns) of each text (token ids) into the folder ``path``:
    index.json (the model's digest, where each text starts, and each ablation query's probabilities),
    logits.npy (every text's logits, one row per token), patterns.npy (every text's (layers, heads, T, T) patterns,
    flattened one after another), and what a kernel runs to read them (recorded.py, start.py). Written whole,
    then renamed into place."""
    path = Path(path)
    index, logits, patterns = {}, [], []
    rows = elements = 0
    for ids in texts:
        key = recorded.text_key(ids)
        if key in index:
            continue
        text_logits, text_patterns = transformer.forward(ids, keep=True, folder=folder)
        index[key] = [rows, elements]
        logits.append(text_logits)
        patterns.append(np.stack(text_patterns).ravel())
        rows, elements = rows + len(text_logits), elements + patterns[-1].size
    building = Path(tempfile.mkdtemp(prefix=path.name + ".", dir=path.parent))
    np.save(building / "logits.npy", np.concatenate(logits) if logits else np.zeros((0, 0)))
    np.save(building / "patterns.npy", np.concatenate(patterns) if patterns else np.zeros(0))
    shutil.copyfile(recorded.__file__, building / "recorded.py")
    (building / "start.py").write_text(START)
    written = {"model": recorded.model_digest(str(folder)), "texts": index}
    if queries:
        written["probabilities"] = recorded_probabilities(queries)
    (building / "index.json").write_text(json.dumps(written))
    try:
        os.replace(building, path)  # whole, or not at all
    except OSError:  # another writer finished first: keep theirs
        shutil.rmtree(building, ignore_errors=True)
        if not (path / "index.json").exists():
            raise
    return path


def prune(home: Path, keep: Path) -> None:
    """Remove from ``home`` the half-written caches and those unused for FORWARD_CACHE_KEPT_DAYS (the caller
    holds the lock)."""
    now = time.time()
    for other in home.iterdir():
        if other in (keep, home / ".lock"):
            continue
        index = other / "index.json"
        unused = now - (index.stat().st_mtime if index.exists() else 0)
        if not index.exists() or unused > FORWARD_CACHE_KEPT_DAYS * 86400:
            if other.is_dir() and not other.is_symlink():
                shutil.rmtree(other, ignore_errors=True)
            else:
                other.unlink()


def shared_forward_cache(
    forward_texts: Callable[[], list] | None,
    *,
    course: Path | None = None,
    build: bool = True,
    forward_probabilities: Callable[[], list] | None = None,
) -> str | None:
    """The folder of lib's forward passes of ``forward_texts()`` (the assignment's declared texts, token ids),
    and of its ablation queries ``forward_probabilities()`` when declared, written by write_forward_cache. One per
    model, texts and queries, shared by every course and run of this user (forward_cache_home()). None when the
    assignment declares no texts, the store's model is missing, or none is built yet and ``build`` is False. One
    process builds at a time (a lock); the others wait and use it. Half-written caches, and caches unused for
    FORWARD_CACHE_KEPT_DAYS, are removed; so is the copy that earlier versions kept in the course's
    .grading/forward/."""
    if course is not None:
        shutil.rmtree(Path(course) / LEDGER / "forward", ignore_errors=True)
    if forward_texts is None or not model.available():
        return None
    texts = forward_texts()
    queries = forward_probabilities() if forward_probabilities is not None else []
    home = forward_cache_home()
    home.mkdir(parents=True, exist_ok=True)
    path = home / cache_name(texts, queries)
    with open(home / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or when the process ends however
        prune(home, keep=path)
        if not (path / "index.json").exists():
            if not build:
                return None
            shutil.rmtree(path, ignore_errors=True)
            write_forward_cache(path, texts, queries=queries)
        os.utime(path / "index.json")  # its last use: what FORWARD_CACHE_KEPT_DAYS counts from
    return str(path)


def class_forward_cache(
    forward_texts: Callable[[], list] | None,
    *,
    course: Path,
    new: int,
    wanted: bool | None,
    forward_probabilities: Callable[[], list] | None = None,
) -> str | None:
    """The forward cache for a run grading ``new`` submissions (ClassOptions.forward_cache): none when
    ``wanted`` is False; built if missing when ``wanted`` is True, or when None and the class has
    FORWARD_CACHE_FROM new submissions or more (below that building it costs more than it saves); otherwise
    the one already built, if any."""
    if wanted is False:
        return None
    build = wanted is True or new >= FORWARD_CACHE_FROM
    return shared_forward_cache(forward_texts, course=course, build=build, forward_probabilities=forward_probabilities)


def on_this_machine(wanted: str | None, source: Path) -> str | None:
    """The forward cache the coordinator named (``wanted``, a folder on its machine), on the machine this worker runs
    on: that folder when it is here (one machine, or a shared disk), else the same cache (its name is the model's
    and the texts' digest) built here once, from the assignment's own ``source`` folder, in this machine's
    forward_cache_home() under its lock, so every worker of this machine uses one copy and a remote worker maps it
    as a local one would instead of recomputing each forward pass in every kernel. None when none was named, the
    assignment declares no texts here, or this machine's cache would not be the one named (another model)."""
    if not wanted:
        return None
    if (Path(wanted) / "index.json").exists():
        return wanted
    try:
        declared = assignments.load(Path(source))
    except Exception:  # noqa: BLE001 - the kernel then computes the passes itself, as without a cache
        return None
    texts, probabilities = declared.forward_texts, declared.forward_probabilities
    if texts is None or not model.available():
        return None
    if cache_name(texts(), probabilities() if probabilities else []) != Path(wanted).name:
        return None
    return shared_forward_cache(texts, build=True, forward_probabilities=probabilities)
