"""An ngshare service as a course's exchange (autograder.exchange.adapter's second implementation), over its HTTP API.

ngshare (a JupyterHub service, the exchange of a hub on Kubernetes) keeps each Submit as the hub account whose token
made it and the time it received it, both written by the service, never by the student's side: a student's request
naming another user, or a time, changes neither. Its files are (path, bytes) pairs, so no link can reach the grader;
what can is a hostile path, too many files, too many bytes, a file given twice, or a ``timestamp.txt`` of the
student's own (nbgrader's collect reads that file as the Submit's time). Each Submit's files are judged here, with
snapshot's limits and words, before a private copy is written (``copies``/<name>, mode 700, every entry made here),
which the checks read and Collect copies on, with ngshare's recorded time as its ``timestamp.txt``.

    exchange = NgShare("http://hub:8000/services/ngshare/", token, course_id="course101", copies=Path(...))

The token is the instructor's (or the grading service's account, an instructor of the course in ngshare).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

from autograder.exchange import snapshot
from autograder.exchange.inbound import Entry, Submit, parse_timestamp, read_name, shown_name

STAMP = "timestamp.txt"  # nbgrader's record of a Submit's time, which only the exchange writes here
EVERY = 1.0  # seconds: ngshare is asked for its Submits at most this often
TIMEOUT = 30.0  # seconds one request to ngshare may take


class ExchangeError(RuntimeError):
    """ngshare cannot be reached or refused a request; the message says which and why."""


def token_from(variable: str) -> str:
    token = os.environ.get(variable, "")
    if not token:
        raise ExchangeError(
            f"the course's exchange is ngshare, but ${variable} holds no token: set it to the hub API token of an "
            "instructor of the course (c.ExchangeService.token_env names the variable)"
        )
    return token


class NgShare:
    """One course of an ngshare service (``url``: its API, ending in /), read with an instructor's ``token``."""

    settles = False  # the checks read the private copy, which only the grader writes

    def __init__(
        self,
        url: str,
        token: str,
        *,
        course_id: str,
        copies: Path,
        limits: snapshot.Limits = snapshot.Limits(),
        every: float = EVERY,
    ):
        self.url, self.token, self.course_id = url.rstrip("/") + "/", token, course_id
        self.inbound, self.limits, self.every = Path(copies), limits, every
        self.inbound.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.inbound.chmod(0o700)
        self.found: dict[str, tuple[str, str, str]] = {}  # name -> (student, assignment, ngshare's timestamp)
        self.listed_at = -math.inf
        self.refused: dict[str, str] = {}  # name -> why its files are not taken (judged once)

    # ngshare's API -------------------------------------------------------------------------------------

    def api(self, method: str, *path: str, **fields: str) -> dict:
        """ngshare's JSON answer to ``method`` on ``path`` (each part quoted) with ``fields`` (the query of a GET,
        the form of a POST); ExchangeError with ngshare's message when it refuses."""
        address = self.url + "/".join(urllib.parse.quote(part, safe="") for part in path)
        body = None
        if fields and method == "GET":
            address += "?" + urllib.parse.urlencode(fields)
        elif fields:
            body = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(address, data=body, method=method)
        request.add_header("Authorization", f"token {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                answer = json.loads(response.read())
        except urllib.error.HTTPError as error:
            try:
                said = json.loads(error.read()).get("message", "")
            except ValueError:
                said = ""
            raise ExchangeError(
                f"ngshare refused {method} {'/'.join(path)}: {error.code} {said or error.reason}"
            ) from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise ExchangeError(f"ngshare at {self.url} cannot be reached or answered no JSON: {error}") from None
        if not answer.get("success"):
            raise ExchangeError(f"ngshare refused {method} {'/'.join(path)}: {answer.get('message', '')}")
        return answer

    # what the adapter asks -------------------------------------------------------------------------------

    def marker(self) -> tuple[object, float]:
        """The Submits ngshare holds (asked at most every ``every`` seconds) as the stamp; the time 0: a listing is
        never newer than the answer it came from."""
        if time.monotonic() - self.listed_at >= self.every:
            self.found = self.submissions()
            self.listed_at = time.monotonic()
        return frozenset(self.found), 0.0

    def names(self) -> set[bytes]:
        self.marker()
        return {os.fsencode(name) for name in self.found}

    def submissions(self) -> dict[str, tuple[str, str, str]]:
        """{name: (student, assignment, timestamp)} of every Submit of the course, named as nbgrader names an
        inbound folder (student+assignment+timestamp), from ngshare's records only."""
        found = {}
        for assignment in self.api("GET", "assignments", self.course_id)["assignments"]:
            for record in self.api("GET", "submissions", self.course_id, assignment)["submissions"]:
                student, stamp = str(record["student_id"]), str(record["timestamp"])
                found[f"{student}+{assignment}+{stamp}"] = (student, assignment, stamp)
        return found

    def examine(self, raw: bytes, assignment: str, notebook: str) -> Submit | str | None:
        """One Submit ngshare holds, judged alone: a Submit of ``assignment`` (its files fetched and judged once,
        into the private copy: a refusal of its files is ``refusal``'s answer), else why not, or None."""
        entry = read_name(raw)
        if not isinstance(entry, Entry):
            return None if entry.assignment not in (None, assignment) else entry.reason
        if entry.assignment != assignment:
            return None
        if entry.name not in self.found:
            return "it is no longer in the exchange"
        received = parse_timestamp(self.found[entry.name][2])  # ngshare's record: when it arrived
        self.copy(entry.name)
        return Submit(entry.name, entry.student, assignment, received, received, self.inbound / entry.name)

    def refusal(self, folder: Path, student: str) -> str | None:
        """Why the Submit's files are not taken (a hostile path, too many files or bytes, a file twice, a
        timestamp.txt of its own), else None. Who made it is ngshare's record (the token's account), never asked."""
        return self.copy(Path(folder).name)

    def collect(self, name: str, destination: Path, *, keep: snapshot.Keep | None = None) -> int:
        """The Submit ``name`` copied to ``destination`` (whole or not at all, from the private copy, with
        ngshare's time as its timestamp.txt); Refused with the reason."""
        why = self.copy(name)
        if why is not None:
            raise snapshot.Refused(why)
        kept = keep
        if keep is not None:  # the exchange's own record of the time is always collected

            def kept(path: PurePosixPath, is_folder: bool, size: int) -> bool:
                return str(path) == STAMP or keep(path, is_folder, size)

        return snapshot.collect(self.inbound / name, Path(destination), owner=os.geteuid(), keep=kept)

    # the private copy ----------------------------------------------------------------------------------

    def copy(self, name: str) -> str | None:
        """The private copy of Submit ``name`` made (once), or why its files are refused (kept: judged once)."""
        if name in self.refused:
            return self.refused[name]
        if (self.inbound / name).is_dir():
            return None
        if name not in self.found:
            self.marker()
        if name not in self.found:
            return f"{shown_name(os.fsencode(name))} is not in the exchange"
        student, assignment, stamp = self.found[name]
        answer = self.api("GET", "submission", self.course_id, assignment, student, timestamp=stamp)
        try:
            files = judged(name, answer.get("files"), self.limits)
        except snapshot.Refused as refused:
            self.refused[name] = refused.reason
            return refused.reason
        incoming = self.inbound / f".incoming-{os.getpid()}"
        shutil.rmtree(incoming, ignore_errors=True)
        os.mkdir(incoming, 0o700)
        try:
            for path, content in [*files, (PurePosixPath(STAMP), f"{stamp} UTC".encode())]:
                target = incoming.joinpath(*path.parts)
                target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                with open(target, "xb") as file:
                    file.write(content)
            os.rename(incoming, self.inbound / name)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
        return None


def judged(name: str, files, limits: snapshot.Limits) -> list[tuple[PurePosixPath, bytes]]:
    """ngshare's files of Submit ``name`` (a list of {path, checksum, content}) as (path, bytes), or Refused with
    snapshot's words: no path outside the Submit, no file given twice or inside a file, not more entries, folders
    deep or bytes than ``limits``, no timestamp.txt (the exchange's own record)."""
    if not isinstance(files, list):
        raise snapshot.Refused(f"{name}: ngshare handed no list of files")
    if len(files) > limits.entries:
        raise snapshot.Refused(f"{name} holds more than {limits.entries:,} files and folders ({snapshot.FEW})")
    taken, folders, total = {}, set(), 0
    for item in files:
        text = item.get("path") if isinstance(item, dict) else None
        if not isinstance(text, str) or not isinstance(item.get("content"), str):
            raise snapshot.Refused(f"{name}: an entry is not a file (a path and its content)")
        shown = shown_name(text.encode("utf-8", "surrogateescape"), 80)
        path = PurePosixPath(text)
        if (
            not text
            or path.is_absolute()
            or any(part in ("", ".", "..") for part in text.split("/"))
            or shown != text
            or "\\" in text
        ):
            raise snapshot.Refused(
                f"{name}: {shown!r} is not a plain file name inside the Submit (an absolute path, '..', an empty "
                "part or a character that does not print)"
            )
        if len(path.parts) - 1 > limits.depth:
            raise snapshot.Refused(f"{name}: {shown} is more than {limits.depth} folders deep ({snapshot.FEW})")
        if path == PurePosixPath(STAMP):
            raise snapshot.Refused(
                f"{name}: it holds a {STAMP} of its own: the time a Submit arrived is the exchange's record, never a "
                "file the student sends; submit the assignment's files only"
            )
        parents = set(path.parents) - {PurePosixPath(".")}
        if path in taken or path in folders or parents & taken.keys():
            raise snapshot.Refused(f"{name}: {shown} is given twice (as two files, or as a file and a folder)")
        try:
            content = base64.b64decode("".join(item["content"].split()), validate=True)  # ngshare's lines of 76
        except (binascii.Error, ValueError):
            raise snapshot.Refused(f"{name}: {shown} is not base64 content (ngshare's encoding)") from None
        total += len(content)
        if total > limits.bytes:
            raise snapshot.Refused(f"{name} holds more than {limits.bytes / 2**20:g} MB ({snapshot.FEW} MB)")
        checksum = item.get("checksum")
        if checksum is not None and checksum != hashlib.md5(content).hexdigest():
            raise snapshot.Refused(f"{name}: {shown} changed while it was read: submit again")
        taken[path] = content
        folders |= parents
    if len(taken) + len(folders) > limits.entries:
        raise snapshot.Refused(f"{name} holds more than {limits.entries:,} files and folders ({snapshot.FEW})")
    return list(taken.items())
