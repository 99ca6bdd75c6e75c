"""An attacker's notebook, graded by the course's grade_course, then opened as the instructor opens it: in
Formgrader (the submission's manual-grading page, the lists of submissions and students) and as the feedback
page. The notebook plants every kind of active content (a <script> output, an <img onerror>, a Javascript display
output, raw <script>, <iframe> and javascript: links in a markdown cell, and a script that writes a file through
the server's contents API with the instructor's cookies); a second upload's folder is named as an HTML payload.
Nothing may run (window.pwned stays undefined, the title stays, no file is written) and the plots still show.

Costs one small class (one notebook, graded as blank) and one Formgrader; needs chromium, Playwright and nbgrader.
"""

from __future__ import annotations

import json
import os
import re

import nbformat
import pytest
from conftest import CHROMIUM, http_get, playwright_or_skip, start_formgrader, stop_session
from hostile import ATTACKER, PLANTED
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from autograder.hub.launch import free_port

ASSIGNMENT = NOTEBOOK = "attention"


@pytest.fixture(scope="module")
def attacked(graded_class):
    """The class the suite grades once (tests/conftest.py's graded_class), which holds the attacker's notebook
    (tests/hostile.py, "mallory") when bubblewrap is there: a hostile notebook never runs unsandboxed."""
    if ATTACKER not in graded_class.cases:
        pytest.skip("no bubblewrap: a hostile notebook is never run unsandboxed (apt-get install bubblewrap)")
    return graded_class.course, graded_class.run


def test_the_autograded_notebook_holds_nothing_active(attacked):
    course, _ = attacked
    notebook = nbformat.read(course / "autograded" / ATTACKER / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    shown = [json.dumps(cell.get("outputs", [])) for cell in notebook.cells]  # code shows as code: not checked
    shown += [markdown2html_mistune(cell.source) for cell in notebook.cells if cell.cell_type == "markdown"]
    text = "\n".join(shown)
    assert "<script" not in text and "onerror" not in text and "application/javascript" not in text
    by_id = {cell.get("id"): cell for cell in notebook.cells}
    assert by_id["attacker-0"].metadata["sanitised"] == ["application/javascript"]
    assert any("image/png" in output.get("data", {}) for output in by_id["attacker-1"].outputs), "the plot is gone"


def open_and_probe(page, url: str) -> dict:
    """Open ``url``, let any planted script run its course, then read what it could have changed."""
    page.goto(url, wait_until="load")
    page.wait_for_timeout(1500)
    return page.evaluate(
        """() => ({
            pwned: typeof window.pwned === 'undefined' ? null : String(window.pwned),
            title: document.title,
            javascriptLinks: Array.from(document.querySelectorAll('a[href^="javascript" i]')).length,
            frames: document.querySelectorAll('iframe, object, embed').length,
            plots: Array.from(document.querySelectorAll('img[src^="data:image/png"]'))
                .filter(image => image.complete && image.naturalWidth > 100).length,
            svg: Array.from(document.querySelectorAll('img[src^="data:image/svg+xml"]'))
                .filter(image => image.complete && image.naturalWidth > 0).length,
            bold: document.body.innerText.includes('bold output'),
        })"""
    )


def test_nothing_runs_where_the_instructor_opens_the_submission(attacked):
    playwright = playwright_or_skip()
    course, _ = attacked
    port, token = free_port(), "test-token-" + os.urandom(8).hex()
    base = f"http://127.0.0.1:{port}"
    server = start_formgrader(course, port=port, token=token, args=("--server",))
    seen = {}
    try:
        status, body = http_get(f"{base}/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NOTEBOOK}?token={token}")
        submission = {row["student"]: row["id"] for row in json.loads(body)}[ATTACKER]
        feedback = course / "feedback" / ATTACKER / ASSIGNMENT / f"{NOTEBOOK}.html"
        with playwright.sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            try:
                page = browser.new_page()
                page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())  # no CDN
                page.goto(f"{base}/?token={token}")  # logged in: the cookies a planted script would use
                for name, url in {
                    "submission": f"{base}/formgrader/submissions/{submission}/",
                    "submissions list": f"{base}/formgrader/gradebook/{ASSIGNMENT}/{NOTEBOOK}",
                    "students": f"{base}/formgrader/manage_students",
                    "feedback": feedback.as_uri(),
                }.items():
                    seen[name] = open_and_probe(page, url)
            finally:
                browser.close()
        written = http_get(f"{base}/api/contents/{PLANTED}?token={token}")[0]
    finally:
        stop_session(server)
    print(json.dumps(seen, indent=1))
    for name, probe in seen.items():
        assert probe["pwned"] is None, f"{name}: a planted script ran ({probe['pwned']})"
        assert probe["title"] != "pwned", name
        assert probe["javascriptLinks"] == 0 and probe["frames"] == 0, (name, probe)
    for name in ("submission", "feedback"):
        assert seen[name]["plots"] >= 1 and seen[name]["svg"] >= 1, (name, seen[name])
        assert seen[name]["bold"], name
    assert written == 404 and not (course / PLANTED).exists(), "a file was written through the contents API"
