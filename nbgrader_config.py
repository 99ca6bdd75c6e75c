"""nbgrader's configuration for the attention course; the course directory is this folder.

    nbgrader generate_assignment attention      # source/ -> release/ (committed); positions likewise
    nbgrader autograde attention                # submitted/ -> autograded/ + gradebook.db
    nbgrader generate_feedback attention        # autograded/ -> feedback/ (HTML per student)
    nbgrader export --to grades.csv             # the gradebook as CSV

The chain of steps (RestoreCellFlags, StartVerdicts, SurvivingExecute, ExternalVerdicts, DropPoints, the
feedback's template, ...) is assembled in one place, autograder.notebook.pipeline.chain_config, and merged here, so
nbgrader's commands and Formgrader run what autograder.course.classroom runs.
"""

import os
import sys

c = get_config()  # noqa: F821 (nbgrader provides it)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from autograder.course.config import find_alembic
    from autograder.notebook.pipeline import chain_config

    c.merge(chain_config())
    find_alembic()  # nbgrader runs alembic by name: the one beside this Python, with no PATH change
except Exception as error:
    # Fail closed. nbgrader logs an error in a configuration file and goes on with its defaults, which release
    # checks.py and reference.py beside the notebook; SystemExit is the one thing it lets through.
    raise SystemExit(
        f"nbgrader cannot load the course's configuration {__file__}: {type(error).__name__}: {error}\n"
        "Nothing was done (without it nbgrader would hand out the hidden checks and the answer key). "
        "Fix the error above, then run the command again."
    ) from error
