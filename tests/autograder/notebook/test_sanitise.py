"""autograder.notebook.sanitise.Sanitise alone, on in-memory notebooks: each kind of active content a student's
outputs or markdown can hold is removed, and plots and ordinary formatting are kept as they were."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import nbformat
import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.notebook.sanitise import Sanitise, svg_is_inert

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()  # the bytes do not matter: kept as they are
SAFE_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">'
    '<defs><path id="m" d="M0 0L5 5"/></defs><use xlink:href="#m"/><style>path{stroke:red}</style></svg>'
)


def display(data: dict, metadata: dict | None = None):
    return new_output("display_data", data=data, metadata=metadata or {})


def sanitised(*cells):
    notebook = new_notebook(cells=list(cells))
    notebook, _ = Sanitise()(notebook, {})  # as nbconvert and nbgrader call a step: on without configuration
    nbformat.validate(notebook)  # still a valid notebook, as nbgrader saves it
    return notebook


class ActiveParts(HTMLParser):
    """The parts of an HTML text that a browser would run or load as a page: active elements, event handlers,
    links and sources of a scheme other than http(s), mailto, a fragment or an embedded image."""

    ELEMENTS = {"script", "iframe", "object", "embed", "form", "frame", "base", "meta", "link", "svg", "math", "style"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []

    def handle_starttag(self, tag, attrs):
        if tag in self.ELEMENTS:
            self.found.append(tag)
        for name, value in attrs:
            target = (value or "").strip().lower()
            if name.startswith("on"):
                self.found.append(f"{tag} {name}")
            elif name in ("href", "src", "action", "formaction", "srcdoc", "xlink:href") and not target.startswith(
                ("http://", "https://", "mailto:")
            ):
                self.found.append(f"{tag} {name}={value}")


def active_parts(page: str) -> list:
    parser = ActiveParts()
    parser.feed(page)
    parser.close()
    return parser.found


def assert_inert(page: str):
    assert active_parts(page) == [], page


def rendered(notebook) -> str:
    """What a page makes of the notebook's markdown cells and HTML outputs: nbconvert's renderer, as Formgrader."""
    parts = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            parts.append(markdown2html_mistune(cell.source))
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            parts += [data.get("text/html", ""), markdown2html_mistune(data.get("text/markdown", ""))]
    return "\n".join(parts)


@pytest.mark.parametrize(
    "payload",
    [
        "<script>window.pwned = 1; document.title = 'pwned'</script><b>kept</b>",
        '<img src="x" onerror="window.pwned = 1"><b>kept</b>',
        '<img src="/logout"><a href="/api/contents">kept</a>',  # relative: the server the page came from
        '<a href="javascript:window.pwned=1">kept</a>',
        '<a href="JaVaScRiPt&colon;window.pwned=1">kept</a>',
        '<iframe src="http://127.0.0.1:8888/api/contents"></iframe><b>kept</b>',
        '<object data="x.swf"></object><embed src="x.swf"><b>kept</b>',
        '<form action="/api/contents" method="post"><input name="a"><button>go</button></form><b>kept</b>',
        '<svg onload="window.pwned=1"><b>kept</b></svg>',
        '<div style="x" onmouseover="window.pwned=1">kept</div>',
    ],
)
def test_html_outputs_lose_every_active_part_and_keep_their_text(payload):
    assert active_parts(payload), "the payload is active before"
    notebook = sanitised(new_code_cell("x", outputs=[display({"text/html": payload, "text/plain": "<obj>"})]))
    data = notebook.cells[0].outputs[0].data
    assert_inert(data["text/html"])
    assert "kept" in data["text/html"] or "go" in data["text/html"]
    assert data["text/plain"] == "<obj>"  # text is shown escaped: left as it is


def test_javascript_and_unknown_outputs_become_a_note():
    javascript = display({"application/javascript": "window.pwned = 1"})
    widget = display({"application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": "a widget"})
    notebook = sanitised(new_code_cell("x", outputs=[javascript, widget]))
    first, second = notebook.cells[0].outputs
    assert first.data == {"text/plain": "[removed when graded: application/javascript]"}
    assert second.data == {"text/plain": "a widget"}  # its own text stays, the rest goes
    assert notebook.cells[0].metadata["sanitised"] == [
        "application/javascript",
        "application/vnd.jupyter.widget-view+json",
    ]


def test_plots_and_ordinary_formatting_are_kept_as_they_were():
    table = (
        '<table class="dataframe"><thead><tr><th>a</th></tr></thead><tbody><tr><td><b>1</b></td></tr></tbody></table>'
    )
    link = '<a href="https://example.org/x" rel="noopener noreferrer">https link</a> <code>code</code>'
    outputs = [
        display({"image/png": PNG, "text/plain": "<Figure>"}, {"image/png": {"width": 300}}),
        display({"image/jpeg": PNG}),
        display({"image/svg+xml": SAFE_SVG}),
        display({"text/html": table + link}),
        new_output("stream", name="stdout", text="<script>shown as text, escaped by every page</script>"),
    ]
    markdown = "## A heading\n\n**bold**, `<script>` in code, i < j and $i<j$, [a link](https://example.org)"
    notebook = sanitised(new_code_cell("plot()", outputs=outputs), new_markdown_cell(markdown))
    kept = notebook.cells[0].outputs
    assert kept[0].data == {"image/png": PNG, "text/plain": "<Figure>"}
    assert kept[0].metadata == {"image/png": {"width": 300}}
    assert kept[1].data == {"image/jpeg": PNG} and kept[2].data == {"image/svg+xml": SAFE_SVG}
    assert kept[3].data["text/html"] == table + link
    assert kept[4].text == outputs[4].text
    assert notebook.cells[1].source == markdown  # no raw HTML: exactly as written
    assert "sanitised" not in notebook.cells[0].metadata and "sanitised" not in notebook.cells[1].metadata


@pytest.mark.parametrize(
    "svg",
    [
        '<svg xmlns="http://www.w3.org/2000/svg"><script>window.pwned=1</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" onload="window.pwned=1"/>',
        '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><iframe/></foreignObject></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<a xlink:href="javascript:window.pwned=1"><text>x</text></a></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><a><set attributeName="href" to="javascript:alert(1)"/></a></svg>',
        "<svg not xml",
    ],
)
def test_svg_with_anything_active_is_removed(svg):
    assert not svg_is_inert(svg)
    notebook = sanitised(new_code_cell("x", outputs=[display({"image/svg+xml": svg})]))
    assert notebook.cells[0].outputs[0].data == {"text/plain": "[removed when graded: image/svg+xml]"}


@pytest.mark.parametrize(
    "markdown",
    [
        "My answer.\n\n<script>window.pwned = 1; document.title = 'pwned'</script>\n\nkept",
        'My answer <img src=x onerror="window.pwned=1"> kept',
        'kept <iframe src="http://127.0.0.1/api/contents"></iframe>',
        '<a href="javascript:window.pwned=1">kept</a>',
        "[kept](javascript:window.pwned=1)",
        '<details open ontoggle="window.pwned=1"><summary>kept</summary></details>',
    ],
)
def test_markdown_cells_with_active_html_keep_only_their_inert_rendering(markdown):
    assert active_parts(markdown2html_mistune(markdown)), "the payload is active before"
    notebook = sanitised(new_markdown_cell(markdown))
    cell = notebook.cells[0]
    assert_inert(rendered(notebook))
    assert "kept" in markdown2html_mistune(cell.source)
    assert cell.source.startswith("<div><p><em>[removed when graded:")
    assert cell.metadata["sanitised"] == ["markdown: raw HTML or a harmful link"]


def test_markdown_outputs_are_cleaned_like_markdown_cells():
    output = display({"text/markdown": "**kept** <script>window.pwned=1</script>"})
    notebook = sanitised(new_code_cell("x", outputs=[output]))
    data = notebook.cells[0].outputs[0].data
    assert "text/markdown" not in data and "<strong>kept</strong>" in data["text/html"]
    assert_inert(rendered(notebook))


def test_a_whole_hostile_notebook_holds_nothing_active_afterwards():
    outputs = [
        display({"text/html": "<script>fetch('/api/contents/x', {method: 'PUT'})</script>"}),
        display({"application/javascript": "window.pwned = 1"}),
        display({"text/html": "<img src=x onerror=window.pwned=1>", "image/svg+xml": "<svg onload=1/>"}),
        new_output("execute_result", data={"text/html": "<iframe srcdoc='<script>1</script>'></iframe>"}),
    ]
    cells = [new_code_cell("x", outputs=outputs), new_markdown_cell("<script>window.pwned=1</script>[a](javascript:1)")]
    assert len(active_parts(rendered(new_notebook(cells=cells)))) >= 5, "active before"
    notebook = sanitised(*cells)
    assert_inert(rendered(notebook))
    assert_inert(markdown2html_mistune(notebook.cells[1].source))
    assert "[a](javascript:1)" in notebook.cells[1].source, "left as text inside the HTML block, not as a link"


# --- as Formgrader shows them: the autograded notebook through Formgrader's own exporter -------------------------

LINK = '<p>See <a href="https://example.com/docs">the docs</a>, <b>twice</b>.</p>'
TABLE = '<table class="dataframe"><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>'


def formgrader_page(notebook) -> str:
    """Formgrader's submission page of ``notebook``: nbconvert's HTMLExporter as nbgrader's FormgradeExtension makes
    it (the course's configuration, autograder.notebook.pipeline.chain_config, then its formgrade template), with
    the resources its SubmissionHandler gives."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    from autograder.notebook.pipeline import chain_config

    config = Config()
    config.merge(chain_config())
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    names = ("assignment_id", "notebook_id", "submission_id", "student", "last_name", "first_name", "notebook_path")
    resources = dict.fromkeys(names, "x") | {"index": 0, "total": 1, "base_url": "/"}
    page, _ = HTMLExporter(config=config).from_notebook_node(notebook, resources=resources)
    return page


def students_part(page: str) -> str:
    """The part of the page the student's cells make (between the two marker cells)."""
    return page.split("STUDENT-BEGINS", 1)[1].split("STUDENT-ENDS", 1)[0]


def test_formgrader_shows_a_students_cleaned_html_as_html_with_its_links():
    """Cleaned HTML outputs, a markdown output made HTML and a table reach Formgrader's page as elements: no literal
    tags around the links (nbconvert's own cleaning, bleach with a short allow-list, escaped <p>, <th>, ...)."""
    outputs = [
        display({"text/html": LINK}),
        display({"text/markdown": "Read [the docs](https://example.com/md) <b>now</b>"}),
    ]
    outputs.append(display({"text/html": TABLE}))
    notebook = sanitised(
        new_markdown_cell("STUDENT-BEGINS"),
        new_code_cell("x", outputs=outputs),
        new_markdown_cell("A cell with [a link](https://example.com/cell) and <i>some HTML</i>"),
        new_markdown_cell("STUDENT-ENDS"),
    )
    shown = students_part(formgrader_page(notebook))
    assert "&lt;" not in shown and "&gt;" not in shown, shown  # no tag shown as text
    assert re.search(r'<p>See <a href="https://example.com/docs"[^>]*>the docs</a>, <b>twice</b>\.</p>', shown)
    assert re.search(r'Read <a href="https://example.com/md"[^>]*>the docs</a> <b>now</b>', shown)
    assert re.search(r'<a href="https://example.com/cell"[^>]*>a link</a> and <i>some HTML</i>', shown)
    assert re.search(r"<thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody>", shown)
    assert_inert(shown)


def test_formgrader_cleans_a_notebook_autograded_before_sanitise_existed():
    """The page's own cleaning, a second line behind Sanitise: a hostile output never sanitised is shown without
    anything active, and without the student's script as text."""
    hostile = (
        '<p onclick="steal()">x <a href="javascript:steal()">y</a> <a href="https://example.com/ok">ok</a></p>'
        "<script>steal()</script><img src=x onerror=steal()><iframe src=/api/contents></iframe>"
    )
    notebook = new_notebook(
        cells=[
            new_markdown_cell("STUDENT-BEGINS"),
            new_code_cell("x", outputs=[display({"text/html": hostile})]),
            new_markdown_cell("STUDENT-ENDS"),
        ]
    )
    shown = students_part(formgrader_page(notebook))
    assert_inert(shown)
    assert "steal(" not in shown and "&lt;" not in shown
    assert re.search(r'<a href="https://example.com/ok"[^>]*>ok</a>', shown)


def test_the_feedback_page_cleans_with_the_same_filter_as_formgrader():
    from autograder.notebook.feedback import FeedbackPage
    from autograder.notebook.pipeline import chain_config
    from autograder.notebook.sanitise import clean_html

    page = FeedbackPage(config=chain_config())  # GenerateFeedback's exporter, with the course's configuration
    assert page.sanitize_html is True and page.environment.filters["clean_html"] is clean_html
    assert page.environment.filters["clean_html"](LINK.encode()) == clean_html(LINK)  # bytes too (an SVG's)
