"""python -m autograder.course.term: each student's own due date and late days, edited and shown from one command.

    python -m autograder.course.term --course DIR extend ada attention --hours 48
    python -m autograder.course.term --course DIR extend ada attention --due "2026-12-16 17:00"   # UTC unless it says
    python -m autograder.course.term --course DIR extend ada attention --remove
    python -m autograder.course.term --course DIR grant ada 3        # ada's late days for the term (c.LateDays.tokens)
    python -m autograder.course.term --course DIR show [--assignment attention]

Everything is written in the course's database (autograder.term), which the grading service reads at
each Submit and the next class run reads for the late penalty: a student whose due date changed is graded again, no
one else.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from autograder.settings import CourseSettings, GradebookDates, SettingsError
from autograder.term import Term, TermError


def parsed_due(text: str) -> datetime.datetime:
    """A due date as the gradebook keeps it: naive UTC ('2026-12-16 17:00' is UTC; '...+01:00' converted)."""
    try:
        value = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date: write it as '2026-12-16 17:00' (UTC)") from None
    return value.astimezone(datetime.UTC).replace(tzinfo=None) if value.tzinfo else value


def show(*, settings: CourseSettings, term: Term, assignment: str | None = None) -> list[str]:
    """One line per student whose due date or late days are their own: their due date for each assignment."""
    dates = GradebookDates(settings.db)
    try:
        names = [assignment] if assignment else term.assignments()
        lines = []
        for name in names:
            for student, standing in term.standings(assignment=name, base=settings.due(name, dates)).items():
                due = f"{standing.due:%Y-%m-%d %H:%M} UTC" if standing.due else "no due date"
                lines.append(
                    f"{student} {name}: due {due}{standing.why()}; late days {standing.left} of {standing.granted} left"
                )
        lines += [f"{student}: {tokens} late days for the term" for student, tokens in term.grants().items()]
        return lines or ["every student has the assignments' due dates and the course's late days"]
    finally:
        dates.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.course.term", description=__doc__.splitlines()[0])
    parser.add_argument("--course", type=Path, required=True, help="the course folder")
    parser.add_argument("--db", help="the course database's URL (default: the one the course's settings name)")
    commands = parser.add_subparsers(dest="command", required=True)
    extend = commands.add_parser("extend", help="a student's own due date for one assignment")
    extend.add_argument("student")
    extend.add_argument("assignment")
    how = extend.add_mutually_exclusive_group(required=True)
    how.add_argument("--hours", type=float, help="hours added to the assignment's due date")
    how.add_argument("--due", type=parsed_due, help="their own due date (UTC unless it names a zone)")
    how.add_argument("--remove", action="store_true", help="back to the assignment's due date")
    grant = commands.add_parser("grant", help="a student's late-day tokens for the term")
    grant.add_argument("student")
    grant.add_argument("tokens", type=int)
    listing = commands.add_parser("show", help="the students whose due dates or late days are their own")
    listing.add_argument("--assignment")
    args = parser.parse_args(argv)
    try:
        settings = CourseSettings.read(args.course, db=args.db)
    except SettingsError as error:
        parser.exit(2, f"python -m autograder.course.term: {error}\n")
    if not settings.has_gradebook():
        parser.exit(
            2,
            f"python -m autograder.course.term: {args.course} has no gradebook yet: make the course first "
            "(python -m autograder.course, or nbgrader generate_assignment)\n",
        )
    term = settings.term()
    try:
        if args.command == "extend":
            term.extend(student=args.student, assignment=args.assignment, due=args.due, hours=args.hours)
            standing = term.standing(
                student=args.student, assignment=args.assignment, base=settings.due(args.assignment)
            )
            due = f"{standing.due:%Y-%m-%d %H:%M} UTC" if standing.due else "no due date"
            print(f"{args.student} {args.assignment}: due {due}{standing.why()}")
        elif args.command == "grant":
            term.grant(student=args.student, tokens=args.tokens)
            print(f"{args.student}: {args.tokens} late days for the term")
        else:
            print("\n".join(show(settings=settings, term=term, assignment=args.assignment)))
    except TermError as error:
        parser.exit(2, f"python -m autograder.course.term: {error}\n")
    finally:
        term.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
