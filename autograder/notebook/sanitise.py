"""Student content made inert when a notebook is autograded, so that every later view of it is safe.

A student's notebook is hostile: its outputs and its markdown cells can hold scripts, event handlers,
``javascript:`` links, iframes, forms, and outputs whose only job is to run code (``application/javascript``,
widgets). Formgrader's submission and manual-grading pages and the feedback page (the page teaching assistants
open and nbgrader releases to the student) show them inside the instructor's or the student's logged-in pages.
``Sanitise`` runs in nbgrader's Autograde after the student's kernel ran, before the notebook is saved, so
the autograded notebook, and every page made from it, holds no active content:

- ``text/html`` outputs: cleaned by nh3 (the Rust ``ammonia`` sanitiser): scripts, event handlers, ``javascript:``
  links and active embedded content (iframe, object, embed, form, ...) removed; tables, emphasis, code, images
  and http(s) links kept;
- ``text/markdown`` outputs and markdown cells: rendered with nbconvert's own Markdown renderer (the one
  Formgrader and the feedback page use); when the rendering holds raw HTML or a link with a harmful scheme,
  the cell's text becomes nh3's cleaning of that rendering, with a note saying what was done; anything else
  is left exactly as the student wrote it;
- ``image/svg+xml`` outputs: kept when the SVG parses and holds no script, event handler, embedded content or
  link outside the image; otherwise removed (every page shows SVG as an image, where nothing runs; this is the
  second line);
- every other kind of output not in ``SHOWN`` (``application/javascript``, widgets, unknown types): removed,
  with a ``text/plain`` note in its place when the output has no text of its own.

What was removed is listed in the cell's metadata (``metadata.sanitised``) and named in the note the page shows.
The pages clean what they show again with the same ``clean_html`` (their nbconvert filter), for a notebook
autograded before this step existed.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ElementTree

import nh3
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

# What a page may show, each made inert below; every other output type is removed
SHOWN = {
    "text/plain",
    "text/html",
    "text/markdown",
    "text/latex",  # written into the page escaped (nbconvert's templates), read by MathJax
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/svg+xml",
    "application/json",  # shown as text
}
# nh3's allow-list (ammonia's) leaves out script, style, iframe, object, embed, form, input, svg and every on*
# attribute; tables, code, pre, img, span and div are in it. Classes are kept too (a page's own CSS styles them:
# pandas' tables, nbconvert's code), and links and sources only of these schemes: no relative URL, which would
# reach the server the page came from (an <img src="/logout">, loaded with the instructor's cookies)
ATTRIBUTES = {**nh3.ALLOWED_ATTRIBUTES, "*": {"class", "lang", "title"}}
LINK_SCHEMES = {"http", "https", "mailto"}
NOTE = "[removed when graded: {what}]"
SVG_ACTIVE = {"script", "foreignObject", "iframe", "object", "embed", "handler", "listener", "set", "animate"}
XLINK = "{http://www.w3.org/1999/xlink}href"


def clean_html(text: str | bytes) -> str:
    """``text`` as HTML with everything active removed (nh3). Also every page's ``clean_html`` filter (Formgrader's,
    the feedback page's: autograder.notebook.pipeline.feedback_config), in place of nbconvert's own: that one is
    bleach with a short allow-list that escapes, rather than removes, what it does not allow, so the <p> around a
    student's link, a table's <th>, showed as literal tags."""
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return nh3.clean(text, attributes=ATTRIBUTES, url_schemes=LINK_SCHEMES, url_relative="deny")


def _render(source: str, escape: bool, allow_harmful: bool) -> str:
    renderer = IPythonRenderer(escape=escape, allow_harmful_protocols=allow_harmful)
    return MarkdownWithMath(renderer=renderer).render(source)


def markdown_is_inert(source: str) -> bool:
    """True when nbconvert's renderer makes ``source`` into HTML with no raw HTML and no link of a harmful
    scheme (javascript:, vbscript:, data:, file:): its rendering equals the one that escapes raw HTML and drops
    such links."""
    return _render(source, escape=False, allow_harmful=True) == _render(source, escape=True, allow_harmful=False)


def clean_markdown(source: str) -> str | None:
    """None when the markdown ``source`` is inert as it is; else HTML that a Markdown renderer shows verbatim: the
    cleaned rendering of ``source`` and a note, as one HTML block (a <div> and no blank line, which CommonMark and
    nbconvert's renderer pass through untouched, so no text left by the cleaning is read as Markdown again). Where
    that cannot be had, ``source`` is shown as a code block, as text."""
    if markdown_is_inert(source):
        return None
    cleaned = clean_html(_render(source, escape=False, allow_harmful=True))
    what = "scripts, event handlers, embedded content and unsafe links in this cell's HTML"
    lines = [f"<div><p><em>{html.escape(NOTE.format(what=what))}</em></p>"]
    lines += [line for line in cleaned.splitlines() if line.strip()]
    block = "\n".join([*lines, "</div>"]) + "\n"
    if _render(block, escape=False, allow_harmful=True).strip() == block.strip():
        return block
    code = "\n".join("    " + line for line in source.splitlines())
    return f"*{NOTE.format(what='HTML; the cell is shown as text')}*\n\n{code}\n"


def svg_is_inert(text: str) -> bool:
    """True when ``text`` parses as XML and holds no script, event handler, embedded content, animation of an
    attribute, or link to anything but a part of itself or an embedded PNG/JPEG."""
    try:
        root = ElementTree.fromstring(text)
    except (ElementTree.ParseError, ValueError):
        return False
    for element in root.iter():
        if not isinstance(element.tag, str) or element.tag.rsplit("}", 1)[-1] in SVG_ACTIVE:
            return False
        for name, value in element.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on"):
                return False
            if local == "href" and not value.startswith(("#", "data:image/png;", "data:image/jpeg;")):
                return False
    return True


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def clean_output(output) -> list[str]:
    """Make one output inert, in place; returns what was removed (mime types), [] when nothing was."""
    if output.get("output_type") not in ("display_data", "execute_result"):
        return []  # stream and error outputs are text, escaped by every page
    data, removed = output.get("data", {}), []
    for mime in list(data):
        if mime not in SHOWN:
            removed.append(mime)
            del data[mime]
        elif mime == "text/html":
            data[mime] = clean_html(_text(data[mime]))
        elif mime == "text/markdown":
            cleaned = clean_markdown(_text(data[mime]))
            if cleaned is not None:
                del data[mime]
                data["text/html"] = data.get("text/html", cleaned)
                removed.append("text/markdown (shown as cleaned HTML)")
        elif mime == "image/svg+xml" and not svg_is_inert(_text(data[mime])):
            removed.append(mime)
            del data[mime]
    if removed and "text/plain" not in data:
        data["text/plain"] = NOTE.format(what=", ".join(removed))
    for mime in removed:
        output.get("metadata", {}).pop(mime, None)
    return removed


class Sanitise(Preprocessor):
    """An nbgrader/nbconvert step: every output and markdown cell of the notebook made inert (see the module).
    Each cell where something was removed says so in ``metadata.sanitised`` (a list of what)."""

    enabled = Bool(True, help="on wherever it is listed (nbconvert's steps are off by default)").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        removed = []
        if cell.cell_type == "markdown":
            cleaned = clean_markdown(cell.source)
            if cleaned is not None:
                cell.source = cleaned
                removed.append("markdown: raw HTML or a harmful link")
        for output in cell.get("outputs", []):
            removed.extend(clean_output(output))
        if removed:
            cell.metadata["sanitised"] = removed
            self.log.warning("cell %d: removed %s", index, ", ".join(removed))
        return cell, resources
