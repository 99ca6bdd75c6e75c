"""The cost of one instant check: the runner's calls many to a message against one call per message.

    .venv/bin/python benchmarks/check_batching.py               # 6 notebooks x 5 rounds, both ways
    .venv/bin/python benchmarks/check_batching.py --rounds 10
    .venv/bin/python benchmarks/check_batching.py --quick       # one notebook, one round (tests)

One instant check (autograder.service.instant.check_answers: the hidden checks of source/attention in the sandboxed
runner, no kernel) makes about 650 calls of the student's functions, 560 of them a statistic over the model's 300
recorded texts. Batched (autograder.answers.session.Session.calls, the runner's "calls" message), each run of calls
that do not wait on each other goes to the runner in one message and comes back as a stream of results; one per
message (the way before, kept here as the alternative), each call is a round trip: a message to the runner, a wait,
a message back. Both ways are measured in the same run, alternately, on the notebooks of benchmarks/deadline_rush.py's
mix: seconds by the clock per check, CPU seconds of the grader's process and of the runner (with the stand-ins it
asked for: the notebook budget's count), messages sent to the runner, and the ratio one per message / batched.
Every check's points and properties must be the same both ways (exit status 1 otherwise).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

import nbformat  # noqa: E402

from autograder.answers import process, session  # noqa: E402
from autograder.service.instant import check_answers  # noqa: E402

SOURCE = REPOSITORY / "source" / "attention"
SUBMISSIONS = REPOSITORY / "examples" / "submissions"
MIX = ["full_solution", "mask_after_softmax", "no_sqrt_scaling", "previous_token_off_by_one",
       "split_heads_reshape_order", "kernel_crash"]  # fmt: skip

BATCHED = session.Session.calls


def one_per_message(self, requests, seconds=None, stop=False):
    """Session.calls as before batching: each request in a message of its own, its result awaited before the next."""
    made = []
    for request in requests:
        if stop and made and made[-1][0].error is not None:
            made.append((session.Result("not run: an earlier call failed"), 0.0, session.Usage()))
            continue
        left = None if seconds is None else seconds - sum(used for _, used, _ in made)
        made.extend(BATCHED(self, [request], left, stop))
    return made


class Meter:
    """What the checks of one way cost: the runners' CPU (the notebook budget's count) and messages to the runner."""

    def __init__(self):
        self.runner_cpu, self.messages = 0.0, 0
        close, send = session.Session.close, process.Runner.send
        meter = self

        def counted_close(self):
            close(self)
            meter.runner_cpu += self.budget.cpu_spent

        def counted_send(self, header, arrays=()):
            meter.messages += 1
            return send(self, header, arrays)

        session.Session.close, process.Runner.send = counted_close, counted_send


def measure(notebook, batched: bool, meter: Meter) -> dict:
    session.Session.calls = BATCHED if batched else one_per_message
    meter.runner_cpu, meter.messages = 0.0, 0
    clock, cpu = time.monotonic(), time.process_time()
    points, _, verdicts = check_answers(SOURCE, notebook)
    return {
        "wall": time.monotonic() - clock,
        "grader": time.process_time() - cpu,
        "runner": meter.runner_cpu,
        "messages": meter.messages,
        "points": points,
        "grades": {v.check: (v.points, tuple(p.passed for p in v.properties)) for v in verdicts},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="checks of each notebook each way")
    parser.add_argument("--quick", action="store_true", help="one notebook, one round (to check that it runs)")
    args = parser.parse_args(argv)
    names = MIX[:1] if args.quick else MIX
    rounds = 1 if args.quick else args.rounds
    notebooks = {name: nbformat.read(SUBMISSIONS / name / "attention" / "attention.ipynb", 4) for name in names}
    meter = Meter()
    measure(notebooks[names[0]], True, meter)  # imports, NumPy read from disk: neither way pays for them
    rows = {True: [], False: []}
    differ = []
    for number in range(rounds):
        for name, notebook in notebooks.items():
            ways = (True, False) if number % 2 == 0 else (False, True)
            made = {batched: measure(notebook, batched, meter) for batched in ways}
            for batched, row in made.items():
                rows[batched].append(row)
            if made[True]["grades"] != made[False]["grades"]:
                differ.append(name)
    session.Session.calls = BATCHED
    print(f"{len(rows[True])} checks each way ({len(names)} notebooks x {rounds} rounds), alternately")
    for batched, label in ((False, "one call per message"), (True, "batched")):
        wall, grader, runner = (median(rows[batched], key) for key in ("wall", "grader", "runner"))
        print(
            f"{label:>21}: p50 {wall:.3f} s by the clock, CPU {grader:.3f} s grader + {runner:.3f} s runner, "
            f"{median(rows[batched], 'messages'):.0f} messages to the runner"
        )
    for key, what in (("wall", "seconds by the clock"), ("cpu", "CPU seconds (grader + runner)")):
        ratio = median(rows[False], key) / median(rows[True], key)
        print(f"one per message / batched, {what} per check: {ratio:.2f}")
    print(f"grades the same both ways: {'yes' if not differ else 'NO, for ' + ', '.join(sorted(set(differ)))}")
    return 1 if differ else 0


def median(rows: list[dict], key: str) -> float:
    if key == "cpu":
        return statistics.median(row["grader"] + row["runner"] for row in rows)
    return statistics.median(row[key] for row in rows)


if __name__ == "__main__":
    raise SystemExit(main())
