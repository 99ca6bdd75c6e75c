"""The class engine: a class of submissions graded in parallel into one nbgrader gradebook, one module per job.

- task: what travels between the coordinator and a worker (Assignment, Submission, Outcome) and GradingError;
- dispatch: Dask (a local cluster or a scheduler), the recorders, ``grade_class`` with its ``ClassOptions``;
- worker: one submission graded in a private folder by nbgrader's Autograde and GenerateFeedback;
- ledger: the journal, ``record`` and ``repair`` (a run killed at any moment loses no finished grade and leaves
  no half-written one), its files written whole or not at all (autograder.files);
- gradebook: the writer (GradebookWriter: one transaction per outcome, SQLite or PostgreSQL);
- lock: CourseLock, one grading run per course at a time;
- forward: the class's forward cache, built from the texts an assignment's checks.py declares.

The chain of nbgrader steps a worker runs is assembled in autograder.notebook.pipeline. This package's own module
imports nothing (autograder.notebook.pipeline imports the feedback, which reads grading.task): import the modules, e.g.
``from autograder.grading.dispatch import ClassOptions, grade_class``.
"""
