"""The grading service's command line, ``python -m autograder.service``: its options parsed and checked, then the
service (autograder.service.app) started with them. Kept apart from the service so that ``--help`` and a refused
option answer without the hub extra (jupyterhub), which only the running service needs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder import assignments
from autograder.grading import gateway
from autograder.grading.scheduler import access_from, add_flags
from autograder.grading.task import GradingError
from autograder.settings import SettingsError

DESCRIPTION = "The grading service: a JupyterHub service that checks each Submit and shows the verdicts within seconds."


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.service", description=DESCRIPTION)
    parser.add_argument("--course", type=Path, required=True, help="the instructor's course folder")
    parser.add_argument(
        "--exchange",
        type=Path,
        required=True,
        help="the exchange's folder of this course (with ngshare: where the service keeps its private copies)",
    )
    parser.add_argument(
        "--assignment",
        action="append",
        default=[],
        help="check only this assignment (repeat it, or a,b; default: every one of the course's source/)",
    )
    parser.add_argument("--db", help="the course database's URL (default: the one the course's settings name)")
    parser.add_argument("--workers", type=int, default=2, help="checks at the same time here (default 2)")
    parser.add_argument("--scheduler", help="a Dask scheduler's address: the checks run on its workers")
    add_flags(parser)
    for flag, name, kind, shown, what in gateway.FLAGS:  # a dask-gateway's cluster, its workers adapting to the queue
        parser.add_argument(flag, dest=f"gateway_{name}", type=kind, metavar=shown, default=None, help=what)
    parser.add_argument("--instructors", default="", help="accounts that see every attempt (comma-separated)")
    parser.add_argument("--students", default="", help="the class's accounts besides the gradebook's (a,b,c)")
    parser.add_argument(
        "--any-owner",
        action="store_true",
        help="check Submits whatever account made them (an exchange without a system account per student)",
    )
    parser.add_argument(
        "--lti", type=Path, help="the LTI tool's config: instant scores to the LMS (c.InstantChecks.lms)"
    )
    parser.add_argument("--port", type=int, default=0, help="default: from JUPYTERHUB_SERVICE_URL")
    args = parser.parse_args(argv)
    from autograder.service import app  # after --help: the service itself needs the hub extra (jupyterhub)

    try:
        scheduler = gateway.access_from(args) or access_from(args, args.scheduler)
    except GradingError as error:  # the scheduler's address and its certificates, or the gateway's, do not agree
        parser.exit(2, f"python -m autograder.service: {error}\n")
    options = app.ServiceOptions(
        course=args.course.resolve(),
        exchange=args.exchange.resolve(),
        assignments=tuple(name for given in args.assignment for name in given.split(",") if name),
        db=args.db,
        workers=args.workers,
        scheduler=scheduler,
        instructors=tuple(name for name in args.instructors.split(",") if name),
        students=tuple(name for name in args.students.split(",") if name),
        own_submissions_only=not args.any_owner,
        lti=args.lti,
        port=args.port,
    )
    try:
        app.serve(options)
    except (app.ServiceError, SettingsError, assignments.NoAssignment, GradingError) as error:
        parser.exit(2, f"python -m autograder.service: {error}\n")
    return 0
