"""The course's lock: one grading run per course at a time (``CourseLock``)."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from datetime import datetime
from pathlib import Path

from autograder.grading.task import LEDGER, GradingError


class CourseLock:
    """One grading run per course at a time: an exclusive lock (flock) on .grading/lock, which the system
    releases when the process ends however it ends, so a lock left by a killed run is never in the way.
    The file says who holds it (host, process, since when, the command); a holder that ended without
    clearing it was stopped (killed, or its machine lost), and the next run says it took over."""

    def __init__(self, course: Path, *, wait: bool = False, say=print, poll: float = 5.0):
        self.path = Path(course) / LEDGER / "lock"
        self.wait, self.say, self.poll = wait, say, poll
        self.handle = None
        self.took_over = None  # what the file said when this run found it left behind

    def holder(self) -> dict:
        try:
            return json.loads(self.path.read_text() or "{}")
        except (OSError, ValueError):
            return {}

    @staticmethod
    def describe(holder: dict) -> str:
        if not holder:
            return "a run that has not said who it is yet"
        return (
            f"process {holder.get('pid')} on {holder.get('host')}, since {holder.get('since')}"
            f" ({holder.get('command', '?')})"
        )

    def __enter__(self):

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "a+", encoding="utf-8")
        waited = False
        while True:
            try:
                fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = self.describe(self.holder())
                if not self.wait:
                    self.handle.close()
                    raise GradingError(
                        f"another grading run holds {self.path.parent.parent}: {holder}. "
                        "Wait for it to finish, or run again with --wait"
                    ) from None
                if not waited:
                    self.say(f"waiting for the grading run that holds {self.path.parent.parent}: {holder}")
                    waited = True
                time.sleep(self.poll)
        left = self.holder()
        if left:
            self.took_over = left
            self.say(f"taking over the lock of a grading run that stopped without releasing it: {self.describe(left)}")
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(
            json.dumps(
                {
                    "host": socket.gethostname(),
                    "pid": os.getpid(),
                    "since": datetime.now().isoformat(timespec="seconds"),
                    "command": " ".join(sys.argv)[:300],
                }
            )
        )
        self.handle.flush()
        return self

    def __exit__(self, *_):

        self.handle.seek(0)
        self.handle.truncate()
        self.handle.flush()
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()
