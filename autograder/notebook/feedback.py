"""The feedback page a student gets.

nbgrader's GenerateFeedback makes each student's page from the autograded notebook and the gradebook (its
GetGrades step), with a template; the course's nbgrader_config.py adds two steps and the course's own template:

- HandGrades (after GetGrades): marks each graded cell that nobody has marked yet (no automatic score, no
  manual one: the written answers until a grader scores them in Formgrader) and adds up the totals, so the
  page (autograder/templates/course_feedback, which extends nbgrader's own) says "to be graded by hand" there
  instead of a score of 0, and its header "29 of 29 automatic, 4 to grade";
- VerdictStyle (in the feedback and in Formgrader's pages): each line of a verdict wraps inside its box,
  instead of running off its right edge;
- ImageDescriptions (after HandGrades): every image an output shows gets an alternative text;
- AppealLinks: where the course runs the grading service (``c.AppealLinks.url``, its checks page), each check
  cell's verdict ends with a link to that check's line on the student's checks page, where they ask for a review
  (autograder.service.appeals); a plain link, no form: the page is a static file;
- KernelEnds: how the student's kernel ended early (a cell's limit, the notebook's wall-clock budget, a death), read
  from the kernel's ends stored in the notebook (autograder.verdicts.KernelEnd), listed under the page's header
  ("cell 7: stopped after 45 s, the notebook's budget; later cells not run"), and how the hidden checks' calls were
  cut short, read from the verdicts stored in the check cells (autograder.verdicts.ChecksEnd: "stopped: attention
  waited 2 s without computing (sleep, input or a lock?)", "stopped: the hidden checks used up their 120 s of CPU
  time"), with the checks each one cost.

The page is made by ``FeedbackPage``, nbconvert's HTMLExporter without its last pass over the finished page.

The feedback of a graded submission is made on a Dask worker, in a private folder whose gradebook holds no
hand grade. After hand grading, ``autograder.grading.refresh`` makes the page again, in the course folder, for
exactly the students whose hand grades changed; nbgrader's ``release_feedback`` then hands the pages out.
"""

from __future__ import annotations

import functools
import urllib.parse
from pathlib import Path

import jinja2
import nbgrader
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor, Preprocessor
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution, is_task
from traitlets import Bool, Unicode

from autograder.verdicts import KEY, StaleVerdicts, checks_ends, read_kernel_ends, read_verdicts

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"  # course_feedback/, extending nbgrader's feedback/
NBGRADER_TEMPLATES = Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates"
TEMPLATE = "course_feedback"
# where the page's templates find nbgrader's ('feedback/index.html.j2') and Bootstrap's CSS, which nbgrader's
# GenerateFeedback otherwise names itself
TEMPLATE_PATHS = [
    str(NBGRADER_TEMPLATES.parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"),
    str(NBGRADER_TEMPLATES),
]

# Outputs keep their line breaks and wrap at the box's edge, between words (Bootstrap breaks anywhere), a word
# longer than the box where it must; on the feedback page each line of a stdout stream is a block of its own
# whose continuation lines are indented under the text that follows the line's first word ("  FAIL name: ...")
PAGE_CSS = """
div.output_area pre, div.output_text pre {
    white-space: pre-wrap;
    word-break: normal;
    overflow-wrap: anywhere;
}
div.output_text pre span.line {
    display: block;
    text-indent: -5ch;
}
"""


def points(value) -> str:
    return f"{round(float(value), 2):g}"


class VerdictStyle(CSSHTMLHeaderPreprocessor):
    """nbconvert's CSSHTMLHeaderPreprocessor (the page's inline styles, ``resources['inlining']['css']``, which
    nbgrader's feedback and formgrade templates write into the page), with PAGE_CSS added. nbgrader_config.py puts
    it in place of that step (disabled there) for every HTML page nbgrader makes: the template's own step would
    otherwise run after this one and set the styles again, without PAGE_CSS."""

    enabled = Bool(True, help="on wherever it is listed").tag(config=True)

    def preprocess(self, nb, resources):
        nb, resources = super().preprocess(nb, resources)
        resources["inlining"]["css"].append(PAGE_CSS)
        return nb, resources


class CompiledTemplates(jinja2.BytecodeCache):
    """The page's templates, compiled once per process and kept in memory: nbgrader makes a new exporter, so a
    new Jinja environment, for every notebook, which would otherwise parse and compile the same templates again
    (about 0.15 CPU s a page). Jinja checks each template's source against what was compiled."""

    def __init__(self):
        self.compiled = {}

    def load_bytecode(self, bucket):
        if bucket.key in self.compiled:
            bucket.bytecode_from_string(self.compiled[bucket.key])

    def dump_bytecode(self, bucket):
        self.compiled[bucket.key] = bucket.bytecode_to_string()


COMPILED = CompiledTemplates()


REMEMBERED_UP_TO = 10_000  # characters: a longer cell is highlighted each time, so no student's outsized cell
# stays in a worker's memory for the rest of the class (at most REMEMBERED cells of this size are kept)
REMEMBERED = 1024


@functools.lru_cache(maxsize=REMEMBERED)
def highlighted(source: str, language: str, magics: str | None, options: tuple) -> str:
    """nbconvert's Highlight2HTML of one cell's source, remembered: most code cells of an assignment are the
    same for every student (the given code, the visible checks), so a worker highlights each of them once."""
    metadata = {} if magics is None else {"magics_language": magics}
    return Highlight2HTML(pygments_lexer=language, extra_formatter_options=dict(options))(source, language, metadata)


class RememberedHighlight(Highlight2HTML):
    """Highlight2HTML through ``highlighted``: the same HTML for the same source, language and options; a cell
    over REMEMBERED_UP_TO characters is highlighted as nbconvert does, each time."""

    def __call__(self, source, language=None, metadata=None):
        if len(source) > REMEMBERED_UP_TO:
            return super().__call__(source, language, metadata)
        magics = (metadata or {}).get("magics_language")
        options = tuple(sorted(self.extra_formatter_options.items()))
        try:
            return highlighted(source, language or self.pygments_lexer, magics, options)
        except TypeError:  # an option whose value cannot be a key (a list): highlighted each time, as nbconvert does
            return super().__call__(source, language, metadata)


class FeedbackPage(HTMLExporter):
    """nbconvert's HTMLExporter, less the pass it makes over every finished page: HTMLExporter parses the whole
    page again with BeautifulSoup, to give an alternative text to the images that have none and a tabindex to
    JupyterLab's cell wrappers, and writes it out anew. On a feedback page (about 1.2 MB and 10,000 tags, its
    plots inline) that pass costs about 1.2 CPU s, a third of what nbgrader spends on a notebook besides its
    kernel. Here the images get their text before the page is made (ImageDescriptions, a step of the feedback
    chain), and the classic template that nbgrader's feedback page extends has no JupyterLab wrappers.

    Its templates are compiled once per process (CompiledTemplates) and each code cell's highlighting is
    remembered (RememberedHighlight)."""

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = COMPILED
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name"))
        highlight = self.filters.get("highlight_code", RememberedHighlight(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        data_types = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources)
        self.register_filter("highlight_code", highlight)
        self.register_filter("filter_data_type", data_types)
        return TemplateExporter.from_notebook_node(self, nb, resources, **kw)


IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml")
NO_DESCRIPTION = "An image drawn by the code above; no description was given"


class ImageDescriptions(Preprocessor):
    """Each image in an output (PNG, JPEG, SVG) without an alternative text gets NO_DESCRIPTION as one, in the
    output's metadata (``output.metadata[mime]['alt']``) where the page's template reads it. An image's metadata
    that is not a mapping (a student's ``display(..., metadata={'image/png': 'x'}, raw=True)``), which no page can
    read and on which nbconvert's template fails, is replaced by that text alone."""

    enabled = Bool(True, help="on wherever it is listed").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            for mime in IMAGE_TYPES:
                if mime not in output.get("data", {}):
                    continue
                metadata = output.setdefault("metadata", {})  # a mapping: nbformat's schema holds it to one
                if not isinstance(metadata.get(mime, {}), dict):
                    metadata[mime] = {}
                metadata.setdefault(mime, {}).setdefault("alt", NO_DESCRIPTION)
        return cell, resources


class HandGrades(NbGraderPreprocessor):
    """After nbgrader's GetGrades: ``by_hand`` in each graded cell's nbgrader metadata ("pending": neither an
    automatic nor a manual score yet; "marked": a grader's score, or a written answer nbgrader scored 0 because
    it was left as released; absent: the automatic score) and
    ``resources['nbgrader']['totals']``: {automatic, automatic_max, by_hand, by_hand_max, pending, summary}."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.totals = dict.fromkeys(("automatic", "automatic_max", "by_hand", "by_hand_max", "pending"), 0.0)
        with Gradebook(info["db_url"]) as gradebook:
            self.gradebook = gradebook
            nb, resources = super().preprocess(nb, resources)
        totals = self.totals
        parts = [f"{points(totals['automatic'])} of {points(totals['automatic_max'])} automatic"]
        if totals["by_hand_max"]:
            parts.append(f"{points(totals['by_hand'])} of {points(totals['by_hand_max'])} by hand")
        if totals["pending"]:
            parts.append(f"{points(totals['pending'])} to grade")
        info["totals"] = {**totals, "summary": ", ".join(parts)}
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if not is_grade(cell):
            return cell, resources
        info, flags = resources["nbgrader"], cell.metadata.nbgrader
        grade = self.gradebook.find_grade(flags["grade_id"], info["notebook"], info["assignment"], info["student"])
        top = float(grade.max_score or 0)
        if grade.manual_score is None and grade.auto_score is None:
            flags["by_hand"] = "pending"
            self.totals["pending"] += top
        elif grade.manual_score is not None or is_solution(cell) or is_task(cell):
            flags["by_hand"] = "marked"  # a grader's score, or nbgrader's 0 for an answer left as released
            self.totals["by_hand"] += float(grade.score or 0)
            self.totals["by_hand_max"] += top
        else:
            flags.pop("by_hand", None)
            self.totals["automatic"] += float(grade.score or 0)
            self.totals["automatic_max"] += top
        return cell, resources


class AppealLinks(Preprocessor):
    """``cell.metadata['autograder_appeal']``: the link to each check's line on the student's checks page, where
    they ask for a review; none when ``url`` is unset. Only the assignment and the check's id go into it (both the
    course's, never the student's text), quoted."""

    url = Unicode("", help="the grading service's checks page (https://hub.example.edu/services/grading/)").tag(
        config=True
    )

    def preprocess(self, nb, resources):
        if not self.url.startswith(("https://", "http://")):
            return nb, resources
        assignment = str(resources.get("nbgrader", {}).get("assignment", ""))
        for cell in nb.cells:
            verdict = cell.get("metadata", {}).get(KEY)
            if isinstance(verdict, dict) and isinstance(verdict.get("check"), str):
                query = urllib.parse.urlencode({"assignment": assignment})
                anchor = urllib.parse.quote(f"{assignment}-{verdict['check']}", safe="")
                cell.metadata["autograder_appeal"] = f"{self.url.rstrip('/')}/?{query}#{anchor}"
        return nb, resources


class KernelEnds(Preprocessor):
    """``resources['nbgrader']['kernel_ends']``: [{kind, cell, text}] of each way the student's kernel ended early
    (autograder.verdicts.KernelEnd, stored in the notebook's metadata by SurvivingExecute), for the page's header;
    none for a notebook autograded before they were stored (its cells' error outputs still say it). And
    ``resources['nbgrader']['checks_ends']``: [{kind, checks, text}] of each way the hidden checks' calls were cut
    short (autograder.verdicts.ChecksEnd, stored with each verdict)."""

    enabled = Bool(True, help="on wherever it is listed").tag(config=True)

    def preprocess(self, nb, resources):
        try:
            ends = read_kernel_ends(nb) or []
        except ValueError:
            ends = []
        resources.setdefault("nbgrader", {})["kernel_ends"] = [
            {"kind": end.kind, "cell": end.cell, "text": end.short()} for end in ends
        ]
        try:
            graded = read_verdicts(nb)
        except (StaleVerdicts, ValueError, TypeError, KeyError):  # graded before verdicts (or their ends) were data
            graded = {}
        resources["nbgrader"]["checks_ends"] = [
            {"kind": end.kind, "checks": checks, "text": end.what()} for checks, end in checks_ends(graded)
        ]
        return nb, resources
