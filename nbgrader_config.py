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
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    ClearSolutions,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autograder.feedback import NBGRADER_TEMPLATES, TEMPLATE, TEMPLATE_PATHS, TEMPLATES, HandGrades, VerdictStyle  # noqa: E402
from autograder.notebook_grading import (  # noqa: E402
    DropEmptyMetadata,
    DropPoints,
    ExternalVerdicts,
    RestoreCellFlags,
    StartVerdicts,
)
from autograder.sanitise import Sanitise  # noqa: E402
from autograder.stubs import NamedStubs  # noqa: E402
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
    Sanitise,  # the student's outputs and markdown made inert, before anything shows them (issue 18)
    ExternalVerdicts,  # after the kernel ran, before the grades are saved
    SaveAutoGrades,
    DropPoints,  # the points are in the gradebook now: no "Out[n]: 2" after each verdict
    AssignLatePenalties,
    CheckCellMetadata,
]

# The feedback page: nbgrader's, with written answers not marked yet shown as "to be graded by hand" and the
# header's totals "29 of 29 automatic, 4 to grade" (autograder.feedback); set for GenerateFeedback's exporter only,
# so Formgrader keeps its own template.
c.GenerateFeedback.preprocessors = [GetGrades, HandGrades]
c.GenerateFeedback.HTMLExporter.template_name = TEMPLATE
c.GenerateFeedback.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(NBGRADER_TEMPLATES)]
c.GenerateFeedback.HTMLExporter.extra_template_paths = TEMPLATE_PATHS
# The feedback and Formgrader's pages wrap each verdict line inside its box: VerdictStyle is nbconvert's
# CSSHTMLHeaderPreprocessor (the pages' inline styles) with the course's CSS added, in its place
c.HTMLExporter.preprocessors = [VerdictStyle]
# and sanitise what they show (nbconvert's own, off by default): a second line behind Sanitise, for a notebook
# autograded before it (Formgrader's own template renders markdown cells unsanitised: docs/upstream-nbgrader.md)
c.HTMLExporter.sanitize_html = True
c.CSSHTMLHeaderPreprocessor.enabled = False
c.VerdictStyle.enabled = True
c.VerdictStyle.style = "default"  # the classic template's Pygments style

# What students get in place of a solution: a stub that names the function and its section (autograder.stubs)
c.GenerateAssignment.preprocessors = [
    NamedStubs if step is ClearSolutions else step
    for step in GenerateAssignment.class_traits()["preprocessors"].default()
]
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("{function} is not written yet: write it in {place}")'
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# A grade cell the student deleted is put back (with a note) and graded like the others.
c.OverwriteCells.add_missing_cells = True
