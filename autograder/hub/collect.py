"""nbgrader's collect, taking only what each student made: no links, no special files, no submission in another's name.

nbgrader's own collect (nbgrader.exchange.default.ExchangeCollect) parses every inbound name with dateutil first,
so one folder whose name it cannot parse stops Collect for the whole class; it copies each submission with
``shutil.copytree``, which follows links and opens each file by its path after listing the folder once, so a
student who renames a link over their notebook while the copy runs gets the link's target (the course's source
notebook, a classmate's work) collected as their own; and a submission made by another account than the student it
names is only logged ("cheating attempt?") and collected all the same.

``OwnCollect`` is nbgrader's documented plugin point for this (``c.ExchangeFactory.collect``):

- the Submits are read through the course's exchange (``autograder.exchange.adapter``, chosen by
  ``c.ExchangeService.kind``: nbgrader's folder, or an ngshare service), the grading service's reader too;
- every inbound name is read by ``autograder.exchange.inbound.read_name``, the service's reader: a hostile name is
  refused on its own, with its reason in the instructor's log, and never stops the others;
- a submission is refused, with its reason, when it is not a plain folder owned by the account of the student it
  names, or holds a link, a pipe, a socket or a device, a file or folder of another account, one the instructor
  cannot read, or more than ``snapshot.Limits`` allows (``refusal``, which the grading service uses too);
- the copy is ``autograder.exchange.snapshot.collect``: through folder descriptors, never through a link, checked after
  each open, into a private folder that takes the place of the collected one only when whole. A file swapped while
  the copy runs is refused, never read through, and a refused copy leaves the student's earlier collected
  submission as it was. The student's earlier submission, if one passes, is collected instead of a refused one.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path, PurePosixPath

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect, groupby
from nbgrader.utils import check_mode

from autograder.exchange import snapshot
from autograder.exchange.adapter import MOST_ENTRIES, Exchange, Folder, account_id, open_exchange
from autograder.exchange.inbound import Entry, NotTheirs, read_name, shown_name
from autograder.settings import ExchangeService
from autograder.term import Term

__all__ = ["MOST_ENTRIES", "NotTheirs", "OwnCollect", "account_id", "refusal"]


def refusal(submission: Path, student: str) -> str | None:
    """Why ``submission`` (a folder of the inbound) cannot be collected as ``student``'s, or None (a NotTheirs
    when it is not that student's own): the folder exchange's rule (autograder.exchange.adapter.Folder.refusal)."""
    limits = snapshot.Limits(entries=MOST_ENTRIES)
    return Folder(Path(submission).parent, limits).refusal(Path(submission), student)


class OwnCollect(ExchangeCollect):
    """nbgrader's collect over the submissions that pass ``refusal``, each copied by ``snapshot.collect``."""

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.exchange = self.open_exchange()
        self.inbound_path = str(self.exchange.inbound)
        if isinstance(self.exchange, Folder):
            if not os.path.isdir(self.inbound_path):
                self.fail(f"Course not found: {self.inbound_path}")
            if not check_mode(self.inbound_path, read=True, execute=True):
                self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                self.duedate = gradebook.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.term_standings = self.read_standings()  # read once, before any Submit is chosen
        inbound = Path(self.inbound_path)
        accepted = []
        for entry in self.entries():
            why = self.exchange.refusal(inbound / entry.name, entry.student)
            if why is None:
                accepted.append({"username": entry.student, "filename": entry.name, "timestamp": entry.stated})
            else:
                self.log.error("Not collected: %s", why)
        self.src_records = [self.choose(group) for group in groupby(accepted, lambda r: r["username"]).values()]

    def open_exchange(self) -> Exchange:
        """The course's exchange as its configuration chooses (c.ExchangeService.*, the course's settings'
        autograder.settings.ExchangeService, read from the configuration nbgrader loaded for this command)."""
        chosen = ExchangeService(config=self.config)
        copies = Path(self.coursedir.root) / "ngshare-copies"  # an ngshare course's private copies: the instructor's
        return open_exchange(chosen, folder=Path(self.course_path), course_id=self.coursedir.course_id, copies=copies)

    def entries(self) -> list[Entry]:
        """The exchange's Submits of this assignment (of the one student asked for, if any), each name read alone:
        a name that is not a Submit's is logged with its reason (unless it names another assignment)."""
        assignment, student = self.coursedir.assignment_id, self.coursedir.student_id
        found = []
        for raw in sorted(self.exchange.names()):
            entry = read_name(raw)
            if isinstance(entry, Entry):
                if entry.assignment == assignment and (not student or fnmatch.fnmatchcase(entry.student, student)):
                    found.append(entry)
            elif entry.assignment in (None, assignment):  # not even an assignment's name: every Collect says so
                self.log.error("Not collected: %s: %s", shown_name(raw), entry.reason)
        return found

    def choose(self, records: list[dict]) -> dict:
        """The submission nbgrader would take: the latest, or with before_duedate the latest before the student's
        own due date (their extension and late days, autograder.course.term, else the assignment's)."""
        ordered = self._sort_by_timestamp(records)
        due = self.due_of(records[0]["username"])
        if due is not None and self.before_duedate:
            on_time = [record for record in ordered if record["timestamp"] <= due]
            return (on_time or ordered)[0]
        return ordered[0]

    def read_standings(self) -> dict:
        """{student: Standing} of each student whose due date is their own (the course's term, its tables beside
        the gradebook); {} where the term cannot be read (said in the log: the assignment's due date is used)."""
        try:
            term = Term(self.coursedir.db_url)
            try:
                return term.standings(assignment=self.coursedir.assignment_id, base=self.duedate)
            finally:
                term.close()
        except Exception as error:  # noqa: BLE001 (any database trouble: the assignment's date, said)
            self.log.warning("each student's own due date could not be read (%s): the assignment's is used", error)
            return {}

    def due_of(self, student: str):
        """``student``'s own due date for this assignment, else the assignment's."""
        standing = self.term_standings.get(student)
        return standing.due if standing is not None else self.duedate

    def keep(self):
        """nbgrader's CourseDirectory.ignore, include and max_file_size as ``snapshot``'s keep: what a copy leaves
        out, judged from the walk's own metadata (nbgrader's ignore_patterns stats each path, following links)."""
        exclude, include = self.coursedir.ignore, self.coursedir.include
        largest = self.coursedir.max_file_size

        def keep(path: PurePosixPath, is_folder: bool, size: int) -> bool:
            if exclude and any(fnmatch.fnmatch(path.name, pattern) for pattern in exclude):
                return False
            if is_folder:
                return True
            if include and not any(fnmatch.fnmatch(path.name, pattern) for pattern in include):
                return False
            if largest and size > 1000 * largest:
                self.log.warning("Ignoring file too large '%s' (see config option CourseDirectory.max_file_size)", path)
                return False
            return True

        return keep

    def copy_files(self):
        """nbgrader's choice of what to copy (update, before_duedate, an existing timestamp) and its log lines, each
        submission copied alone and said only once copied: one refused or failed copy is logged and the others go
        on (attention_checks.formgrader reads these lines to state Collect's result)."""
        assignment = self.coursedir.assignment_id
        if not self.src_records:
            self.log.warning("No submissions of '%s' for course '%s' to collect", assignment, self.coursedir.course_id)
        for record in self.src_records:
            student = record["username"]
            source = Path(self.inbound_path) / record["filename"]
            destination = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment))
            updating = destination.is_dir()
            if updating:
                existing = self.coursedir.get_existing_timestamp(str(destination))
                newer = existing is None or record["timestamp"] > existing
                if not ((self.update and newer) or (self.before_duedate and existing != record["timestamp"])):
                    if self.update:
                        self.log.info("No newer submission to collect: %s %s", student, assignment)
                    else:
                        self.log.info("Submission already exists, use --update to update: %s %s", student, assignment)
                    continue
            if self.do_copy(str(source), str(destination)):
                what = "Updating submission" if updating else "Collecting submission"
                self.log.info("%s: %s %s", what, student, assignment)

    def do_copy(self, src, dest, log=None) -> bool:
        """``src`` (a Submit's folder in the inbound) copied to ``dest`` by the exchange (snapshot.collect: whole or
        not at all); False (logged "Not collected: ...") when refused."""
        try:
            self.exchange.collect(Path(src).name, Path(dest), keep=self.keep())
        except snapshot.Refused as refused:
            self.log.error("Not collected: %s", refused.reason)
            return False
        return True
