"""The course's grading engine: hidden checks judged outside the student's kernel.

- operations: the graded functions, lib's reference of each, and what each may call (isolation);
- runner: the separate process that runs a student's answer cells and calls their functions;
- checks: one check per graded test cell (grade_id), drawing inputs and judging properties with lib;
- grade: grade_answers(sources) -> {check id: Verdict}, and answer_sources(notebook);
- preprocessor: ExternalVerdicts, which writes the verdicts into nbgrader's autograded notebook;
- execute: SurvivingExecute, nbgrader's Execute that survives a student's kernel dying;
- model: what the checks need from the store's model (recorded statistics, patterns, logits);
- sandbox, kernel: bubblewrap and limits around the runner and the student's kernel;
- grading: a class on Dask, one task per submission, each result recorded atomically in the gradebook;
- classroom: the whole pipeline from the command line; export: ChecksExport, one CSV row per student per check.
"""
