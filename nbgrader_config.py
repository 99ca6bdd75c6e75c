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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autograder.course.config import find_alembic
from autograder.notebook.pipeline import chain_config

c = get_config()  # noqa: F821 (nbgrader provides it)
c.merge(chain_config())
find_alembic()  # nbgrader runs alembic by name: the one beside this Python, with no PATH change
