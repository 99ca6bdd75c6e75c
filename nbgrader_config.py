"""nbgrader's configuration for the attention course; the course directory is this folder.

    nbgrader generate_assignment attention      # source/ -> release/ (committed)
    nbgrader autograde attention                # submitted/ -> autograded/ + gradebook.db
    nbgrader generate_feedback attention        # autograded/ -> feedback/ (HTML per student)
    nbgrader export --to grades.csv             # the gradebook as CSV

Autograding runs the student's notebook in its own kernel as usual (the visible checks and plots), then
autograder.notebook_grading.ExternalVerdicts grades each check outside that kernel, on inputs drawn at
grading time, and writes the verdict into the test cell before nbgrader saves the grade.
"""

import os
import sys

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autograder.notebook_grading import DropEmptyMetadata, ExternalVerdicts, RestoreCellFlags, StartVerdicts  # noqa: E402
from autograder.student_kernel import SurvivingExecute  # noqa: E402

c = get_config()  # noqa: F821 (nbgrader provides it)

c.CourseDirectory.course_id = "attention"

# An assignment's hidden checks live beside its source notebook (source/<assignment>/checks.py): never released
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "checks.py"]

# Each cell of a student's notebook gets 60 s in the student's kernel; a cell past that is interrupted
# and the rest of the notebook still runs. The hidden checks have their own limits (autograder.answer_grading).
c.SurvivingExecute.timeout = 60
c.SurvivingExecute.interrupt_on_timeout = True
c.SurvivingExecute.startup_timeout = 120

# nbgrader's own sanitising steps, with two fixes: a duplicated grade cell no longer fails the submission, and a
# cell whose nbgrader flags were changed (grade: false on a test cell) is restored instead of failing it
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    DeduplicateIds,
    DropEmptyMetadata,
    OverwriteKernelspec,
    RestoreCellFlags,
    OverwriteCells,
    CheckCellMetadata,
]

c.Autograde.autograde_preprocessors = [
    StartVerdicts,  # the hidden checks start at once, in their own process, while the kernel runs
    SurvivingExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    ExternalVerdicts,  # after the kernel ran, before the grades are saved
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]

# What students get in place of a solution
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A grade cell the student deleted is put back (with a note) and graded like the others.
c.OverwriteCells.add_missing_cells = True
