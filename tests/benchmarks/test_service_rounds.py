"""benchmarks/service_rounds.py at its quick sizes: it runs to its end and prints the figures it exists for (CPU
seconds per round of the grading service's checker, this one's and the old one's, measured in the same run), and with
--start the seconds from the service's start to a waiting Submit's verdict, its probe run and remembered."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import sandbox

REPOSITORY = Path(__file__).resolve().parents[2]
SCRIPT = REPOSITORY / "benchmarks" / "service_rounds.py"
SECONDS = r"(\d+\.\d+) s CPU"


def test_service_rounds_prints_cpu_per_round_and_the_ratios_at_quick_sizes():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], cwd=REPOSITORY, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout
    assert "inbound: 500 junk folders" in output and "200 checked attempts of 200 students stored" in output
    new = re.search(rf"this checker: first round {SECONDS}, steady round {SECONDS}, round after one new Submit", output)
    assert new, output
    assert re.search(r"steady at 500 folders and 200 attempts / floor: \d+\.\d\d", output), output
    if "the old checker: not measured" not in output:  # a checkout without git history
        assert re.search(rf"the old checker \(git \w+\): first round {SECONDS}, steady round {SECONDS}", output)
        ratios = re.search(r"old / new, CPU per round: first (\d+\.\d), steady (\d+\.\d)", output)
        assert ratios, output
        assert float(ratios[1]) > 0 and float(ratios[2]) > 0


def test_service_rounds_start_prints_the_first_verdict_probed_and_remembered_at_quick_sizes():
    """--start --quick: a Submit waiting at the service's start is checked both times; the first start tries the
    assignment's checks (one probe), the second, with the same files, remembers them passing (none)."""
    if sandbox.bubblewrap() is None:
        pytest.skip("the checks run only in the sandbox: bubblewrap is missing (apt-get install bubblewrap)")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--start", "--quick"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout
    starts = r"the Submit waiting at start done [\d.]+ s after the start; probes run: {} \(median of 1 starts"
    assert re.search("probed: " + starts.format(1), output), output
    assert re.search("remembered: " + starts.format(0), output), output
    figures = re.search(
        r"first verdict after a start, positions, 2 workers: probe run ([\d.]+) s, probe remembered ([\d.]+) s; "
        r"probe run / remembered: (\d+\.\d\d)",
        output,
    )
    assert figures, output
    probed, remembered, ratio = (float(figure) for figure in figures.groups())
    # the seconds are printed to 0.1 s and the ratio is of the unrounded ones: it lies within what the rounding allows
    assert (
        (probed - 0.05) / (remembered + 0.05) - 0.005 <= ratio <= (probed + 0.05) / max(remembered - 0.05, 1e-6) + 0.005
    )
    imports = re.search(
        r"a worker's imports before its first check: (\d+\.\d\d) s CPU \(autograder.service.checking\), before: "
        r"(\d+\.\d\d) s CPU .*; before / now: (\d+\.\d)",
        output,
    )
    assert imports, output
    if "the service before: not measured" not in output:  # a checkout without git history
        assert re.search(r"the service before \(git \w+\): " + starts.format(1), output), output
        assert re.search(r"before / now \(probe remembered\), median seconds to the first verdict: \d+\.\d\d", output)
