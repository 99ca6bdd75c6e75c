"""Formgrader on the class graded once for the suite (``graded_class``), started by the README's command,
`python -m autograder.course.formgrader`, with a PATH that holds nothing of the virtual environment: the server answers
on 127.0.0.1, its HTTP API lists the assignment and every graded submission, a submission's page shows the
verdicts whole; the server is stopped at the end of the test."""

from __future__ import annotations

import json
import os

from conftest import http_get, start_formgrader, stop_session
from nbgrader.api import Gradebook

from autograder.hub.launch import free_port
from autograder.notebook.feedback import PAGE_CSS

ASSIGNMENT = NOTEBOOK = "attention"


def test_formgrader_lists_the_graded_class(graded_class):
    course, port, token = graded_class.course, free_port(), "test-token-" + os.urandom(8).hex()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        graded = sorted(submission.student_id for submission in gradebook.assignment_submissions(ASSIGNMENT))
    bare = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    # no alembic, no jupyter on PATH: the command brings its own
    server = start_formgrader(course, port=port, token=token, env={**bare, "PATH": "/usr/bin:/bin"})
    base = f"http://127.0.0.1:{port}"
    try:
        status, body = http_get(f"{base}/formgrader/api/assignments?token={token}")
        assignments = json.loads(body)
        assert [(a["name"], a["num_submissions"]) for a in assignments] == [(ASSIGNMENT, len(graded))]
        assert (assignments[0]["max_code_score"], assignments[0]["max_written_score"]) == (29.0, 4.0)

        status, body = http_get(f"{base}/formgrader/api/submissions/{ASSIGNMENT}?token={token}")
        assert status == 200
        submissions = {row["student"]: row for row in json.loads(body)}
        assert sorted(submissions) == graded
        assert submissions["full_solution"]["code_score"] == 29.0 and submissions["full_solution"]["autograded"]

        status, body = http_get(f"{base}/formgrader/api/assignments")  # without the token: the login page
        assert ASSIGNMENT.encode() not in body and b"token" in body.lower(), body[:300]

        status, body = http_get(f"{base}/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NOTEBOOK}?token={token}")
        ids = {row["student"]: row["id"] for row in json.loads(body)}
        status, body = http_get(f"{base}/formgrader/submissions/{ids['full_solution']}/?token={token}")
        page = body.decode()
        assert status == 200 and "check_attention (attention): 4 / 4 points" in page
        assert PAGE_CSS in page, "Formgrader's page does not wrap the verdicts"
    finally:
        stop_session(server)
    assert server.returncode is not None
