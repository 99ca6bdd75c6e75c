"""The grading chain in one place: nbgrader's steps for one notebook, as objects, handed to nbgrader in-process.

    from autograder.notebook.pipeline import ChainOptions, nbgrader_api
    api = nbgrader_api(root, options=ChainOptions(cell_timeout=20, seed=7))
    api.autograde("attention", "ada"); api.generate_feedback("attention", "ada")

``chain_config`` builds the traitlets Config that nbgrader's apps and converters read: Autograde's sanitising
steps (nbgrader's, with RestoreCellFlags and DropEmptyMetadata), its autograding steps (StartVerdicts,
SurvivingExecute, ..., Sanitise, ExternalVerdicts, VerdictGrades, ...), GenerateFeedback's steps and
template, GenerateAssignment's stubs. Options (``ChainOptions``) reach their step as values: ``cell_timeout`` is
SurvivingExecute.timeout, ``notebook_budget`` SurvivingExecute.notebook_timeout, ``idle_timeout``
SurvivingExecute.idle_timeout, ``checks_budget``
ExternalVerdicts.timeout (the hidden checks' CPU seconds), ``seed`` ExternalVerdicts.seed,
``forward_cache`` SandboxedKernelManager.forward_cache. The repository's nbgrader_config.py merges the same Config,
so nbgrader's own commands and Formgrader run the same chain; a course folder's autograder_config.py loads it
(autograder.course.config), for them only: grading never parses generated text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.apps import NbGraderAPI
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import (
    AssignLatePenalties,
    ClearOutput,
    ClearSolutions,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
)
from traitlets.config import Config

from autograder.notebook.autograde import (
    CheckMetadata,
    DropEmptyMetadata,
    ExternalVerdicts,
    RestoreCellFlags,
    StartVerdicts,
    VerdictGrades,
)
from autograder.notebook.feedback import (
    NBGRADER_TEMPLATES,
    TEMPLATE,
    TEMPLATE_PATHS,
    TEMPLATES,
    AppealLinks,
    FeedbackPage,
    HandGrades,
    ImageDescriptions,
    KernelEnds,
    VerdictStyle,
)
from autograder.notebook.kernel import SurvivingExecute
from autograder.notebook.sanitise import Sanitise
from autograder.notebook.stubs import NamedStubs
from autograder.timeouts import CELL_TIMEOUT

COURSE_ID = "attention"
KERNEL_STARTUP = 120  # seconds for the sandboxed kernel to start
# An assignment's hidden checks and its reference live beside its source notebook (source/<assignment>/checks.py or
# the package checks/, reference.py: autograder.assignments): never released (nbgrader ignores a folder by its name)
IGNORED = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "checks.py", "checks", "reference.py"]

# nbgrader's own sanitising steps, with two fixes: a duplicated grade cell no longer fails the submission, and a
# cell whose nbgrader flags were changed (grade: false on a test cell) is restored instead of failing it; its
# metadata check (CheckCellMetadata, in both lists) validates against a schema compiled once (CheckMetadata)
SANITISE = [
    ClearOutput,
    DeduplicateIds,
    DropEmptyMetadata,
    OverwriteKernelspec,
    RestoreCellFlags,
    OverwriteCells,
    CheckMetadata,
]
AUTOGRADE = [
    StartVerdicts,  # the hidden checks start at once, in their own process, while the kernel runs
    SurvivingExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    Sanitise,  # the student's outputs and markdown made inert before anything shows them (notebook.sanitise)
    ExternalVerdicts,  # after the kernel ran, before the grades are saved
    VerdictGrades,  # nbgrader's SaveAutoGrades, each check's points taken as data from ExternalVerdicts
    AssignLatePenalties,
    CheckMetadata,
]
# The feedback page: nbgrader's, with written answers not marked yet shown as "to be graded by hand" and the
# header's totals, a text for each image, how the kernel ended early (autograder.notebook.feedback); made by
# FeedbackPage
FEEDBACK = [GetGrades, HandGrades, ImageDescriptions, AppealLinks, KernelEnds]
CODE_STUB = '# YOUR CODE HERE\nraise NotImplementedError("{function} is not written yet: write it in {place}")'


@dataclass(frozen=True)
class ChainOptions:
    """What a run may change in the chain, each a value for one step."""

    cell_timeout: int | None = None  # SurvivingExecute.timeout (None: timeouts.CELL_TIMEOUT)
    notebook_budget: int | None = None  # SurvivingExecute.notebook_timeout (None: timeouts.NOTEBOOK_BUDGET)
    checks_budget: float | None = (
        None  # ExternalVerdicts.timeout, the hidden checks' CPU s (None: timeouts.CHECKS_BUDGET)
    )
    idle_timeout: float | None = None  # SurvivingExecute.idle_timeout, a cell's wait (None: timeouts.IDLE_TIMEOUT)
    seed: int | None = None  # ExternalVerdicts.seed: the hidden checks' inputs (None: fresh each run)
    forward_cache: str | None = None  # SandboxedKernelManager.forward_cache: lib's forward passes, shared
    late_penalty: str | None = None  # LateSubmissionPlugin.penalty_method, the course's (None: nbgrader's, "none")


def chain_config(options: ChainOptions = ChainOptions(), *, root: Path | None = None, db: str | None = None) -> Config:
    """nbgrader's configuration of the course's chain; ``root``: the course folder (CourseDirectory.root),
    ``db``: its gradebook (CourseDirectory.db_url; default nbgrader's, the root's gradebook.db)."""
    c = Config()
    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.ignore = list(IGNORED)
    if root is not None:
        c.CourseDirectory.root = str(root)
    if db is not None:
        c.CourseDirectory.db_url = db
    c.SurvivingExecute.timeout = CELL_TIMEOUT if options.cell_timeout is None else int(options.cell_timeout)
    if options.notebook_budget is not None:
        c.SurvivingExecute.notebook_timeout = int(options.notebook_budget)
    if options.idle_timeout is not None:
        c.SurvivingExecute.idle_timeout = float(options.idle_timeout)
    c.SurvivingExecute.interrupt_on_timeout = True
    c.SurvivingExecute.startup_timeout = KERNEL_STARTUP
    if options.checks_budget is not None:
        c.ExternalVerdicts.timeout = float(options.checks_budget)
    if options.seed is not None:
        c.ExternalVerdicts.seed = int(options.seed)
    if options.late_penalty is not None:  # counted from each student's own due date (SubmittedAssignment.extension)
        c.LateSubmissionPlugin.penalty_method = options.late_penalty
    if options.forward_cache and Path(options.forward_cache).exists():  # local to the worker (forward.on_this_machine)
        c.SandboxedKernelManager.forward_cache = options.forward_cache
    c.Autograde.sanitize_preprocessors = list(SANITISE)
    c.Autograde.autograde_preprocessors = list(AUTOGRADE)
    # A grade cell the student deleted is put back (with a note) and graded like the others
    c.OverwriteCells.add_missing_cells = True
    feedback_config(c)
    c.GenerateAssignment.preprocessors = [
        NamedStubs if step is ClearSolutions else step
        for step in GenerateAssignment.class_traits()["preprocessors"].default()
    ]
    c.ClearSolutions.code_stub = {"python": CODE_STUB}
    c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
    return c


def feedback_config(c: Config) -> None:
    """GenerateFeedback's steps and template, set for its exporter only (Formgrader keeps its own template);
    the pages' inline styles (VerdictStyle: nbconvert's CSSHTMLHeaderPreprocessor with the course's CSS), sanitised."""
    c.GenerateFeedback.preprocessors = list(FEEDBACK)
    c.GenerateFeedback.exporter_class = FeedbackPage
    c.GenerateFeedback.HTMLExporter.template_name = TEMPLATE
    c.GenerateFeedback.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), str(NBGRADER_TEMPLATES)]
    c.GenerateFeedback.HTMLExporter.extra_template_paths = TEMPLATE_PATHS
    c.HTMLExporter.preprocessors = [VerdictStyle]
    # nbconvert's own sanitising of what the pages show (off by default): a second line behind Sanitise, for a
    # notebook autograded before it (Formgrader's template renders markdown unsanitised: docs/upstream-nbgrader.md),
    # with Sanitise's nh3 cleaning as the pages' clean_html filter: nbconvert's (bleach) escapes the tags it does not
    # allow, and Formgrader showed a student's <p> around a link, a table's <th>, as literal text
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.filters = {"clean_html": "autograder.notebook.sanitise.clean_html"}
    c.CSSHTMLHeaderPreprocessor.enabled = False
    c.VerdictStyle.enabled = True
    c.VerdictStyle.style = "default"  # the classic template's Pygments style


def nbgrader_api(root: Path, *, options: ChainOptions = ChainOptions(), db: str | None = None) -> NbGraderAPI:
    """nbgrader's NbGraderAPI on the course folder ``root``, running the course's chain (chain_config)."""
    return NbGraderAPI(config=chain_config(options, root=Path(root), db=db))
