"""The course's grading engine, read as the path a class's work takes, from a class to one check:

- classroom: the command line (a class of uploads) over course, the library: the course folder, the gradebook,
  release, collection (uploads), grading, grades.csv and checks.csv, the table (table) and the report;
- grading: the class engine, one module per job: dispatch (Dask, the recorders, grade_class), worker (one
  submission), ledger (journal, record, repair, the one atomic write), gradebook (the writer), lock (CourseLock),
  task (what travels between them), forward (the forward cache an assignment declares);
- pipeline: the chain of nbgrader steps, assembled once as a traitlets Config and handed to nbgrader in-process;
- notebook_grading: those steps for one notebook: cells restored, student_kernel runs it, verdicts in;
- answer_grading: one notebook's answers -> answer_runner calls the student's functions -> each check judged
  into a verdicts.Verdict (answer_session makes the calls, answer_process speaks to the runner and watches it,
  answer_sandbox is its view, answer_budget its time budget, stand_ins what the grader computes for it);
- checks: one check -> its calls and properties; an assignment's own are source/<assignment>/checks.py.

Beside the path: settings (the course's settings, read in one place: the gradebook, the limits, the instant
checks' policy and the due date; course_config writes what the project generates for a course, policy holds the
policy's traits), assignments (an assignment found by name), verdicts (a verdict as data, stored in its check cell,
read by every page), sanitise (student HTML and markdown made inert when graded), students (the safe id rule),
sandbox (bubblewrap and limits for student code), model (the store's model, measured for the checks), export
(ChecksExport, one CSV row per student per check), feedback (the feedback page: its exporter, steps and template,
and its regeneration after hand grading), formgrader (nbgrader's Formgrader on a course folder), report (a package:
course, tables, mistakes, page, command; the instructor's page after a run) and similarity (its similar
submissions). On a hub: hub (the course on JupyterHub, an account per student), collect (Collect that takes only
what each student made), bridge (a student's server's one door out, to the proxy), attempts, instant and service
(each Submit checked within seconds, a JupyterHub service). For the school: lms (Canvas and Moodle gradebook files)
and lti (an LTI 1.3 tool: launch, deep linking, scores back).
"""

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent  # the course's repository: lib/, data/, source/, nbgrader_config.py
