"""The feedback pages of the class graded once for the suite (``graded_class``): the verdicts whole, without the
points as a stray output; written answers nobody has marked "to be graded by hand"; and after hand grading,
the course's feedback_only (`--feedback-only`) makes again the page of exactly the student whose hand grades
changed (autograder.notebook.feedback, reached through autograder.course.run.feedback_only)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import CHROMIUM, playwright_or_skip
from nbgrader.api import Gradebook

from autograder.course.run import CourseOptions, feedback_only
from autograder.grading.ledger import ledger
from autograder.grading.refresh import FIELD
from autograder.notebook.feedback import PAGE_CSS

ASSIGNMENT = NOTEBOOK = "attention"
STUDENT = "full_solution"  # every check passed, the four written answers waiting for a grader


def page_of(course: Path, student: str) -> str:
    return (course / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()


def check_cells(course: Path, student: str) -> list[dict]:
    notebook = json.loads((course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text())
    return [
        cell
        for cell in notebook["cells"]
        if cell["cell_type"] == "code"
        and cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "").startswith("check_")
    ]


def test_check_cells_keep_the_verdict_and_lose_the_points_output(graded_class):
    cells = check_cells(graded_class.course, STUDENT)
    assert len(cells) == 16
    for cell in cells:
        assert [output["output_type"] for output in cell["outputs"]] == ["stream"], cell["metadata"]
    page = page_of(graded_class.course, STUDENT)
    rest = page.split("check_masked_attention (attention): 4 / 4 points", 1)[1]
    cell = rest.split('<div class="cell', 1)[0]  # up to the next cell
    assert "Out[" not in cell and "output_execute_result" not in cell, "an output after the verdict"
    assert PAGE_CSS in page and '<span class="line" style="padding-left: 7ch">PASS' in page
    # the check cells are as released (their hidden tests were removed by generate_assignment): nothing to restore
    assert "had been changed in your notebook" not in page


def test_written_answers_not_marked_say_so_and_the_totals_count_them_apart(graded_class):
    page = page_of(graded_class.course, STUDENT)
    assert "<h4>attention (29 of 29 automatic, 4 to grade)</h4>" in page
    assert page.count("Written response</a> (to be graded by hand, 1 point)") == 4
    assert "Score: 0 / 1" not in page and "33.0" not in page
    blank = page_of(graded_class.course, "blank_release")  # answers left as released: nbgrader's 0, no response
    assert "<h4>attention (Score: 0 / 33; 0 of 29 automatic, 0 of 4 by hand)</h4>" in blank


def test_verdict_lines_wrap_inside_their_box_in_a_browser(graded_class):
    playwright = playwright_or_skip()
    path = graded_class.course / "feedback" / "mask_after_softmax" / ASSIGNMENT / f"{NOTEBOOK}.html"
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1024, "height": 800})
            page.route(re.compile(r"^https?://"), lambda route: route.abort())  # MathJax from a CDN: not needed
            page.goto(path.as_uri(), wait_until="domcontentloaded")
            boxes = page.evaluate(
                "Array.from(document.querySelectorAll('div.output_stdout.verdict pre'))"
                ".map(pre => [pre.scrollWidth, pre.clientWidth, pre.innerText])"
            )
        finally:
            browser.close()
    verdicts = boxes  # the boxes the template marked from the stored verdicts
    assert len(verdicts) == 16 and all("points\n" in text for _, _, text in verdicts)
    assert all(scroll <= client for scroll, client, _ in verdicts), [box[:2] for box in verdicts]
    assert any("set masked scores to -inf BEFORE softmax" in text for _, _, text in verdicts)


def test_feedback_made_again_for_exactly_the_students_whose_hand_grades_changed(graded_course_copy):
    course = graded_course_copy
    pages = sorted((course / "feedback").glob(f"*/{ASSIGNMENT}/{NOTEBOOK}.html"))
    before = {path: path.read_bytes() for path in pages}
    assert len(before) >= 3
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade("answer_read_a_head", NOTEBOOK, ASSIGNMENT, STUDENT)
        grade.manual_score = 1.0
        grade.needs_manual_grade = False
        comment = gradebook.find_comment("answer_read_a_head", NOTEBOOK, ASSIGNMENT, STUDENT)
        comment.manual_comment = "A careful reading: this head looks at the previous token."
        gradebook.db.commit()

    assert feedback_only(CourseOptions(course=course)) == [STUDENT]
    changed = [path for path in pages if path.read_bytes() != before[path]]
    assert changed == [course / "feedback" / STUDENT / ASSIGNMENT / f"{NOTEBOOK}.html"]
    page = page_of(course, STUDENT)
    assert "<h4>attention (29 of 29 automatic, 1 of 1 by hand, 3 to grade)</h4>" in page
    assert page.count("(to be graded by hand, 1 point)") == 3 and "Written response</a> (Score: 1 / 1)" in page
    assert "A careful reading: this head looks at the previous token." in page
    assert FIELD in ledger(course, ASSIGNMENT, STUDENT) and FIELD not in ledger(course, ASSIGNMENT, "blank_release")

    assert feedback_only(CourseOptions(course=course)) == []  # nothing changed since
    assert page_of(course, STUDENT) == page


def test_a_verdict_box_is_marked_from_the_stored_verdict_not_its_words():
    """The course's template, on an in-memory notebook: the check cell's stdout box carries the stored verdict's
    check, points and limit (escaped), a plain stdout box nothing; the verdict's lines are shown as written."""
    from nbconvert import HTMLExporter
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from autograder.notebook.feedback import NBGRADER_TEMPLATES, TEMPLATE, TEMPLATE_PATHS, TEMPLATES
    from autograder.verdicts import KEY, Property, Verdict

    verdict = Verdict(
        "check_softmax", "softmax", 1.0, 2.0, (Property("shape", True), Property("values", False, "<b>off</b>")),
        seed=3, limit='call"><script>',
    )  # fmt: skip
    flags = {"grade": True, "grade_id": "check_softmax", "points": 2, "score": 1, "solution": False, "locked": True}
    check = new_code_cell("pass", metadata={"nbgrader": flags, KEY: verdict.to_dict()})
    check.outputs = [new_output("stream", name="stdout", text=verdict.text() + "\n")]
    plain = new_code_cell("print('1 / 2 points')")
    plain.outputs = [new_output("stream", name="stdout", text="1 / 2 points\n")]
    exporter = HTMLExporter(
        template_name=TEMPLATE,
        extra_template_basedirs=[str(TEMPLATES), str(NBGRADER_TEMPLATES)],
        extra_template_paths=TEMPLATE_PATHS,
    )
    totals = {"pending": 0, "summary": "1 of 2 automatic"}
    resources = {"nbgrader": {"notebook": "n", "score": 1, "max_score": 2, "late_penalty": 0, "totals": totals}}
    page, _ = exporter.from_notebook_node(new_notebook(cells=[check, plain]), resources=resources)
    boxes = re.findall(r'<div class="output_subarea output_stream output_stdout output_text( verdict)?"([^>]*)>', page)
    assert [marked for marked, _ in boxes] == [" verdict", ""]
    attributes = boxes[0][1]
    assert 'data-check="check_softmax"' in attributes and 'data-points="1"' in attributes
    assert 'data-max-points="2"' in attributes and "&lt;script&gt;" in attributes and "<script>" not in attributes
    assert "FAIL" in page and "&lt;b&gt;off&lt;/b&gt;" in page
    contents = re.search(r'<div id="toc">(.*?)</div>', page, re.S).group(1)
    assert re.findall(r'<li><a href="#([^"]+)">([^<]+)</a> \(([^)]*)\)', contents) == [
        ("check_softmax", "softmax", "Score: 1 / 2")
    ], "the contents name the function a check grades, and its score"
    second = Verdict("check_masked_attention", "attention", 4.0, 4.0, (Property("rows sum to 1", True),), seed=3)
    flags = {**flags, "grade_id": "check_masked_attention", "points": 4, "score": 4}
    masked = new_code_cell("pass", metadata={"nbgrader": flags, KEY: second.to_dict()})
    page, _ = exporter.from_notebook_node(new_notebook(cells=[check, masked]), resources=resources)
    contents = re.search(r'<div id="toc">(.*?)</div>', page, re.S).group(1)
    assert re.findall(r'<a href="#[^"]+">([^<]+)</a>', contents) == ["softmax", "attention (masked attention)"]


def images_of(page: str) -> list[dict]:
    """The attributes of every <img> on ``page``, read by Python's HTML parser."""
    from html.parser import HTMLParser

    found = []

    class Images(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "img":
                found.append(dict(attrs))

    Images().feed(page)
    return found


def test_image_descriptions_give_a_text_to_each_image_without_one():
    """ImageDescriptions alone, on an in-memory notebook: a PNG, a JPEG and an SVG without a text get one, a
    text already given is kept, other outputs and a markdown cell are left as they were."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    from autograder.notebook.feedback import NO_DESCRIPTION, ImageDescriptions

    plot = new_code_cell("plot()")
    plot.outputs = [
        new_output("display_data", data={"image/png": "iVBO", "text/plain": "<Figure>"}),
        new_output("display_data", data={"image/jpeg": "/9j/"}, metadata={"image/jpeg": {"alt": "the heads"}}),
        new_output("display_data", data={"image/svg+xml": "<svg></svg>"}),
        new_output("stream", name="stdout", text="done\n"),
    ]
    notebook = new_notebook(cells=[new_markdown_cell("![a map](map.png)"), plot])
    notebook, _ = ImageDescriptions()(notebook, {})  # as an exporter calls it: a step off by default does nothing
    png, jpeg, svg, stream = notebook.cells[1].outputs
    assert png.metadata == {"image/png": {"alt": NO_DESCRIPTION}}
    assert jpeg.metadata == {"image/jpeg": {"alt": "the heads"}}
    assert svg.metadata == {"image/svg+xml": {"alt": NO_DESCRIPTION}}
    assert "metadata" not in stream and "outputs" not in notebook.cells[0]


def test_every_image_on_a_feedback_page_has_a_text(graded_class):
    """The pages are made by FeedbackPage (no second pass over the page): each image still has a text, and the
    plots are on the page."""
    from autograder.notebook.feedback import NO_DESCRIPTION

    images = images_of(page_of(graded_class.course, STUDENT))
    plots = [image for image in images if image.get("src", "").startswith("data:image/png;base64,")]
    assert len(plots) >= 2, "the notebook's plots are missing from the page"
    assert [image for image in images if not image.get("alt")] == []
    assert {plot["alt"] for plot in plots} == {NO_DESCRIPTION}


def test_the_feedback_page_renders_images_as_html_exporter_does_with_their_texts():
    """FeedbackPage and nbconvert's HTMLExporter, on the same in-memory notebook with the course's template: the
    same images, in the same order, each with its text (an SVG too, which the classic template leaves without)."""
    from nbconvert import HTMLExporter
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from autograder.notebook.feedback import (
        NBGRADER_TEMPLATES,
        NO_DESCRIPTION,
        TEMPLATE,
        TEMPLATE_PATHS,
        TEMPLATES,
        FeedbackPage,
        ImageDescriptions,
    )

    plot = new_code_cell("plot()")
    plot.outputs = [
        new_output("display_data", data={"image/png": "iVBORw0KGgo="}),
        new_output("display_data", data={"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg'></svg>"}),
    ]
    notebook, _ = ImageDescriptions()(new_notebook(cells=[plot]), {})
    totals = {"pending": 0, "summary": "0 of 0 automatic"}
    resources = {"nbgrader": {"notebook": "n", "score": 0, "max_score": 0, "late_penalty": 0, "totals": totals}}
    pages = {}
    for kind in (HTMLExporter, FeedbackPage):
        exporter = kind(
            template_name=TEMPLATE,
            extra_template_basedirs=[str(TEMPLATES), str(NBGRADER_TEMPLATES)],
            extra_template_paths=TEMPLATE_PATHS,
        )
        pages[kind] = images_of(exporter.from_notebook_node(notebook, resources=dict(resources))[0])
    assert [image["src"][:24] for image in pages[FeedbackPage]] == [image["src"][:24] for image in pages[HTMLExporter]]
    assert [image["alt"] for image in pages[FeedbackPage]] == [NO_DESCRIPTION, NO_DESCRIPTION]


def test_a_page_made_with_remembered_templates_and_highlighting_is_the_page_made_without():
    """FeedbackPage keeps compiled templates (CompiledTemplates) and highlighted code (RememberedHighlight) for the
    process: a page made with both warm is byte for byte the page made with both empty, and a remembered
    highlight is nbconvert's own."""
    from nbconvert.filters.highlight import Highlight2HTML
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from autograder.notebook.feedback import (
        COMPILED,
        NBGRADER_TEMPLATES,
        TEMPLATE,
        TEMPLATE_PATHS,
        TEMPLATES,
        FeedbackPage,
        RememberedHighlight,
        highlighted,
    )

    source = "def softmax(scores):\n    return np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)  # (T, T)\n"
    notebook = new_notebook(cells=[new_markdown_cell("## Softmax"), new_code_cell(source), new_code_cell("%%time\n1")])
    totals = {"pending": 0, "summary": "0 of 0 automatic"}
    resources = {"nbgrader": {"notebook": "n", "score": 0, "max_score": 0, "late_penalty": 0, "totals": totals}}

    def page() -> str:
        exporter = FeedbackPage(
            template_name=TEMPLATE,
            extra_template_basedirs=[str(TEMPLATES), str(NBGRADER_TEMPLATES)],
            extra_template_paths=TEMPLATE_PATHS,
        )
        return exporter.from_notebook_node(notebook, resources=dict(resources))[0]

    COMPILED.compiled.clear()
    highlighted.cache_clear()
    cold = page()
    assert COMPILED.compiled and highlighted.cache_info().currsize == 2
    warm = page()
    assert highlighted.cache_info().hits == 2
    assert warm == cold
    assert RememberedHighlight(pygments_lexer="ipython3")(source) == Highlight2HTML(pygments_lexer="ipython3")(source)
    numbered = {"linenos": "inline", "hl_lines": [1]}  # a list cannot be a key: highlighted without the memory
    assert RememberedHighlight(pygments_lexer="ipython3", extra_formatter_options=numbered)(source) == Highlight2HTML(
        pygments_lexer="ipython3", extra_formatter_options=numbered
    )(source)


def test_image_metadata_a_page_cannot_read_is_replaced_by_the_text_and_the_page_is_made():
    """A student's display(..., metadata={'image/png': 'x'}, raw=True): nbconvert's template fails on an image's
    metadata that is not a mapping (the page, then the grade, was lost: graded as blank); ImageDescriptions gives
    those images the text alone, keeps the rest of the metadata, and FeedbackPage makes the page."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from autograder.notebook.feedback import (
        NBGRADER_TEMPLATES,
        NO_DESCRIPTION,
        TEMPLATE,
        TEMPLATE_PATHS,
        TEMPLATES,
        FeedbackPage,
        ImageDescriptions,
    )

    cell = new_code_cell("display(...)")
    cell.outputs = [
        new_output("display_data", data={"image/png": "iVBORw0KGgo="}, metadata={"image/png": "<b>x</b>"}),
        new_output("display_data", data={"image/svg+xml": "<svg></svg>"}, metadata={"image/svg+xml": 7}),
        new_output("display_data", data={"image/jpeg": "/9j/"}, metadata={"image/jpeg": ["a list"], "isolated": True}),
    ]
    notebook, _ = ImageDescriptions()(new_notebook(cells=[cell]), {})
    png, svg, jpeg = notebook.cells[0].outputs
    assert png.metadata == {"image/png": {"alt": NO_DESCRIPTION}} and svg.metadata == {
        "image/svg+xml": {"alt": NO_DESCRIPTION}
    }
    assert jpeg.metadata == {"image/jpeg": {"alt": NO_DESCRIPTION}, "isolated": True}
    exporter = FeedbackPage(
        template_name=TEMPLATE,
        extra_template_basedirs=[str(TEMPLATES), str(NBGRADER_TEMPLATES)],
        extra_template_paths=TEMPLATE_PATHS,
    )
    totals = {"pending": 0, "summary": "0 of 0 automatic"}
    resources = {"nbgrader": {"notebook": "n", "score": 0, "max_score": 0, "late_penalty": 0, "totals": totals}}
    page, _ = exporter.from_notebook_node(notebook, resources=resources)
    assert [image["alt"] for image in images_of(page)] == [NO_DESCRIPTION] * 3 and "<b>x</b>" not in page


def test_an_outsized_cell_is_highlighted_without_being_remembered():
    """A code cell over REMEMBERED_UP_TO characters (a student's pasted data) is highlighted as nbconvert does and
    not kept in the worker's memory for the rest of the class."""
    from nbconvert.filters.highlight import Highlight2HTML

    from autograder.notebook.feedback import REMEMBERED_UP_TO, RememberedHighlight, highlighted

    source = "data = [" + "1.0, " * (REMEMBERED_UP_TO // 5) + "]\n"
    before = highlighted.cache_info().currsize
    assert RememberedHighlight(pygments_lexer="ipython3")(source) == Highlight2HTML(pygments_lexer="ipython3")(source)
    assert highlighted.cache_info().currsize == before


def ends_page(notebook, *, score: float, max_score: float) -> str:
    """The feedback page of an in-memory notebook: KernelEnds, then the course's template (as feedback makes it)."""
    from nbconvert import HTMLExporter

    from autograder.notebook.feedback import NBGRADER_TEMPLATES, TEMPLATE, TEMPLATE_PATHS, TEMPLATES, KernelEnds

    exporter = HTMLExporter(
        template_name=TEMPLATE,
        extra_template_basedirs=[str(TEMPLATES), str(NBGRADER_TEMPLATES)],
        extra_template_paths=TEMPLATE_PATHS,
    )
    totals = {"pending": 0, "summary": f"{score:g} of {max_score:g} automatic"}
    flags = {"notebook": "n", "score": score, "max_score": max_score, "late_penalty": 0, "totals": totals}
    notebook, resources = KernelEnds().preprocess(notebook, {"nbgrader": flags})
    return exporter.from_notebook_node(notebook, resources=resources)[0]


def test_the_kernels_end_is_listed_under_the_header_from_the_stored_data():
    """KernelEnds then the course's template, on an in-memory notebook: the notebook's budget and a cell's limit,
    stored in its metadata as SurvivingExecute stores them, are listed under the page's header with their kind and
    cell; words in an error output that look like them list nothing."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from autograder.verdicts import BUDGET, CELL_TIME, KERNEL, KernelEnd

    def page(notebook) -> str:
        return ends_page(notebook, score=2, max_score=2)

    forged = new_code_cell("raise SystemExit")
    forged.outputs = [new_output("error", ename="NotebookTimeoutError", evalue="stopped after 1 s", traceback=[])]
    assert 'class="kernel-end"' not in page(new_notebook(cells=[forged]))
    ends = [KernelEnd(CELL_TIME, 2, limit=60), KernelEnd(BUDGET, 5, limit=45)]
    notebook = new_notebook(cells=[new_code_cell("x = 1")])
    notebook.metadata[KERNEL] = [end.to_dict() for end in ends]
    assert kernel_ends(page(notebook)) == [
        ("cell time", "2", "cell 2: timed out after 60 s, the cell's limit, and was interrupted"),
        ("notebook budget", "5", "cell 5: stopped after 45 s, the notebook's budget; later cells not run"),
    ]


def test_how_the_hidden_checks_were_cut_short_is_listed_under_the_header_from_the_stored_verdicts():
    """KernelEnds reads the verdicts stored in the check cells: a function stopped for waiting and the hidden checks'
    CPU budget spent are listed with the checks they cost; a verdict without an end lists nothing."""
    from nbformat.v4 import new_code_cell, new_notebook

    from autograder.notebook.feedback import KernelEnds
    from autograder.verdicts import KEY, ChecksEnd, Property, Verdict

    def check(grade_id: str, function: str, end: ChecksEnd | None):
        verdict = Verdict(grade_id, function, 0.0, 2.0, (Property("values", False, "stopped"),), end=end)
        cell = new_code_cell("# visible checks", metadata={KEY: verdict.to_dict()})
        flags = {"grade": True, "solution": False, "grade_id": grade_id, "points": 2, "score": 0.0}
        cell.metadata["nbgrader"] = flags  # as nbgrader's GetGrades leaves it
        return cell

    idle, spent = ChecksEnd("idle", "attention", limit=2.0), ChecksEnd("notebook", limit=120.0)
    notebook = new_notebook(
        cells=[
            check("check_attention", "attention", idle),
            check("check_masked_attention", "attention", idle),
            check("check_softmax", "softmax", None),
            check("check_heads", "heads", spent),
        ]
    )
    _, resources = KernelEnds().preprocess(notebook, {})
    assert resources["nbgrader"]["checks_ends"] == [
        {
            "kind": "idle",
            "checks": ["check_attention", "check_masked_attention"],
            "text": "stopped: attention waited 2 s without computing (sleep, input or a lock?)",
        },
        {
            "kind": "notebook",
            "checks": ["check_heads"],
            "text": "stopped: the hidden checks used up their 120 s of CPU time",
        },
    ]
    page = ends_page(notebook, score=0, max_score=8)
    assert (
        '<li class="checks-end" data-kind="idle">stopped: attention waited 2 s without computing (sleep, input or a '
        "lock?) (costing check_attention, check_masked_attention)</li>"
    ) in page


def kernel_ends(page: str) -> list[tuple[str, str, str]]:
    """(kind, cell, text) of each <li class="kernel-end"> on ``page``, read by Python's HTML parser."""
    from html.parser import HTMLParser

    found = []

    class Ends(HTMLParser):
        inside = None

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "li" and attrs.get("class") == "kernel-end":
                self.inside = [attrs["data-kind"], attrs["data-cell"], ""]

        def handle_data(self, data):
            if self.inside is not None:
                self.inside[2] += data

        def handle_endtag(self, tag):
            if tag == "li" and self.inside is not None:
                found.append(tuple(self.inside))
                self.inside = None

    Ends().feed(page)
    return found


def test_each_verdict_links_to_its_line_on_the_checks_page_where_a_review_is_asked():
    """issue 37: AppealLinks (c.AppealLinks.url set) gives each check cell's verdict a link to that check's line on
    the student's checks page; the link holds the course's assignment and check ids only, quoted; unset, nothing."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from autograder.notebook.feedback import AppealLinks
    from autograder.verdicts import KEY, Property, Verdict

    verdict = Verdict("check_softmax", "softmax", 1.0, 2.0, (Property("values", False, "off"),), seed=3)
    flags = {"grade": True, "grade_id": "check_softmax", "points": 2, "score": 1, "solution": False, "locked": True}

    def notebook():
        check = new_code_cell("pass", metadata={"nbgrader": flags, KEY: verdict.to_dict()})
        check.outputs = [new_output("stream", name="stdout", text=verdict.text() + "\n")]
        plain = new_code_cell("print(1)")
        plain.outputs = [new_output("stream", name="stdout", text="1\n")]
        return new_notebook(cells=[check, plain])

    resources = {"nbgrader": {"assignment": "week 1&2"}}
    linked, _ = AppealLinks(url="https://hub.example.edu/services/grading/").preprocess(notebook(), resources)
    link = "https://hub.example.edu/services/grading/?assignment=week+1%262#week%201%262-check_softmax"
    assert linked.cells[0].metadata["autograder_appeal"] == link
    assert "autograder_appeal" not in linked.cells[1].metadata
    page = ends_page(linked, score=1, max_score=2)
    assert page.count('class="appeal"') == 1
    assert 'href="https://hub.example.edu/services/grading/?assignment=week+1%262#week%201%262-check_softmax"' in page
    for unset in ("", "javascript:alert(1)"):
        plain, _ = AppealLinks(url=unset).preprocess(notebook(), resources)
        assert "autograder_appeal" not in plain.cells[0].metadata
