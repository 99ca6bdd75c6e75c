"""The course's grading engine, read as the path a class's work takes, from a class to one check:

- classroom: the command line (a class of uploads) over course, the library: the course folder, the gradebook,
  release, collection (uploads), grading, grades.csv and checks.csv, the table (table) and the report;
- grading: the class engine, one module per job: dispatch (Dask, the recorders, grade_class), worker (one
  submission), ledger (journal, record, repair, the one atomic write), gradebook (the writer), lock (CourseLock),
  task (what travels between them), forward (the forward cache an assignment declares);
- pipeline: the chain of nbgrader steps, assembled once as a traitlets Config and handed to nbgrader in-process;
- notebook_grading: those steps for one notebook: cells restored, student_kernel runs it, verdicts in;
- answer_grading: one notebook's answers -> answer_runner calls the student's functions -> each check judged;
- checks: one check -> its calls and properties; an assignment's own are source/<assignment>/checks.py.

Beside the path: assignments (an assignment found by name), sandbox (bubblewrap and limits for student
code), model (the store's model, measured for the checks), export (ChecksExport, one CSV row per student
per check), feedback (the feedback page's template and its regeneration after hand grading), formgrader
(nbgrader's Formgrader on a course folder), hub (the course on JupyterHub with nbgrader's exchange), report and
similarity (the instructor's page after a run).
"""

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent  # the course's repository: lib/, data/, source/, nbgrader_config.py
