"""Formgrader's Generate and Collect dialogs state the result first: a Jupyter server extension on the instructor's
server (hub/instructor/jupyter_server_config.json turns it on).

Formgrader's page shows what its API answers, ``{"success": ..., "log": ...}``, as a sentence of its own ("Successfully
collected submissions of 'attention'.") above the whole log nbgrader wrote while it worked: Generate's dialog is
a list of INFO and DEBUG lines, and Collect's opens with whatever came first, an ``[ERROR] Not collected: ...`` line
for a refused submission (autograder.hub.collect) before the submissions it did collect. This extension rewrites the
log of those two answers, nothing else of them: its first lines say what came of the action, read from nbgrader's
own log lines,

    Generate:  The student version of 'attention' is made: 1 notebook, attention.ipynb.
               Release it next.
    Collect:   Collected 2 submissions of 'attention': student1, student2.
               Not collected, 1:
                 - student1+attention+...+forged names student1 but was made by student3's account

then nbgrader's log follows as it was written, under "nbgrader's log:", less its DEBUG lines (Formgrader's server
logs every preprocessor and checksum; the heading says how many lines were left out). The result's lines are wrapped
at WIDTH characters: Formgrader's log box does not wrap. It is an output transform of the server (tornado's hook on
every response), so nbgrader's handlers and files stay as they are; an answer that is not Formgrader's assign or
collect, or not the JSON it expects, passes through untouched.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import PurePosixPath
from urllib.parse import unquote

from jupyter_server.utils import url_path_join
from tornado import web

ACTIONS = ("assign", "collect")  # Formgrader's Generate and Collect, /formgrader/api/assignment/<name>/<action>
WIDTH = 80  # characters of a line of the result, as Formgrader's log box shows them whole
LINE = re.compile(r"^\[(?P<level>[A-Z]+)\] (?P<text>.*)$")


def log_lines(log: str) -> list[tuple[str, str]]:
    """nbgrader's captured log as (level, text) pairs; a line of a message that spans several joins its first."""
    lines: list[tuple[str, str]] = []
    for line in log.splitlines():
        found = LINE.match(line)
        if found:
            lines.append((found["level"], found["text"]))
        elif lines:
            lines[-1] = (lines[-1][0], f"{lines[-1][1]}\n{line}")
    return lines


def generated(assignment: str, lines: list[tuple[str, str]]) -> list[str]:
    """What Generate made: the notebooks nbgrader wrote ("Writing N bytes to .../release/<name>/<file>")."""
    written = [PurePosixPath(text.rsplit(" to ", 1)[1]).name for _, text in lines if text.startswith("Writing ")]
    notebooks = [name for name in written if name.endswith(".ipynb")]
    if not notebooks:
        return [f"The student version of '{assignment}' is made, but nbgrader wrote no notebook: see its log below."]
    count = f"{len(notebooks)} notebook{'s' if len(notebooks) > 1 else ''}"
    return [f"The student version of '{assignment}' is made: {count}, {', '.join(notebooks)}.", "Release it next."]


def collected(assignment: str, lines: list[tuple[str, str]]) -> list[str]:
    """What Collect did: the students whose submission it took, those it had already, those it refused."""
    taken, unchanged, refused = [], [], []
    for level, text in lines:
        if text.startswith(("Collecting submission: ", "Updating submission: ")):
            taken.append(text.split(": ", 1)[1].split(" ")[0])
        elif text.startswith(("No newer submission to collect: ", "Submission already exists")):
            unchanged.append(text.rsplit(": ", 1)[1].split(" ")[0])
        elif level == "ERROR":
            refused.append(text.removeprefix("Not collected: ").splitlines()[0])
    taken, unchanged, said = sorted(taken), sorted(unchanged), []
    if taken:
        plural = "s" if len(taken) > 1 else ""
        said.append(f"Collected {len(taken)} submission{plural} of '{assignment}': {', '.join(taken)}.")
    else:
        said.append(f"No new submission of '{assignment}' was collected.")
    if unchanged:
        said.append(f"Already collected, no newer submission: {', '.join(unchanged)}.")
    if refused:
        said.append(f"Not collected, {len(refused)}:")
        said.extend(f"  - {why}" for why in refused)
    return said


def without_debug(log: str) -> tuple[str, int]:
    """``log`` without its DEBUG lines (Formgrader's server logs at DEBUG: every preprocessor, every checksum), and
    how many were left out."""
    kept, left_out, debugging = [], 0, False
    for line in log.splitlines():
        found = LINE.match(line)
        if found:
            debugging = found["level"] == "DEBUG"
            left_out += debugging
        if not debugging:
            kept.append(line)
    return "\n".join(kept), left_out


def wrapped(lines: list[str]) -> list[str]:
    """``lines`` wrapped at WIDTH characters (Formgrader's log box does not wrap: a longer line is cut on the right),
    a line's continuation indented as the line is, and four more spaces."""
    out = []
    for line in lines:
        indent = " " * (len(line) - len(line.lstrip()))
        out.extend(textwrap.wrap(line, WIDTH, subsequent_indent=indent + "    ", break_on_hyphens=False) or [""])
    return out


def result_first(action: str, assignment: str, reply: dict) -> dict:
    """``reply`` (Formgrader's API answer to ``action``) with its log opening with what came of it, then nbgrader's
    log without its DEBUG lines."""
    log = reply.get("log") or ""
    lines = log_lines(log)
    if not reply.get("success"):
        error = (reply.get("error") or "").strip().splitlines()
        why = error[-1] if error else "see the log and the traceback below"
        said = [f"It failed: {why}"]
    elif action == "assign":
        said = generated(assignment, lines)
    else:
        said = collected(assignment, lines)
    shown, left_out = without_debug(log.rstrip())
    heading = f"nbgrader's log ({left_out} DEBUG lines left out):" if left_out else "nbgrader's log:"
    return {**reply, "log": "\n".join([*wrapped(said), "", heading, shown]) + "\n"}


def route_pattern(base_url: str) -> re.Pattern:
    """Formgrader's assign and collect routes under the server's ``base_url``; groups: assignment, action."""
    route = url_path_join(base_url, "formgrader", "api", "assignment")
    return re.compile(rf"^{re.escape(route)}/(?P<assignment>[^/]+)/(?P<action>{'|'.join(ACTIONS)})$")


class ResultFirst(web.OutputTransform):
    """The transform: Formgrader's assign and collect answers with their result first, any other answer as it is."""

    pattern: re.Pattern = re.compile(r"$^")  # set at load, with the server's base URL

    def __init__(self, request):
        super().__init__(request)
        found = self.pattern.match(request.path)
        self.action = (unquote(found["assignment"]), found["action"]) if found else None

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if self.action is None or status_code != 200 or not finishing:
            return status_code, headers, chunk
        try:
            reply = json.loads(chunk)
        except ValueError:
            return status_code, headers, chunk
        if not isinstance(reply, dict) or "success" not in reply:
            return status_code, headers, chunk
        assignment, action = self.action
        chunk = json.dumps(result_first(action, assignment, reply)).encode()
        headers["Content-Length"] = str(len(chunk))
        return status_code, headers, chunk


def _jupyter_server_extension_points():
    return [{"module": "attention_checks.formgrader"}]


def _load_jupyter_server_extension(server_app):
    ResultFirst.pattern = route_pattern(server_app.web_app.settings["base_url"])
    server_app.web_app.transforms.insert(0, ResultFirst)  # first: it reads the answer before any compression
