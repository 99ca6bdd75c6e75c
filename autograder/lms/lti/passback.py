"""Each student's score to the LMS's line item (LTI Assignment and Grade Services, through PyLTI1p3).

After a class run, ``send_scores`` reads every submission's total from nbgrader's gradebook, and for each
student who launched from the LMS (their identity is in the course's lti.json) and each assignment placed
with a line item, puts the score in the outbox (``lti-outbox.json`` in the course folder, written whole then
renamed) when it differs from what the LMS last accepted. Then it sends the outbox: what the LMS accepts leaves
it; what fails (the LMS cannot be reached, or refuses) stays, with why, and is sent on the next run.

gradingProgress is FullyGraded once no cell of the submission waits for a hand grade, else PendingManual
(activityProgress Completed, or Submitted while hand grading is to come).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import requests
from nbgrader.api import Gradebook, MissingEntry
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.service_connector import ServiceConnector

from autograder.lms.files import scored
from autograder.lms.lti.config import ConfigError, LtiConfig, load_config
from autograder.lms.lti.store import CourseLinks, same_context, write_json
from autograder.settings import CourseSettings

OUTBOX_FILE = "lti-outbox.json"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
TIMEOUT = 20  # seconds per request to the LMS


class TimedSession(requests.Session):
    """A requests session that never waits for the LMS longer than TIMEOUT (PyLTI1p3 sets no timeout)."""

    def request(self, *args, **kwargs):
        kwargs.setdefault("timeout", TIMEOUT)
        return super().request(*args, **kwargs)


@dataclass(frozen=True)
class PassbackOptions:
    config: LtiConfig
    db: str | None = None  # the gradebook's URL; default the one the course's settings name (autograder.settings)


@dataclass
class PassbackResult:
    sent: list[str] = field(default_factory=list)  # "student/assignment: score/maximum progress"
    pending: dict[str, str] = field(default_factory=dict)  # "student/assignment" -> why it is still in the outbox
    not_launched: dict[str, str] = field(default_factory=dict)  # student -> what to do
    not_placed: dict[str, str] = field(default_factory=dict)  # assignment -> what to do

    def summary(self) -> list[str]:
        lines = [f"LMS: {len(self.sent)} scores sent, {len(self.pending)} pending"]
        lines += [f"  sent {line}" for line in self.sent]
        lines += [
            f"  PENDING {key}: {why} (kept in {OUTBOX_FILE}, sent on the next run)" for key, why in self.pending.items()
        ]
        lines += [f"  NOT LAUNCHED FROM THE LMS: {student}: {what}" for student, what in self.not_launched.items()]
        lines += [f"  NO LINE ITEM: {assignment}: {what}" for assignment, what in self.not_placed.items()]
        return lines


def read_outbox(course: Path) -> dict:
    try:
        data = json.loads((course / OUTBOX_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"pending": {}, "sent": {}}
    except ValueError as error:
        raise ValueError(f"{course / OUTBOX_FILE} is not JSON ({error}): restore it or delete it") from None
    if not isinstance(data, dict):
        raise ValueError(f"{course / OUTBOX_FILE} is not a JSON object: restore it or delete it")
    return {"pending": data.get("pending", {}), "sent": data.get("sent", {})}


NOT_PLACED = "no line item: the instructor places it in the LMS with Deep Linking and a student launches it"
NOT_LAUNCHED = "no LTI user id: they open the assignment once from the LMS"


def course_lineitem(links: dict, assignment: str) -> tuple[dict | None, str]:
    """(the assignment's line item, "") when it was recorded from the LMS course the tool is bound to, else
    (None, what to do): a line item never goes to another course."""
    item = links["assignments"].get(assignment)
    if item is None:
        return None, NOT_PLACED
    bound, context = links.get("context"), item.get("context")
    if not bound or not isinstance(context, dict) or not same_context(bound, context):
        return None, (
            "its line item was not recorded from the LMS course the tool is bound to: not sent; a student "
            "launches it again from that course"
        )
    return item, ""


def person_on(item: dict, who: dict | None) -> dict | None:
    """The student's identity when it is on the line item's platform and deployment (a ``sub`` means nothing
    elsewhere), else None."""
    if who is None:
        return None
    if who.get("issuer") != item["issuer"] or who.get("deployment_id") != item["context"]["deployment_id"]:
        return None
    return who


def queue_scores(config: LtiConfig, db: str | None, outbox: dict, result: PassbackResult) -> None:
    """Every score the LMS does not have yet, into outbox["pending"] (the newest score of a pair wins)."""
    links = CourseLinks(config.course).read()
    url = CourseSettings.read(config.course, db=db).db  # the gradebook the course's settings name
    with Gradebook(url) as gradebook:
        for assignment in gradebook.assignments:
            item, why = course_lineitem(links, assignment.name)
            if item is None:
                result.not_placed[assignment.name] = why
                continue
            for student in sorted(gradebook.students, key=lambda s: s.id):
                who = person_on(item, links["students"].get(student.id))
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    continue
                if who is None:
                    result.not_launched[student.id] = (
                        "no LTI user id: they open the assignment once from the LMS, then the next run sends the score"
                    )
                    continue
                manual = bool(submission.needs_manual_grade)
                entry = {
                    "student": student.id,
                    "assignment": assignment.name,
                    "user_id": who["sub"],
                    "issuer": item["issuer"],
                    "client_id": item["client_id"],
                    "lineitem": item["lineitem"],
                    "scope": item.get("scope", [SCORE_SCOPE]),
                    "score": scored(submission),
                    "maximum": float(assignment.max_score),
                    "progress": "PendingManual" if manual else "FullyGraded",
                    "activity": "Submitted" if manual else "Completed",
                }
                key = f"{student.id}/{assignment.name}"
                sent = outbox["sent"].get(key)
                if sent == [entry["score"], entry["progress"], entry["lineitem"]]:
                    outbox["pending"].pop(key, None)
                    continue
                entry["timestamp"] = datetime.now(timezone.utc).isoformat()
                outbox["pending"][key] = {**outbox["pending"].get(key, {}), **entry}


def send_one(config: LtiConfig, entry: dict, connectors: dict) -> None:
    """Put one score on its line item; raises LtiException or requests' errors when it is not taken."""
    key = (entry["issuer"], entry["client_id"])
    if key not in connectors:
        registration = config.tool_conf().find_registration_by_params(entry["issuer"], entry["client_id"])
        if registration is None:
            raise LtiException(f"the platform {entry['issuer']} ({entry['client_id']}) is no longer in the LTI config")
        connectors[key] = ServiceConnector(registration, requests_session=TimedSession())
    service = AssignmentsGradesService(connectors[key], {"scope": entry["scope"], "lineitem": entry["lineitem"]})
    grade = (
        Grade()
        .set_score_given(entry["score"])
        .set_score_maximum(entry["maximum"])
        .set_timestamp(entry["timestamp"])
        .set_activity_progress(entry["activity"])
        .set_grading_progress(entry["progress"])
        .set_user_id(entry["user_id"])
    )
    service.put_grade(grade)


def why_not_sent(error: Exception) -> str:
    if isinstance(error, LtiServiceException):
        return f"the LMS refused it: {error}"
    if isinstance(error, requests.RequestException):
        return f"the LMS could not be reached: {type(error).__name__}"
    return str(error)


def send_outbox(config: LtiConfig, outbox: dict, result: PassbackResult) -> None:
    """Send every pending score; what the LMS takes leaves the outbox, what fails stays with why. The outbox is
    written before and after sending."""
    course = config.course
    write_json(course / OUTBOX_FILE, outbox)
    connectors: dict = {}
    try:
        for key, entry in sorted(outbox["pending"].items()):
            try:
                send_one(config, entry, connectors)
            except (LtiException, requests.RequestException) as error:
                entry["last_error"] = why_not_sent(error)
                entry["attempts"] = entry.get("attempts", 0) + 1
                result.pending[key] = entry["last_error"]
                continue
            del outbox["pending"][key]
            outbox["sent"][key] = [entry["score"], entry["progress"], entry["lineitem"]]
            result.sent.append(f"{key}: {entry['score']:g}/{entry['maximum']:g} {entry['progress']}")
    finally:
        write_json(course / OUTBOX_FILE, outbox)


def send_scores(options: PassbackOptions) -> PassbackResult:
    """Queue what changed in the gradebook, then send the outbox."""
    result = PassbackResult()
    outbox = read_outbox(options.config.course)
    queue_scores(options.config, options.db, outbox, result)
    send_outbox(options.config, outbox, result)
    return result


def send_instant(config: LtiConfig, *, student: str, assignment: str, points: float, maximum: float) -> PassbackResult:
    """An instant check's score (autograder.service.app, when the course's policy asks for it), to the LMS as
    gradingProgress Pending and activityProgress Submitted: the class run's score, FullyGraded or PendingManual,
    replaces it. Sent through the outbox like the class run's; a student who never launched, or an assignment
    without a line item, is said in the result and nothing is queued."""
    result = PassbackResult()
    links = CourseLinks(config.course).read()
    item, why = course_lineitem(links, assignment)
    if item is None:
        result.not_placed[assignment] = why
        return result
    who = person_on(item, links["students"].get(student))
    if who is None:
        result.not_launched[student] = NOT_LAUNCHED
        return result
    outbox = read_outbox(config.course)
    key = f"{student}/{assignment}"
    outbox["pending"][key] = {
        **outbox["pending"].get(key, {}),
        "student": student,
        "assignment": assignment,
        "user_id": who["sub"],
        "issuer": item["issuer"],
        "client_id": item["client_id"],
        "lineitem": item["lineitem"],
        "scope": item.get("scope", [SCORE_SCOPE]),
        "score": float(points),
        "maximum": float(maximum),
        "progress": "Pending",
        "activity": "Submitted",
        "timestamp": datetime.now(timezone.utc).isoformat(),
    }
    send_outbox(config, outbox, result)
    return result


def passback_lines(config_path: Path, course: Path, db: str | None = None) -> list[str]:
    """The scores sent after a class run (classroom --lti CONFIG), as the run's closing lines; never raises: a
    score that cannot be sent stays in the outbox, and a wrong config is said, the grades being recorded."""
    try:
        config = load_config(config_path)
    except ConfigError as error:
        return [f"LMS: scores not sent: {error}"]
    if config.course != Path(course).resolve():
        return [f"LMS: scores not sent: {config_path} is for the course {config.course}, not {course}"]
    try:
        return send_scores(PassbackOptions(config=config, db=db)).summary()
    except Exception as error:  # noqa: BLE001 - the gradebook or the outbox: said, the grades are recorded
        return [f"LMS: scores not sent: {type(error).__name__}: {error}"]
