"""Nothing lost (issue 12, part 4): a class is graded while another process, through nbgrader's Gradebook API
(as Formgrader and `nbgrader db student add` do), saves manual grades and comments for students already
graded and adds new students. Every one of those writes is there afterwards, and grades.csv, checks.csv and
the gradebook agree on every student's total. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time

from gradebooks import instant, synthetic_course
from nbgrader.api import Gradebook

from autograder.course import run as steps
from autograder.grading import dispatch

ASSIGNMENT = NOTEBOOK = "attention"

# The other process: a teaching assistant in Formgrader, and an instructor adding students, while grading runs
ASSISTANT = r"""
import json, sys, time
from pathlib import Path
from nbgrader.api import Gradebook
from autograder.grading import dispatch

course, url, stop = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
done = {"manual": [], "added": []}
with Gradebook(url) as gradebook:
    print("ready", flush=True)
    while not stop.exists():
        for path in sorted((course / ".grading").glob("assignments/*/students/*.json")):
            student = json.loads(path.read_text())["student"]
            if student in done["manual"]:
                continue
            gradebook.find_grade("written", "attention", "attention", student).manual_score = 1.0
            comment = gradebook.find_comment("written", "attention", "attention", student)
            comment.manual_comment = f"read by a TA: {student}"
            gradebook.db.commit()
            done["manual"].append(student)
            break
        new = f"late_{len(done['added'])}"
        gradebook.add_student(new, first_name="Late", last_name=str(len(done["added"])))
        done["added"].append(new)
        time.sleep(0.02)
print(json.dumps(done), flush=True)
"""


def slow_instant(assignment, submission):
    time.sleep(0.08)  # long enough for the other process to write between two results
    return instant(assignment, submission)


def test_nothing_written_during_a_class_run_is_lost(tmp_path, database, cluster):
    url = database(tmp_path)
    students = {f"s{n:02d}": str(n % 3) for n in range(24)}
    course, url = synthetic_course(tmp_path, students, url)
    stop = tmp_path / "stop"
    assistant = subprocess.Popen(
        [sys.executable, "-c", ASSISTANT, str(course), url, str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert assistant.stdout.readline().strip() == "ready", assistant.stderr.read()
        summary = dispatch.grade_class(
            course,
            "attention",
            list(students),
            options=dispatch.ClassOptions(scheduler=cluster, progress=False, db=url, task=slow_instant),
        )
    finally:
        stop.touch()
        out, err = assistant.communicate(timeout=60)
    assert assistant.returncode == 0, err[-3000:]
    done = json.loads(out.strip().splitlines()[-1])
    assert sorted(summary.graded) == sorted(students) and not summary.failed
    assert len(done["manual"]) >= 5 and len(done["added"]) >= 20, f"the two hardly overlapped: {done}"

    with Gradebook(url) as gradebook:
        known = {student.id for student in gradebook.students}
        assert set(done["added"]) <= known, "a student added during the run is missing"
        totals = {}
        for student in students:
            submission = gradebook.find_submission(ASSIGNMENT, student)
            grades = {grade.name: grade for grade in submission.notebooks[0].grades}
            comment = submission.notebooks[0].comments[0]
            assert grades["check_a"].auto_score == float(students[student]), student
            if student in done["manual"]:
                assert grades["written"].manual_score == 1.0, f"{student}'s manual grade was lost"
                assert comment.manual_comment == f"read by a TA: {student}", f"{student}'s comment was lost"
            totals[student] = submission.score
    assert sum(totals.values()) == sum(float(p) + 1.0 for p in students.values()) + len(done["manual"])

    steps.export(course, url)
    with open(course / "grades.csv") as handle:
        exported = {
            row["student_id"]: float(row["score"]) for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT
        }
    with open(course / "checks.csv") as handle:
        checks = {}
        for row in csv.DictReader(handle):
            checks[row["student_id"]] = checks.get(row["student_id"], 0.0) + float(row["score"] or 0)
    for student, total in totals.items():
        assert exported[student] == total and checks[student] == total, student
