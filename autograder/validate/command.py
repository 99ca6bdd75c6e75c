"""The command line: ``python -m autograder.validate --source DIR --assignment NAME``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from autograder import assignments
from autograder.sandbox import UNSANDBOXED
from autograder.validate.assignment import DEFAULT_SEEDS, MUTANT_SEEDS, validate_assignment


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.validate",
        description="Check an assignment before students see it: the solution earns full points and the blank "
        "release none under every seed, the notebook and checks.py agree, nothing secret is released, and each "
        "named wrong version loses the points it says. Exit status 0 only when no mistake is found.",
    )
    parser.add_argument("--source", type=Path, default=Path("source"), help="the folder of assignments (source/)")
    parser.add_argument("--assignment", help="the assignment's folder name (default: the only one in --source)")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="seeds to grade under (default 5)")
    parser.add_argument("--wrong", type=Path, help="a folder of wrong versions' notebooks to grade too")
    parser.add_argument(
        "--mutant-seeds",
        type=int,
        default=MUTANT_SEEDS,
        help=f"seeds each mutant of reference.py is graded under (default {MUTANT_SEEDS}; 0: no mutants)",
    )
    parser.add_argument("--release", type=Path, help="the release folder to check (default: ../release/<assignment>)")
    parser.add_argument(
        "--unsandboxed", action="store_true", help="run the answers without bubblewrap (your own code only)"
    )
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="do not run the solution in a Jupyter kernel (its visible checks and other cells are then not tried)",
    )
    options = parser.parse_args(argv)
    if options.unsandboxed:
        os.environ[UNSANDBOXED] = "1"
    try:
        name = assignments.find(options.source, options.assignment).name
        report = validate_assignment(
            source=options.source,
            assignment=name,
            seeds=options.seeds,
            wrong=options.wrong,
            release=options.release,
            visible=not options.no_run,
            mutant_seeds=options.mutant_seeds,
        )
    except (assignments.NoAssignment, assignments.NoChecks) as error:
        print(f"validate: {error}", file=sys.stderr)
        return 1
    print(report.text())
    return 0 if report.ok else 1
