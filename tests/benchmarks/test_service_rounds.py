"""benchmarks/service_rounds.py at its quick sizes: it runs to its end and prints the figures it exists for (CPU
seconds per round of the grading service's checker, this one's and the old one's, measured in the same run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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
