"""The course's grading engine, a package per stage, read as the path a class's work takes:

- course: the class command (classroom) over the library (run.grade_course): the course folder and its
  configuration (config), the uploads and students, nbgrader's release and export, grades.csv, the table;
- grading: the class engine: each submission a task on Dask (dispatch, worker), journalled (ledger), written to
  nbgrader's gradebook (gradebook), one run per course (lock), the class's forward cache (forward, recorded);
- notebook: one notebook through nbgrader: the chain of steps (pipeline), the student's kernel (kernel), verdicts
  written (autograde), content made inert (sanitise), the stubs, the feedback page;
- answers: the hidden checks' calls: the student's functions run in a sandboxed runner, judged here (grading);
- service: each Submit checked within seconds (instant, checkers; app is the JupyterHub service, command its command
  line);
- hub: the course on JupyterHub (launch, runtime, collect, bridge);
- report: the instructor's page after a run, with similar submissions (similarity);
- lms: the school's LMS: Canvas and Moodle files (files), the LTI 1.3 tool (lti).

Flat here, the ground floor every stage shares: checks (the check API of every assignment's checks.py), coverage
(the input classes every draw of a check covers), verdicts (a verdict as data, read by every page), settings (the
course's settings, read in one place) and policy (the instant checks' policy, part of them), assignments (an
assignment's folder: its checks and its reference), files (written whole or not at all), students (what a student id
may be), term (each student's own due date), attempts (each Submit and its verdicts), sandbox (what student code may
see and do) and model (the store's model, measured for the checks). Above the class engine: the package validate (an
assignment checked before any student sees it) and, flat, mutation (mutants of an assignment's reference, which
validate grades) and copies (the reference's statements found in a release). The order of the floors: the README's "The
floors", kept by tests/autograder/test_architecture.py.
"""

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent  # the course's repository: lib/, data/, source/, nbgrader_config.py
