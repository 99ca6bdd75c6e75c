"""What one round of the grading service's checker costs when the inbound is full of junk and the table is large.

    .venv/bin/python benchmarks/service_rounds.py                  # 20,000 junk folders, 5,000 stored attempts
    .venv/bin/python benchmarks/service_rounds.py --quick          # 500 and 200: checks that it runs (tests)

An exchange's inbound folder gets ``--folders`` junk folders, made the way one student with a shell makes them:
half named as Submits of accounts that are not in the class (``x00042+attention+<time>+r``), half not named as
Submits at all. The course's table holds ``--attempts`` checked attempts of 200 students. Then the checker
(autograder.service.instant.Checker) runs rounds as the service does, every POLL seconds, with nothing to check: the
first round (every entry new), steady rounds (nothing new), and a round after one honest Submit arrives. Printed: CPU
seconds of this process per round (time.process_time: Python and SQLite alike), for this checker and, measured in
the same run on the same inbound and table, the checker as it was before (``--baseline``, a git revision of
autograder/service/instant.py, run against today's attempts store), and their ratio; and the floor, a round over an
empty inbound and table, so "the cost does not grow with the entries seen or the attempts stored" is a ratio too.

    .venv/bin/python benchmarks/service_rounds.py --start          # a Submit waiting when the service starts
    .venv/bin/python benchmarks/service_rounds.py --start --quick  # on positions, whose probe is short (tests)

``--start``: seconds from the service's start (autograder.service.checkers: the checkers made, Checkers.warm, the
service's thread started, on a fresh pool of ``--workers`` spawned processes) to the verdict of a Submit already in
the inbound, twice in the same run on a copy of the course: first with no passing probe remembered (the
assignment's own checks tried first, as every start did before ProbeMemory), then started again with the files
unchanged, the probe remembered passing in the course folder (ProbeMemory) and not run; and their ratio. Each start
is a Python of its own, as the service's is. Then the CPU seconds a worker spends importing before its first check:
today's (autograder.service.checking) against the module a worker imported before (autograder.service.instant, with
nbgrader and jsonschema's IRI grammar), each in a fresh Python; and the same start by the service as it was
(``--start-baseline``, a git revision unpacked and run with its own engine, lib and data).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from autograder.attempts import Attempts, utcnow  # noqa: E402
from autograder.service import instant  # noqa: E402
from autograder.service.checkers import Checkers, ProbeMemory, authoring_trouble, probe_digest  # noqa: E402

BASELINE = "fa283f793ef13b31aebd15cf0cab8cfe5963e280"  # autograder/instant.py before issue 24
# where the baseline's imports now live (autograder's modules moved into packages by stage after it)
MOVED = {"answer_grading": "answers.grading"}  # attempts and assignments are flat again, as they were then
SOURCE = REPOSITORY / "source" / "attention"
STAMP = "2026-12-01 10:00:00.000000 UTC"
STUDENTS = [f"s{number:03d}" for number in range(200)]
POLL = 0.5  # seconds between two rounds, as the service (autograder.service.app.POLL)


class NoPool:
    """A pool that is never given anything here (no Submit is waiting); counts what it is given."""

    def __init__(self):
        self.calls = 0

    def submit(self, function, **keywords):
        self.calls += 1
        raise AssertionError("nothing should be checked in this benchmark")


def make_junk(inbound: Path, folders: int) -> None:
    inbound.mkdir(parents=True)
    for number in range(folders):
        name = f"x{number:05d}+attention+{STAMP}+r" if number % 2 == 0 else f"junk-{number:05d}"
        (inbound / name).mkdir()


def seed_attempts(url: str, count: int) -> None:
    """``count`` checked attempts of the 200 students, spread over the last days."""
    store, now, rows = Attempts(url), utcnow(), []
    for number in range(count):
        when = now - datetime.timedelta(minutes=10 * number)
        rows.append(
            dict(
                key=f"{STUDENTS[number % len(STUDENTS)]}+attention+{when:%Y-%m-%d %H:%M:%S.%f} UTC+{number}",
                student=STUDENTS[number % len(STUDENTS)],
                assignment="attention",
                submitted=when,
                status="done",
                started=when,
                checked=when,
                points=20.0,
                max_points=29.0,
                verdicts="[]",
            )
        )
    store.add_many(rows, now=now)
    store.close()


def old_instant(revision: str) -> types.ModuleType | str:
    """The checker's module at ``revision`` (loaded from git), or why it cannot be."""
    try:
        text = subprocess.run(
            ["git", "show", f"{revision}:autograder/instant.py"],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        return f"git show {revision[:10]}:autograder/instant.py failed ({getattr(error, 'stderr', '') or error})"
    module = types.ModuleType("old_instant")
    for old, new in MOVED.items():  # its imports, as the modules are named since they moved into packages
        text = text.replace(f"from autograder.{old} import", f"from autograder.{new} import")
        text = text.replace(
            f"from autograder import {old}\n",
            f"from autograder.{new.rsplit('.', 1)[0]} import {new.rsplit('.', 1)[1]} as {old}\n",
        )
    module.__file__ = f"{revision[:10]}:autograder/instant.py"
    sys.modules["old_instant"] = module  # dataclasses look their module up by name
    exec(compile(text, module.__file__, "exec"), module.__dict__)
    return module


def measure(module, scratch: Path, url: str, rounds: int, label: str) -> dict:
    """CPU seconds of the first round, the steady rounds and a round after one new Submit, for ``module``'s
    Checker over the inbound in ``scratch``."""
    store = Attempts(url)
    checker = module.Checker(
        source=SOURCE,
        inbound=scratch / "inbound",
        store=store,
        policy=module.InstantChecks(attempts=3, period=3600),
        students=lambda: set(STUDENTS),
        slots=2,
    )
    pool = NoPool()

    def one_round() -> float:
        began = time.process_time()
        checker.step(pool)
        return time.process_time() - began

    first = one_round()
    steady = []
    for _ in range(rounds):
        time.sleep(POLL)
        steady.append(one_round())
    time.sleep(POLL)
    honest = scratch / "inbound" / f"{STUDENTS[0]}+attention+{STAMP}+{label}"
    honest.mkdir()
    (honest / "attention.ipynb").write_bytes(b"{}")
    checker.store.start = lambda attempt_id, now=None: False  # recorded, not started: the round's own cost only
    arrival = one_round()
    shutil.rmtree(honest)
    store.close()
    return {"first": first, "steady": statistics.median(steady), "arrival": arrival}


SUBMITTED = {  # the Submit waiting at start: a notebook of each assignment (the source notebook: the solution)
    "attention": REPOSITORY / "examples" / "submissions" / "no_sqrt_scaling" / "attention" / "attention.ipynb",
    "positions": REPOSITORY / "source" / "positions" / "positions.ipynb",
}
ANSWERED = ("done", "refused")


def first_verdict(course: Path, assignment: str, workers: int) -> tuple[float, int, str]:
    """(seconds from the service's start to the verdict of the Submit waiting in ``course``'s inbound, probes run,
    the attempt's status): the service as autograder.service.app.serve starts it, on a fresh pool."""
    began = time.monotonic()
    store = Attempts(f"sqlite:///{course / 'gradebook.db'}")
    checker = instant.Checker(
        source=course / "source" / assignment,
        inbound=course / "inbound",
        store=store.scoped(assignment),
        policy=instant.InstantChecks(attempts=3, period=3600),
        students=lambda: set(STUDENTS),
        slots=workers,
        probe=authoring_trouble,
        memory=ProbeMemory(course),
        digest=probe_digest,
    )
    checkers = Checkers({assignment: checker}, slots=workers)
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    checkers.warm(pool)
    thread = instant.CheckerThread(checkers, pool)
    thread.start()
    try:
        while not (answered := store.select(status=ANSWERED)):
            if time.monotonic() - began > 600:
                raise TimeoutError("no verdict 10 minutes after the start")
            time.sleep(0.02)
        took = time.monotonic() - began
    finally:
        thread.stop()
        pool.shutdown()
        store.close()
    return took, checker.probes_run, answered[0].status


def in_fresh_process(course: Path, assignment: str, workers: int) -> tuple[float, int, str]:
    """first_verdict in a Python of its own started with ``-c``, as ``python -m autograder.service`` is started: its
    spawned workers import only what they run (a script's own imports would be run again in each of them)."""
    code = (
        f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import service_rounds; "
        f"from pathlib import Path; "
        f"print(json.dumps(service_rounds.first_verdict(Path({str(course)!r}), {assignment!r}, {workers})))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the service's start failed:\n{done.stderr[-3000:]}")
    took, probes, status = json.loads(done.stdout.strip().splitlines()[-1])
    return took, probes, status


def import_seconds(code: str) -> float:
    """CPU seconds a fresh Python spends running ``code`` (imports), less a bare Python's."""

    def cpu(text: str) -> float:
        done = subprocess.run(
            [sys.executable, "-c", f"import time; {text}; print(time.process_time())"],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            check=True,
        )
        return float(done.stdout.split()[-1])

    return max(cpu(code) - cpu("pass"), 0.0)


BEFORE_START = "faadfc4c56ef6917c0de7427d83816808fce53b5"  # the service before ProbeMemory and the light workers
OLD_START = """
import json, sys, time, concurrent.futures, multiprocessing
from pathlib import Path
from autograder.service import instant
from autograder.attempts import Attempts
from autograder.service.checkers import Checkers, authoring_trouble
course, assignment, workers = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
began = time.monotonic()
store = Attempts(f"sqlite:///{course / 'gradebook.db'}")
checker = instant.Checker(
    source=course / "source" / assignment, inbound=course / "inbound", store=store.scoped(assignment),
    policy=instant.InstantChecks(attempts=3, period=3600), students=lambda: {sys.argv[4]}, slots=workers,
    probe=authoring_trouble,
)
checkers = Checkers({assignment: checker}, slots=workers)
pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
checkers.warm(pool)
thread = instant.CheckerThread(checkers, pool)
thread.start()
while not (answered := store.select(status=("done", "refused"))):
    time.sleep(0.02)
took = time.monotonic() - began
thread.stop()
pool.shutdown()
store.close()
print(json.dumps([took, 1, answered[0].status]))
"""


def unpack(revision: str, scratch: Path) -> Path | str:
    """The tree of git ``revision`` (engine, lib, data, assignments) unpacked and compiled under ``scratch``, or why
    it cannot be."""
    tree = scratch / "before"
    tree.mkdir()
    folders = ["autograder", "lib", "data", "source", "release"]
    try:
        archive = subprocess.run(
            ["git", "archive", revision, *folders], cwd=REPOSITORY, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        return f"git archive {revision[:10]} failed ({getattr(error, 'stderr', b'') or error})"
    # compiled once before timing, as an installed service's code is (a first import would compile it)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "autograder"), str(tree / "lib")], check=False)
    return tree


def waiting_course(course: Path, tree: Path, assignment: str, label: str) -> Path:
    """``course`` made afresh: ``tree``'s assignment and release, and one Submit waiting in its inbound."""
    shutil.rmtree(course, ignore_errors=True)
    unlike = shutil.ignore_patterns("__py*")
    shutil.copytree(tree / "source" / assignment, course / "source" / assignment, ignore=unlike)
    if (tree / "release" / assignment).is_dir():
        shutil.copytree(tree / "release" / assignment, course / "release" / assignment)
    return waiting_submit(course, assignment, label)


def waiting_submit(course: Path, assignment: str, label: str) -> Path:
    """``course``'s inbound and database emptied, then one Submit waiting in the inbound (its files kept)."""
    (course / "gradebook.db").unlink(missing_ok=True)
    shutil.rmtree(course / "inbound", ignore_errors=True)
    folder = course / "inbound" / f"{STUDENTS[0]}+{assignment}+{STAMP}+{label}"
    folder.mkdir(parents=True)
    shutil.copy(SUBMITTED[assignment], folder / f"{assignment}.ipynb")
    return course


def old_service_start(tree: Path, course: Path, assignment: str, workers: int) -> tuple[float, int, str]:
    """The same start by the service unpacked in ``tree`` (its own engine, lib, data and assignment)."""
    code = f"import sys; sys.path.insert(0, {str(tree)!r})\n{OLD_START}"
    argv = [sys.executable, "-c", code, str(course), assignment, str(workers), STUDENTS[0]]
    done = subprocess.run(argv, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the service before did not start:\n{done.stderr[-3000:]}")
    took, probes, status = json.loads(done.stdout.strip().splitlines()[-1])
    return took, probes, status


def summary(label: str, runs: list) -> str:
    """One line per kind of start: the median seconds, the probes run, and the range over the starts."""
    seconds = [run[0] for run in runs]
    statuses = "/".join(sorted({run[2] for run in runs}))
    spread = f"median of {len(runs)} starts, {min(seconds):.1f}-{max(seconds):.1f} s"
    return (
        f"{label}: the Submit waiting at start {statuses} {statistics.median(seconds):.1f} s after the start; "
        f"probes run: {max(run[1] for run in runs)} ({spread})"
    )


def start_main(args) -> int:
    """--start: the first verdict after a start, the probe run against remembered (module docstring)."""
    assignment = "positions" if args.quick else args.assignment
    runs = {"before": [], "probed": [], "remembered": []}
    with tempfile.TemporaryDirectory(prefix="service-start-") as scratch:
        scratch = Path(scratch)
        tree = unpack(args.start_baseline, scratch)
        for _ in range(args.repeat):  # the three kinds of start in turn, so the machine's load falls on each alike
            if not isinstance(tree, str):
                course = waiting_course(scratch / "before-course", tree, assignment, "before")
                runs["before"].append(old_service_start(tree, course, assignment, args.workers))
            course = waiting_course(scratch / "course", REPOSITORY, assignment, "probed")  # nothing remembered
            runs["probed"].append(in_fresh_process(course, assignment, args.workers))
            waiting_submit(course, assignment, "remembered")  # the same files, the probe remembered passing
            runs["remembered"].append(in_fresh_process(course, assignment, args.workers))
    print(summary("probed", runs["probed"]))
    print(summary("remembered", runs["remembered"]))
    probed = statistics.median(run[0] for run in runs["probed"])
    remembered = statistics.median(run[0] for run in runs["remembered"])
    print(
        f"first verdict after a start, {assignment}, {args.workers} workers: probe run {probed:.1f} s, "
        f"probe remembered {remembered:.1f} s; probe run / remembered: {probed / max(remembered, 1e-6):.2f}"
    )
    if isinstance(tree, str):
        print(f"the service before: not measured: {tree}")
    else:
        before = statistics.median(run[0] for run in runs["before"])
        print(summary(f"the service before (git {args.start_baseline[:10]})", runs["before"]))
        ratio = before / max(remembered, 1e-6)
        print(f"before / now (probe remembered), median seconds to the first verdict: {ratio:.2f}")
    now = import_seconds("import autograder.service.checking")
    # before: the worker imported the whole of instant (nbgrader, SQLAlchemy, the web server's) and jsonschema's IRI
    # grammar; imported first here, rfc3987_syntax is kept as it was then
    before = import_seconds("import rfc3987_syntax; import autograder.service.instant")
    print(
        f"a worker's imports before its first check: {now:.2f} s CPU (autograder.service.checking), before: "
        f"{before:.2f} s CPU (autograder.service.instant, nbgrader and the IRI grammar); before / now: "
        f"{before / max(now, 1e-6):.1f}"
    )
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folders", type=int, default=20_000, help="junk folders in the inbound")
    parser.add_argument("--attempts", type=int, default=5_000, help="checked attempts stored")
    parser.add_argument("--rounds", type=int, default=8, help="steady rounds measured (the median is printed)")
    parser.add_argument("--baseline", default=BASELINE, help="the git revision of the checker to compare with")
    parser.add_argument("--quick", action="store_true", help="500 folders, 200 attempts, 3 rounds (tests)")
    parser.add_argument("--start", action="store_true", help="the first verdict after a start instead (see above)")
    parser.add_argument("--assignment", default="attention", help="--start: the assignment (--quick: positions)")
    parser.add_argument("--workers", type=int, default=2, help="--start: the pool's processes")
    parser.add_argument("--repeat", type=int, default=3, help="--start: starts of each kind (--quick: 1)")
    parser.add_argument(
        "--start-baseline", default=BEFORE_START, help="--start: the git revision of the service to compare with"
    )
    args = parser.parse_args(argv)
    if args.start:
        args.repeat = 1 if args.quick else max(args.repeat, 1)
        return start_main(args)
    if args.quick:
        args.folders, args.attempts, args.rounds = min(args.folders, 500), min(args.attempts, 200), 3
    with tempfile.TemporaryDirectory(prefix="service-rounds-") as scratch:
        scratch = Path(scratch)
        began = time.monotonic()
        make_junk(scratch / "full" / "inbound", args.folders)
        made = time.monotonic() - began
        seed_attempts(f"sqlite:///{scratch / 'seeded.db'}", args.attempts)
        (scratch / "empty" / "inbound").mkdir(parents=True)
        print(
            f"inbound: {args.folders:,} junk folders made in {made:.1f} s (half in the names of accounts not in the "
            f"class, half not named as Submits); {args.attempts:,} checked attempts of {len(STUDENTS)} students stored"
        )
        results = {}
        for label, module in (("new", instant), ("old", old_instant(args.baseline))):
            if isinstance(module, str):
                print(f"the old checker: not measured: {module}")
                continue
            database = scratch / f"{label}.db"
            shutil.copy(scratch / "seeded.db", database)
            results[label] = measure(module, scratch / "full", f"sqlite:///{database}", args.rounds, label)
        floor = measure(instant, scratch / "empty", f"sqlite:///{scratch / 'empty.db'}", args.rounds, "floor")
    new = results["new"]
    print(
        f"this checker: first round {new['first']:.3f} s CPU, steady round {new['steady']:.4f} s CPU, "
        f"round after one new Submit {new['arrival']:.4f} s CPU"
    )
    print(
        f"floor (empty inbound and table): steady round {floor['steady']:.4f} s CPU; "
        f"steady at {args.folders:,} folders and {args.attempts:,} attempts / floor: "
        f"{new['steady'] / max(floor['steady'], 1e-6):.2f}"
    )
    if "old" in results:
        old = results["old"]
        print(
            f"the old checker (git {args.baseline[:10]}): first round {old['first']:.3f} s CPU, steady round "
            f"{old['steady']:.4f} s CPU, round after one new Submit {old['arrival']:.4f} s CPU"
        )
        print(
            f"old / new, CPU per round: first {old['first'] / max(new['first'], 1e-6):.1f}, "
            f"steady {old['steady'] / max(new['steady'], 1e-6):.1f}, "
            f"after one new Submit {old['arrival'] / max(new['arrival'], 1e-6):.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
