"""Validate an assignment before any student sees it: ``python -m autograder.validate --source DIR --assignment NAME``.

    from autograder.validate import validate_assignment
    report = validate_assignment(source=Path("source"), assignment="attention", seeds=5)
    report.ok, [finding.kind for finding in report.findings], print(report.text())

What it grades is what a class run grades, by the fastest real entry point: the answer cells of a notebook in the
sandboxed runner, judged by the assignment's checks.py (autograder.answers.grading.grade_seeds: every seed's calls
in one runner, no kernel). It grades the solution (the source notebook as written), the blank release (the answer
cells as nbgrader's generate_assignment leaves them: the course's stubs), and each named wrong version, under
``seeds`` seeds, and reads the notebook, checks.py and the release. Each authoring mistake is a ``Finding``: a
stable ``kind`` (KINDS), the place (a cell's grade id and line, or checks.py:line) and a message saying what to fix.

Wrong versions are declared in checks.py (``WRONG_VERSIONS``) or handed as notebooks (``--wrong DIR``):

    WRONG_VERSIONS = {
        "forgets eps": {
            "answers": {"rms_norm": "def rms_norm(x, gain, eps=1e-5):\\n    return x / np.sqrt((x**2).mean(-1))"},
            "loses": {"check_rms_norm": 2},  # exactly the points it loses; every other check keeps its own
        },
    }

``answers`` replaces the solution's answer cell that defines each function; ``loses`` is {check id: points lost}
(or a list of check ids: each must lose some points); none given: it must lose some points in all. A notebook of
``--wrong DIR`` is graded as it is; its metadata may say what it loses: ``{"autograder": {"loses": {...}}}``.

``check_before_grading(folder)`` is the cheap part (the notebook against checks.py, hidden-test code, one seed of
the solution): the class run (autograder.course.run) calls it before any student is graded, so an instructor's
mistake stops the run with what to fix instead of costing students points.

The package, one module per family of findings, each handing its Findings to ``assignment``, which reads them into
one Report: ``findings`` (KINDS, Finding, Report, AuthoringError), ``notebook`` (the notebook against checks.py, the
solution run in a kernel), ``release`` (what the release must not hold), ``grading`` (the solution, the blank release
and the wrong versions graded under every seed), ``mistakes`` (the named mistakes of compare checks), ``references``
(the reference on the checks' inputs, and its mutants), ``assignment`` (validate_assignment, check_before_grading) and
``command`` (``python -m autograder.validate``, run by ``__main__``).
"""

from autograder.answers.grading import answer_sources
from autograder.validate.assignment import DEFAULT_SEEDS, MUTANT_SEEDS, check_before_grading, validate_assignment
from autograder.validate.command import main
from autograder.validate.findings import BEFORE_GRADING, KINDS, AuthoringError, Finding, Report
from autograder.validate.grading import replaced
from autograder.validate.references import mutant_findings

__all__ = [
    "BEFORE_GRADING",
    "DEFAULT_SEEDS",
    "KINDS",
    "MUTANT_SEEDS",
    "AuthoringError",
    "Finding",
    "Report",
    "answer_sources",
    "check_before_grading",
    "main",
    "mutant_findings",
    "replaced",
    "validate_assignment",
]
