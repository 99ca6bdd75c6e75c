"""The class's forward cache (issue 12, part 8): what building it costs against what it saves, and from what
class size it pays.

    .venv/bin/python benchmarks/forward_cache_cost.py           # full_solution and blank_release, 2 rounds
    .venv/bin/python benchmarks/forward_cache_cost.py --rounds 3 --students full_solution no_sqrt_scaling

The cache (autograder.grading.forward.shared_forward_cache) is lib's float64 forward pass of the notebook's 300
validation texts (grading.forward.write_forward_cache: logits and every layer's attention patterns), which each
sandboxed kernel maps instead of recomputing. This script measures, in one run:

- build: seconds to write it (the texts tokenised, 300 forward passes, the .npy files written) and its bytes;
- per notebook: grade_submission (what a Dask worker does for one student: nbgrader's autograde and feedback,
  the sandboxed kernel, the hidden checks) of bundled submissions without the cache and with it, alternating
  which goes first, medians over the rounds; the saving is the difference;
- the break-even class size. The cache is built by the coordinator before the workers start, so with W
  workers a class of n costs n * g0 / W without it and b + n * g1 / W with it: it pays from
  n = b * W / (g0 - g1) new submissions. Printed for one worker and for this machine's cores, and the
  predicted class time at 12 and at 200 students (``--sizes``). A cache already built for another course of
  the same model and texts (autograder.grading.forward shares it per user, keyed by their digests) costs nothing
to reuse.

It prints ratios and asserts nothing; these machines are shared and noisy: read the medians.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))


def build(folder: Path) -> tuple[float, int, Path]:
    """(seconds, bytes, path) of writing the class's forward cache into ``folder`` from nothing."""
    from autograder import assignments
    from autograder.grading import forward, recorded
    from lib import transformer

    started = time.perf_counter()
    texts = assignments.load(REPOSITORY / "source" / "attention").forward_texts()
    path = forward.write_forward_cache(folder / recorded.model_digest(str(transformer.MODEL_DIR)), texts)
    seconds = time.perf_counter() - started
    size = sum(file.stat().st_size for file in path.iterdir() if file.is_file())
    return seconds, size, path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", nargs="+", default=["full_solution", "blank_release"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 200])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="workers of the predicted class")
    parser.add_argument("--quick", action="store_true", help="the smallest sizes, to check that it runs (tests)")
    args = parser.parse_args(argv)
    warm = not args.quick  # --quick: no unmeasured first grade (its figures are not judged)
    if args.quick:
        args.students, args.rounds, args.sizes = args.students[-1:], 1, args.sizes[:1]

    from overhead_vs_nbclient import prepared_course

    from autograder import model, sandbox
    from autograder.grading import dispatch, task, worker

    if not model.available():
        print("the store's model is missing (data/model): there is no forward cache to measure")
        return 0
    print(f"bubblewrap: {'yes' if sandbox.bubblewrap() else 'no'}; cores: {os.cpu_count()}; rounds: {args.rounds}")
    with tempfile.TemporaryDirectory(prefix="forward-cache-cost-") as scratch:
        scratch = Path(scratch)
        course = prepared_course(scratch)
        model.cache()
        seconds, size, path = build(scratch)
        print(f"build: {seconds:.1f} s, {size / 1e6:.0f} MB (the assignment's forward_texts, float64)", flush=True)
        assignment = dispatch.load_assignment(course, "attention")
        cached = dataclasses.replace(assignment, chain=dataclasses.replace(assignment.chain, forward_cache=str(path)))
        savings = []
        for student in args.students:
            notebook = REPOSITORY / "examples" / "submissions" / student / "attention" / "attention.ipynb"
            submission = task.Submission(student, {"attention.ipynb": notebook.read_bytes()}, "benchmark")
            if warm:
                worker.grade_submission(assignment, submission)  # warm: imports, the model's measurements
            times = {"without": [], "with": []}
            for round_number in range(args.rounds):
                order = ["without", "with"] if round_number % 2 == 0 else ["with", "without"]
                for side in order:
                    outcome = worker.grade_submission(assignment if side == "without" else cached, submission)
                    times[side].append(outcome.seconds)
            without, with_cache = statistics.median(times["without"]), statistics.median(times["with"])
            savings.append((without, with_cache))
            print(
                f"{student}: without the cache {without:.1f} s, with it {with_cache:.1f} s per notebook "
                f"(rounds {', '.join(f'{a:.1f}/{b:.1f}' for a, b in zip(times['without'], times['with']))}): "
                f"saves {without - with_cache:.1f} s, with / without {with_cache / without:.2f}",
                flush=True,
            )
    g0 = statistics.mean(w for w, _ in savings)
    g1 = statistics.mean(c for _, c in savings)
    saving = g0 - g1
    print(f"mean over {len(savings)} submissions: {g0:.1f} s without, {g1:.1f} s with, saving {saving:.1f} s each")
    if saving <= 0:
        print("the cache saved nothing here: it never pays")
        return 0
    for workers in sorted({1, args.workers}):
        print(
            f"break-even with {workers} worker(s): {seconds * workers / saving:.1f} new submissions "
            f"(build {seconds:.1f} s x {workers} / saving {saving:.1f} s)"
        )
    for n in args.sizes:
        plain = n * g0 / args.workers
        built = seconds + n * g1 / args.workers
        print(
            f"class of {n} on {args.workers} worker(s): {plain:.0f} s without, {built:.0f} s with the cache built "
            f"for it, {n * g1 / args.workers:.0f} s with one already built: with (built) / without {built / plain:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
