"""An attacker's notebook, graded by `python -m autograder.classroom`, then opened as the instructor opens it: in
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
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest
from conftest import BUNDLED, CHROMIUM, playwright_or_skip, run_classroom
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder import REPOSITORY
from autograder.hub import free_port

ASSIGNMENT = NOTEBOOK = "attention"
ATTACKER = "mallory"
HOSTILE_ID = "<img src=x onerror=window.pwned='id'>"
PLANTED = "pwned.txt"  # what the contents API payload tries to write at the server's root (the course folder)
TITLE_PAYLOAD = "document.title = 'pwned'"

WRITE_THROUGH_API = (
    """
fetch('/api/contents/%s', {method: 'PUT', credentials: 'include',
  headers: {'Content-Type': 'application/json',
            'X-XSRFToken': (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || ''},
  body: JSON.stringify({type: 'file', format: 'text', content: 'written by a student'})})
"""
    % PLANTED
)

PAYLOADS = [  # (what is displayed, its argument)
    ("HTML", f"<script>window.pwned = 'script'; {TITLE_PAYLOAD}</script><b>bold output</b>"),
    ("HTML", f"<img src=x onerror=\"window.pwned = 'onerror'; {TITLE_PAYLOAD}\">"),
    ("Javascript", f"window.pwned = 'javascript'; {TITLE_PAYLOAD}"),
    ("HTML", f"<script>{WRITE_THROUGH_API}</script>"),
    ("SVG", '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><circle cx="20" cy="20" r="15"/></svg>'),
]
PAYLOAD_CELL = "from IPython.display import HTML, SVG, Javascript, display\n" + "".join(
    f"display({kind}({argument!r}))\n" for kind, argument in PAYLOADS
)
PLOT_CELL = """
import matplotlib.pyplot as plt
plt.plot([0, 1, 2], [2, 0, 1])
plt.title("a plot that must still show")
plt.show()
"""
PAYLOAD_MARKDOWN = f"""My answer, with **bold** kept.

<script>window.pwned = 'markdown'; {TITLE_PAYLOAD}</script>

<iframe src="javascript:parent.pwned = 'iframe'"></iframe>

<a id="jslink" href="javascript:window.pwned = 'link'">a link</a> and <img src=x onerror="window.pwned = 'md-img'">
"""


def hostile_notebook() -> bytes:
    notebook = nbformat.read(BUNDLED / "blank_release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", as_version=4)
    cells = [new_code_cell(PAYLOAD_CELL), new_code_cell(PLOT_CELL), new_markdown_cell(PAYLOAD_MARKDOWN)]
    for number, cell in enumerate(cells):
        cell.id = f"attacker-{number}"
    notebook.cells[1:1] = cells  # near the top: the pages show them first
    return nbformat.writes(notebook).encode()


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    if not (Path(sys.executable).parent / "nbgrader").exists():
        pytest.skip("nbgrader is not installed next to this Python")
    from autograder import sandbox

    if sandbox.bubblewrap() is None:
        pytest.skip("no bubblewrap: a hostile notebook is never run unsandboxed (apt-get install bubblewrap)")
    root = tmp_path_factory.mktemp("attacked")
    course, submissions = root / "course", root / "submissions"
    (submissions / ATTACKER / ASSIGNMENT).mkdir(parents=True)
    (submissions / ATTACKER / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_bytes(hostile_notebook())
    (submissions / HOSTILE_ID / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(submissions / ATTACKER / ASSIGNMENT / f"{NOTEBOOK}.ipynb", submissions / HOSTILE_ID / ASSIGNMENT)
    done = run_classroom(course, submissions, "--cell-timeout", "30", timeout=900)
    assert (course / "autograded" / ATTACKER).is_dir(), f"{done.stdout[-4000:]}\n{done.stderr[-3000:]}"
    return course, done.stdout + done.stderr


def test_an_upload_named_as_html_is_refused_with_what_to_rename_and_the_rest_is_graded(attacked):
    course, said = attacked
    assert "is not a student id" in said and "rename the folder, e.g. to 'imgsrcxonerrorwindow.pwnedid'" in said
    assert sorted(path.name for path in (course / "submitted").iterdir()) == [ATTACKER]


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


def start_formgrader(course: Path, port: int, token: str) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, "-m", "autograder.formgrader", "--course", str(course), "--port", str(port)]
        + ["--token", token, "--no-browser", "--server"],
        cwd=REPOSITORY,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    started = time.monotonic()
    while True:
        assert server.poll() is None, server.stdout.read().decode()[-4000:]
        try:
            if get(f"http://127.0.0.1:{port}/formgrader/api/assignments?token={token}")[0] == 200:
                return server
        except OSError:
            pass
        assert time.monotonic() - started < 90, "Formgrader did not answer within 90 s"
        time.sleep(0.5)


def stop(server: subprocess.Popen):
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    server.stdout.close()


def test_nothing_runs_where_the_instructor_opens_the_submission(attacked):
    playwright = playwright_or_skip()
    course, _ = attacked
    port, token = free_port(), "test-token-" + os.urandom(8).hex()
    base = f"http://127.0.0.1:{port}"
    server = start_formgrader(course, port, token)
    seen = {}
    try:
        status, body = get(f"{base}/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NOTEBOOK}?token={token}")
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
        written = get(f"{base}/api/contents/{PLANTED}?token={token}")[0]
    finally:
        stop(server)
    print(json.dumps(seen, indent=1))
    for name, probe in seen.items():
        assert probe["pwned"] is None, f"{name}: a planted script ran ({probe['pwned']})"
        assert probe["title"] != "pwned", name
        assert probe["javascriptLinks"] == 0 and probe["frames"] == 0, (name, probe)
    for name in ("submission", "feedback"):
        assert seen[name]["plots"] >= 1 and seen[name]["svg"] >= 1, (name, seen[name])
        assert seen[name]["bold"], name
    assert written == 404 and not (course / PLANTED).exists(), "a file was written through the contents API"
