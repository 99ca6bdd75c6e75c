"""What decides "regrade everyone": the files the grading chain imports, found by following its imports."""

from __future__ import annotations

from autograder.grading import task


def relative(paths) -> set[str]:
    return {path.relative_to(task.REPOSITORY).as_posix() for path in paths}


def test_the_chain_s_modules_decide_a_grade_and_the_class_command_s_do_not():
    files = relative(task.grader_files())
    for needed in (
        "autograder/grading/worker.py",
        "autograder/notebook/pipeline.py",
        "autograder/notebook/autograde.py",
        "autograder/answers/grading.py",
        "autograder/answers/runner.py",  # run as `python -m`: named in a string, not imported
        "autograder/checks.py",
        "autograder/verdicts.py",
        "autograder/sandbox.py",
        "autograder/model.py",  # imported by the course's checks.py, not by the engine
        "autograder/assignments.py",  # checks.py loads its reference.py with it
        "lib/transformer.py",
        "nbgrader_config.py",
    ):
        assert needed in files, needed
    for not_needed in ("autograder/course/classroom.py", "autograder/report/similarity.py", "autograder/lms/files.py"):
        assert not_needed not in files, not_needed


def test_a_module_the_chain_starts_to_import_joins_the_fingerprint(tmp_path, monkeypatch):
    root = tmp_path / "repository"
    for package in ("grading", "notebook"):
        (root / "autograder" / package).mkdir(parents=True)
        (root / "autograder" / package / "__init__.py").write_text("")
    (root / "lib").mkdir()
    (root / "nbgrader_config.py").write_text("")
    (root / "autograder" / "__init__.py").write_text("")
    (root / "autograder" / "grading" / "worker.py").write_text("from autograder.notebook import pipeline\n")
    pipeline = root / "autograder" / "notebook" / "pipeline.py"
    pipeline.write_text("def chain():\n    return 1\n")
    (root / "autograder" / "new_step.py").write_text("STEP = 1\n")
    (root / "autograder" / "report.py").write_text("from autograder.notebook import pipeline\n")
    monkeypatch.setattr(task, "REPOSITORY", root)
    before = task.grader_fingerprint()
    assert relative(task.grader_files()) == {
        "autograder/__init__.py",
        "autograder/grading/__init__.py",
        "autograder/grading/worker.py",
        "autograder/notebook/__init__.py",
        "autograder/notebook/pipeline.py",
        "nbgrader_config.py",
    }
    (root / "autograder" / "report.py").write_text("from autograder.notebook import pipeline  # changed\n")
    assert task.grader_fingerprint() == before, "a module outside the chain changed the fingerprint"

    pipeline.write_text("def chain():\n    from autograder.new_step import STEP\n")
    assert "autograder/new_step.py" in relative(task.grader_files())
    changed = task.grader_fingerprint()
    assert changed != before
    (root / "autograder" / "new_step.py").write_text("STEP = 2\n")
    assert task.grader_fingerprint() != changed, "a change to the newly imported module did not count"
