"""One notebook through nbgrader's Autograde: its cells restored, its kernel run, each check's verdict written.

nbgrader's steps for one notebook (nbgrader_config.py lists them in order):

- RestoreCellFlags (sanitising): a test or grade cell whose nbgrader flags the student changed is restored
  from the assignment, so nbgrader's OverwriteCells can restore it and the rest is graded as usual;
- DropEmptyMetadata (sanitising): a cell that nbgrader's DeduplicateIds emptied becomes the student's own;
- CheckMetadata (sanitising, and last): nbgrader's CheckCellMetadata with its schema compiled once;
- StartVerdicts (before the kernel): the hidden checks start on the answers at once, in their own process;
- SurvivingExecute (autograder.notebook.kernel): the student's kernel runs the notebook, for the visible checks
  and plots;
- ExternalVerdicts (before VerdictGrades): REPLACES the outputs of every grade cell whose grade_id is one of
  the assignment's checks (source/<assignment>/checks.py) with the verdict in words (each property, passed or
  failed and why, the points, the seed), stores the verdict as data in the cell's metadata (verdicts.KEY) and
  the hidden checks' seconds by the clock in the notebook's (verdicts.CHECKS_SECONDS), and hands each check's
  points on the cell's scale to the next step as data (``resources[POINTS]``). So nothing the kernel printed,
  patched or deleted decides a grade;
- VerdictGrades (in place of nbgrader's SaveAutoGrades): saves each check cell's points from
  ``resources[POINTS]``, never from the cell's outputs, and every other grade cell (a written answer, an unknown
  grade id) by nbgrader's own rule (SaveAutoGrades: an error or stderr gives 0, else the first number output,
  else full points). Before, the points travelled as an ``Out[n]:`` text that SaveAutoGrades parsed and a later
  step deleted.

Other cells (manually graded answers, unknown grade ids) are left as they are.
"""

from __future__ import annotations

import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as WaitedTooLong
from dataclasses import dataclass
from pathlib import Path

import jsonschema
from nbformat.v4 import new_code_cell, new_output
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.preprocessors import CheckCellMetadata, ClearHiddenTests, NbGraderPreprocessor, SaveAutoGrades
from nbgrader.utils import is_grade
from traitlets import Float, Integer, Unicode

from autograder import assignments, verdicts
from autograder.answers.budget import CALL_LIMIT, JUDGING_SLACK, Limits
from autograder.answers.grading import answer_sources, grade_answers, unfinished
from autograder.timeouts import CHECKS_BUDGET
from autograder.verdicts import ChecksEnd, Verdict


def check_cells(nb, checks: assignments.AssignmentChecks) -> list:
    """The code cells that are grade cells of one of the assignment's checks, in order."""
    return [
        cell
        for cell in nb.cells
        if cell.cell_type == "code" and is_grade(cell) and cell.metadata["nbgrader"].get("grade_id") in checks.checks
    ]


def kernel_summary(cell) -> str:
    """One line on what the visible checks did in the student's kernel (they do not decide the grade)."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return (
                f"In your notebook the visible checks stopped with {output.get('ename')}: {output.get('evalue')} "
                "(they help you; the grade above comes from the hidden checks)."
            )
    return "In your notebook the visible checks ran without an error (the grade above comes from the hidden checks)."


RESTORED = "autograder_restored"  # a cell's metadata key: what RestoreCellFlags put back, for the feedback


def restored_note(cell) -> str:
    changes = cell.get("metadata", {}).get(RESTORED)
    if not changes:
        return ""
    return (
        f"This cell had been changed in your notebook ({'; '.join(changes)}); it was restored from the assignment "
        "and graded as usual.\n"
    )


def verdict_outputs(cell, verdict: Verdict) -> list:
    """The check cell's outputs: the verdict in words (with the restored-cell note and what the visible checks
    did in the kernel). Its points go to the gradebook as data (POINTS), not as an output."""
    text = f"{restored_note(cell)}{verdict.text()}\n{kernel_summary(cell)}\n"
    return [new_output("stream", name="stdout", text=text)]


POINTS = "autograder_points"  # the resources key: {grade id: points on the cell's scale} of the check cells


EARLY = "autograder_early_verdicts"  # the resources key where StartVerdicts leaves EarlyVerdicts


@dataclass(frozen=True)
class EarlyVerdicts:
    """What StartVerdicts hands ExternalVerdicts: the answers and checks it started on, the verdicts to come with
    the seconds they took (ExternalVerdicts.timed), and by when (time.monotonic) they must have come: the answers'
    wall-clock budget from the start, plus judging; ``started``: when they started (time.monotonic)."""

    sources: list
    checks: list
    verdicts: Future
    due: float
    started: float | None = None


class ExternalVerdicts(NbGraderPreprocessor):
    """Replace the outputs of the assignment's check cells with the verdicts of answer_grading.grade_answers."""

    timeout = Float(CHECKS_BUDGET, help="CPU seconds for grading one notebook's answers in all").tag(config=True)
    call_limit = Float(CALL_LIMIT, help="CPU seconds for one answer cell or one call of a student's function").tag(
        config=True
    )
    seed = Integer(None, allow_none=True, help="Seed of the inputs (default: fresh each run, to reproduce one)").tag(
        config=True
    )
    wall = Float(
        None, allow_none=True, help="Seconds by the clock for grading one notebook's answers (default: 2.5 x timeout)"
    ).tag(config=True)
    source = Unicode(
        "",
        help="The folder holding <assignment>/checks.py (default: source/ of the course folder the "
        "notebook is graded in, nbgrader's <step>/<student>/<assignment>/ layout)",
    ).tag(config=True)

    def assignment(self, resources) -> assignments.AssignmentChecks:
        """The checks of the assignment being graded, from its source folder."""
        name = resources["nbgrader"]["assignment"]
        source = (
            Path(self.source) if self.source else Path(resources["metadata"]["path"]).resolve().parents[2] / "source"
        )
        return assignments.load(source / name)

    def plan(self, nb, resources):
        """(the assignment's checks, its check cells in this notebook, their ids, the answers' sources)."""
        checks = self.assignment(resources)
        cells = check_cells(nb, checks)
        return checks, cells, [cell.metadata["nbgrader"]["grade_id"] for cell in cells], answer_sources(nb)

    def limits(self) -> Limits:
        return Limits(self.call_limit, self.timeout, self.wall)

    def grade(self, checks, sources, ids) -> dict:
        return grade_answers(
            checks,
            sources,
            seed=self.seed,
            timeout=self.timeout,
            call_limit=self.call_limit,
            checks=ids,
            wall=self.wall,
        )

    def timed(self, checks, sources, ids) -> tuple[dict, float]:
        """(grade's verdicts, the seconds by the clock they took)."""
        started = time.monotonic()
        return self.grade(checks, sources, ids), time.monotonic() - started

    def collect(self, early: EarlyVerdicts, checks, ids) -> tuple[dict, float | None]:
        """The early verdicts and their seconds, waited for until they are due at most; past that, 0 points that say
        why, and the seconds waited since they started."""
        try:
            return early.verdicts.result(timeout=max(0.0, early.due - time.monotonic()))
        except WaitedTooLong:
            seconds = self.limits().wall_seconds
            self.log.error("the hidden checks did not finish within %g s (+ %g s to judge)", seconds, JUDGING_SLACK)
            reason = f"the hidden checks did not finish within {seconds:g} s by the clock"
            waited = None if early.started is None else time.monotonic() - early.started
            return unfinished(checks, ids, reason, ChecksEnd(verdicts.CHECKS_CLOCK, limit=seconds)), waited

    def preprocess(self, nb, resources):
        for cell in nb.cells:  # a verdict is only ever the one written here: none the student put in a cell
            cell.get("metadata", {}).pop(verdicts.KEY, None)
        nb.metadata.pop(verdicts.CHECKS_SECONDS, None)  # nor the checks' seconds
        checks, cells, ids, sources = self.plan(nb, resources)
        if not cells:
            return nb, resources
        early = resources.pop(EARLY, None)
        if isinstance(early, EarlyVerdicts) and (early.sources, early.checks) == (sources, ids):  # the very answers
            decided, seconds = self.collect(early, checks, ids)
        else:
            decided, seconds = self.timed(checks, sources, ids)
        if seconds is not None:
            nb.metadata[verdicts.CHECKS_SECONDS] = round(seconds, 2)
        points = resources.setdefault(POINTS, {})
        for cell in cells:
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            verdict = decided[grade_id]
            cell.outputs = verdict_outputs(cell, verdict)
            cell.metadata[verdicts.KEY] = verdict.to_dict()
            points[grade_id] = verdict.scaled(float(cell.metadata["nbgrader"]["points"]))
            self.log.info("%s: %g / %g points", verdict.check, verdict.points, verdict.max_points)
        return nb, resources


class StartVerdicts(ExternalVerdicts):
    """Start the hidden checks as soon as the answers are known, before the kernel runs the notebook.

    Placed before Execute: the checks run the answer cells in their own process, so they need nothing from
    the kernel, and grading one notebook takes about as long as running it instead of that plus the
    checks. ExternalVerdicts collects the verdicts when the sources it sees are the ones graded here
    (otherwise it grades them again), waiting at most until they are due: the answers' wall-clock budget
    (autograder.answers.budget, 300 s by default) from here, plus JUDGING_SLACK; the kernel meanwhile runs
    under its own per-notebook limit, so a notebook ends within the longer of the two plus judging.
    Configured like ExternalVerdicts (seed, timeout, call_limit, wall).
    """

    def preprocess(self, nb, resources):
        checks, cells, ids, sources = self.plan(nb, resources)
        if cells:
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hidden-checks")
            started = time.monotonic()
            due = started + self.limits().wall_seconds + JUDGING_SLACK
            graded = pool.submit(self.timed, checks, sources, ids)
            resources[EARLY] = EarlyVerdicts(sources, ids, graded, due, started)
            pool.shutdown(wait=False)
        return nb, resources


class VerdictGrades(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, but a check cell's automatic score is its verdict's points, handed over as data
    by ExternalVerdicts (``resources[POINTS]``), not parsed from the cell's outputs; every other grade cell is
    scored by nbgrader's own rule. A check cell left without points (which ExternalVerdicts never does) scores 0,
    said in the log, never full points by default."""

    def preprocess(self, nb, resources):
        self.points = dict(resources.get(POINTS, {}))
        # the check cells: those given points, and any grade cell holding a verdict (ExternalVerdicts removed every
        # verdict the notebook came with and wrote one on each check cell)
        self.checks = set(self.points) | {
            cell.metadata["nbgrader"]["grade_id"]
            for cell in nb.cells
            if is_grade(cell) and verdicts.KEY in cell.get("metadata", {})
        }
        return super().preprocess(nb, resources)

    def _add_score(self, cell, resources) -> None:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        if grade_id not in self.checks:
            return super()._add_score(cell, resources)
        grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
        if grade_id not in self.points:
            self.log.error("%s: the check cell has no verdict's points: scored 0", grade_id)
        grade.auto_score = float(self.points.get(grade_id, 0.0))
        grade.needs_manual_grade = grade.manual_score is not None
        self.gradebook.db.commit()


def released_source(source: str) -> str:
    """A cell's text as the student was given it: the gradebook keeps the source's, hidden tests included, and
    generate_assignment removed them (nbgrader's own ClearHiddenTests, applied here the same way)."""
    cell = new_code_cell(source)
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


class RestoreCellFlags(NbGraderPreprocessor):
    """Put back the nbgrader flags of every cell the assignment knows (grade, solution, task, points, locked).

    nbgrader's OverwriteCells restores a locked cell's source and its points, but not its grade or solution
    flag: a test cell whose ``grade`` the student set to false keeps a checksum that cannot match, and
    nbgrader fails the whole notebook ("Inconsistent checksums"). Placed before OverwriteCells, this step
    makes each known cell's flags the assignment's again, so nbgrader's own rule applies: the cell is
    restored from the source and the rest is graded as usual. What was changed is kept in the cell's
    metadata (RESTORED) and said in that cell's feedback; a cell whose source was edited is noted too.
    """

    def preprocess(self, nb, resources):
        notebook, assignment = resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"]
        with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
            try:
                source = gradebook.find_notebook(notebook, assignment)
            except MissingEntry:
                return nb, resources
            self.cells = {cell.name: cell for cell in source.source_cells}
            self.points = {cell.name: float(cell.max_score) for cell in source.grade_cells}
            self.solutions = {cell.name for cell in source.solution_cells}
            self.tasks = {cell.name for cell in source.task_cells}
            return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        cell.get("metadata", {}).pop(RESTORED, None)  # only what this step writes, never the student's own
        flags = cell.get("metadata", {}).get("nbgrader")
        name = flags.get("grade_id") if isinstance(flags, dict) else None
        if name not in self.cells:
            return cell, resources
        wanted = {
            "grade": name in self.points,
            "solution": name in self.solutions,
            "task": name in self.tasks,
            "locked": bool(self.cells[name].locked),
        }
        if name in self.points:
            wanted["points"] = self.points[name]
        changes = [
            f"{key}: {flags.get(key)!r} -> {value!r}"
            for key, value in wanted.items()
            if (flags.get(key) or False) != value
        ]
        if not wanted["grade"]:
            flags.pop("points", None)
        flags.update(wanted)
        if cell.cell_type != self.cells[name].cell_type:
            changes.append(f"cell type: {cell.cell_type} -> {self.cells[name].cell_type}")
        elif wanted["locked"] and released_source(self.cells[name].source) != cell.source:
            changes.append("its text was edited")
        if changes:
            self.log.warning("restored cell %s: %s", name, "; ".join(changes))
            cell.metadata[RESTORED] = changes
        return cell, resources


class DropEmptyMetadata(NbGraderPreprocessor):
    """Remove the empty ``nbgrader`` metadata that nbgrader's DeduplicateIds leaves on a duplicated cell.

    DeduplicateIds keeps the last cell of a grade id and sets ``metadata.nbgrader = {}`` on the others; the
    steps after it then take such a cell for an nbgrader cell and fail on its missing grade_id (KeyError),
    which fails the whole submission. Without the key the copy is a plain cell of the student's own.
    """

    def preprocess_cell(self, cell, resources, index):
        if cell.get("metadata", {}).get("nbgrader", None) == {}:
            del cell.metadata["nbgrader"]
        return cell, resources


class CompiledMetadataValidator(MetadataValidator):
    """nbgrader's MetadataValidator, validating each cell against a schema compiled once per process:
    nbgrader's own calls jsonschema.validate, which checks the schema itself again for every cell (about 2 ms a
    cell, 0.17 CPU s a notebook of 84 cells, each time the chain checks it). The same schema, the same first error
    (jsonschema's best_match); a cell of another schema version gets nbgrader's own error."""

    compiled: dict = {}  # {schema version: its validator}, for the process

    def validate_cell(self, cell) -> None:
        flags = cell.metadata.get("nbgrader")
        if flags is None or flags.get("schema_version", 0) != self.schema_version:
            return super().validate_cell(cell)
        validator = self.compiled.get(self.schema_version)
        if validator is None:
            kind = jsonschema.validators.validator_for(self.schema)
            kind.check_schema(self.schema)
            validator = self.compiled[self.schema_version] = kind(self.schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(flags))
        if error is not None:
            raise error
        return None


class CheckMetadata(CheckCellMetadata):
    """nbgrader's CheckCellMetadata (every graded cell's nbgrader metadata valid for its schema), validated by
    CompiledMetadataValidator; a notebook that fails is refused with nbgrader's message."""

    def preprocess(self, nb, resources):
        try:
            CompiledMetadataValidator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            raise ValidationError("Notebook failed to validate; the nbgrader metadata may be corrupted.") from None
        return nb, resources
