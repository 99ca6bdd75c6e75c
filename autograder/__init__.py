"""The course's grading engine, read as the path a class's work takes, from a class to one check:

- classroom: a class of uploads -> nbgrader's gradebook, grades.csv, checks.csv, reports/<assignment>.html;
- class_grading: one submission -> one task on Dask -> one transaction in the gradebook (ledger, lock);
- notebook_grading: one notebook -> nbgrader's Autograde: cells restored, student_kernel runs it, verdicts in;
- answer_grading: one notebook's answers -> answer_runner calls the student's functions -> each check judged
  into a verdicts.Verdict (answer_session makes the calls, answer_process speaks to the runner and watches it,
  answer_sandbox is its view, answer_budget its time budget, stand_ins what the grader computes for it);
- checks: one check -> its calls and properties; an assignment's own are source/<assignment>/checks.py.

Beside the path: assignments (an assignment found by name), sandbox (bubblewrap and limits for student
code), model (the store's model, measured for the checks), export (ChecksExport, one CSV row per student
per check), feedback (the feedback page's template and its regeneration after hand grading), formgrader
(nbgrader's Formgrader on a course folder), hub (the course on JupyterHub with nbgrader's exchange), report (a
package: course, tables, mistakes, page, command; the instructor's page after a run, from the stored verdicts)
and similarity (its similar submissions).
"""

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent  # the course's repository: lib/, data/, source/, nbgrader_config.py
