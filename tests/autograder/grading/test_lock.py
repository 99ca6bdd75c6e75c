"""autograder.grading.lock.CourseLock alone: one run per course; a second says who holds it (or waits with --wait);
a lock whose holder was killed is taken over and said so; the file is cleared when a run ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from autograder.grading.lock import CourseLock
from autograder.grading.task import GradingError


def test_a_second_run_is_refused_naming_the_first(tmp_path):
    with CourseLock(tmp_path, say=lambda _: None) as first:
        holder = first.holder()
        assert holder["pid"] == os.getpid() and set(holder) == {"host", "pid", "since", "command"}
        with pytest.raises(GradingError, match=rf"another grading run holds .*process {os.getpid()} on .*--wait"):
            with CourseLock(tmp_path):
                pass
    assert first.path.read_text() == "", "a run that ends clears who it was"
    with CourseLock(tmp_path, say=lambda _: None) as again:
        assert again.took_over is None


def test_with_wait_the_second_run_waits_then_runs(tmp_path):
    said, order = [], []
    first = CourseLock(tmp_path, say=lambda _: None).__enter__()

    def second():
        with CourseLock(tmp_path, wait=True, say=said.append, poll=0.05):
            order.append("second")

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(0.3)
    order.append("first ends")
    first.__exit__(None, None, None)
    thread.join(timeout=10)
    assert order == ["first ends", "second"]
    assert len(said) == 1 and said[0].startswith("waiting for the grading run that holds")


def test_a_killed_runs_lock_is_taken_over_and_said(tmp_path):
    script = (
        "import os, sys; from pathlib import Path; from autograder.grading.lock import CourseLock\n"
        f"CourseLock(Path({str(tmp_path)!r}), say=lambda _: None).__enter__(); os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)  # ends holding it: never cleared
    left = json.loads((tmp_path / ".grading" / "lock").read_text())
    said = []
    with CourseLock(tmp_path, say=said.append) as lock:
        assert lock.took_over == left
    assert said == [f"taking over the lock of a grading run that stopped without releasing it: {lock.describe(left)}"]


def test_a_holder_that_has_not_written_yet_is_described():
    assert CourseLock.describe({}) == "a run that has not said who it is yet"
