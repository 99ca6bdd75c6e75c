"""Every benchmark runs to its end: each script under benchmarks/ at its smallest sizes (``--quick``), through the
library as the commands call it, printing the figures it exists for. A rename in the engine breaks this test, not
a measurement months later."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import model, sandbox

REPOSITORY = Path(__file__).resolve().parents[2]
BENCHMARKS = REPOSITORY / "benchmarks"


def needs_bubblewrap() -> str | None:
    return None if sandbox.bubblewrap() else "bubblewrap is missing (apt-get install bubblewrap)"


def needs_torch() -> str | None:
    return None if importlib.util.find_spec("torch") else "torch is missing (make install-train)"


def needs_model() -> str | None:
    return None if model.available() else "the store's model is missing (data/model)"


# script: (the lines it must print, as regular expressions; what it needs, as functions saying why not)
FIGURES = {
    "gradebook_scale.py": (
        [
            r"sqlite +per-result time at \d+ / at \d+: \d+\.\d\d",
            r"re-run with nothing new, \d+ students: \d+\.\d s",
            r"sqlite +coordinator: \d+ results in [\d.]+ s",
            r"  record +[\d.]+ s +[\d.]+ ms/result",
        ],
        [],
    ),
    "deadline_rush.py": (
        [
            r"seconds from Submit to verdict: p50 [\d.]+, p95 [\d.]+, max [\d.]+",
            r"the check itself \(started to recorded\): p50 [\d.]+",
            r"nbgrader autograde, the usual way, on 1 of the same notebooks: [\d.]+ s per notebook",
        ],
        [needs_bubblewrap],
    ),
    "check_batching.py": (
        [
            r"one call per message: p50 [\d.]+ s by the clock, CPU [\d.]+ s grader \+ [\d.]+ s runner, \d+ messages",
            r"batched: p50 [\d.]+ s by the clock",
            r"one per message / batched, CPU seconds \(grader \+ runner\) per check: \d+\.\d\d",
            r"grades the same both ways: yes",
        ],
        [needs_bubblewrap, needs_model],
    ),
    "overhead_vs_nbclient.py": (
        [r"round 1: execute [\d.]+ s, grade [\d.]+ s", r"grade / execute, per submission: \d+\.\d\d"],
        [needs_bubblewrap, needs_model],
    ),
    "forward_cache_cost.py": (
        [r"build: [\d.]+ s, \d+ MB", r"with / without \d+\.\d\d", r"class of 12 on \d+ worker\(s\)"],
        [needs_bubblewrap, needs_model],
    ),
    "class_vs_nbgrader.py": (
        [
            r"nbgrader autograde \+ generate_feedback: \d+ s",
            r"graded by both: \d+; identical grades: \d+; differ: none",
            r"nbgrader / this project, wall-clock: \d+\.\d\d",
        ],
        [needs_bubblewrap, needs_model],
    ),
    "sleepers.py": (
        [r"without sleepers: [\d.]+ s; with \d+ sleepers: [\d.]+ s", r"sleepers / without, wall-clock: \d+\.\d\d"],
        [needs_bubblewrap, needs_model],
    ),
    "instant_vs_class.py": (
        [r"seconds per notebook, median: service [\d.]+, class [\d.]+", r"agreed: \d+ of \d+ checks \(1\.000\)"],
        [needs_bubblewrap, needs_model],
    ),
    "visible_catches.py": (
        [r"caught before \d+, after \d+ \(named \d+\)"],
        [needs_model],
    ),
    "forward_vs_torch.py": (
        [r"--- summary", r"numpy \(\w+\) / torch \(float32\) tokens per second: \d+\.\d\d"],
        [needs_torch, needs_model],
    ),
}
# service_rounds.py is not in FIGURES: tests/benchmarks/test_service_rounds.py runs it at --quick and asserts these
# figures and more (run here too, it would cost the suite a second run of the same script)


def test_every_benchmark_is_run_here():
    scripts = {path.name for path in BENCHMARKS.glob("*.py")}
    own_tests = {
        path.name for path in BENCHMARKS.glob("*.py") if (Path(__file__).parent / f"test_{path.name}").exists()
    }
    assert scripts - set(FIGURES) - own_tests == set(), (
        "a benchmark without a quick run in FIGURES or a test of its own"
    )
    assert set(FIGURES) - scripts == set(), "FIGURES names a benchmark that no longer exists"
    assert set(FIGURES) & own_tests == set(), "a benchmark run twice: here and by a test of its own"


@pytest.mark.parametrize("script", sorted(FIGURES))
def test_benchmark_runs_to_its_end_at_quick_sizes(script):
    expected, needs = FIGURES[script]
    if not (BENCHMARKS / script).exists():
        pytest.skip(f"{script} is not in this checkout")
    for need in needs:
        why = need()
        if why:
            pytest.skip(why)
    if script == "class_vs_nbgrader.py" and shutil.which("nbgrader", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("nbgrader's command is not in the virtual environment")
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{script} --quick exited {done.returncode}:\n{output[-3000:]}"
    missing = [pattern for pattern in expected if not re.search(pattern, done.stdout)]
    assert missing == [], f"{script} --quick did not print {missing}:\n{done.stdout[-3000:]}"
