"""docs/checks-api.md is what docs/make_checks_api.py writes from the code's docstrings: a changed docstring and a
page not written again fail here, saying what to run."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

from autograder import checks, validate

REPOSITORY = Path(__file__).resolve().parents[2]
SCRIPT = REPOSITORY / "docs" / "make_checks_api.py"


def generator():
    spec = importlib.util.spec_from_file_location("make_checks_api", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_page_is_what_the_docstrings_make():
    made = generator().page()
    committed = (REPOSITORY / "docs" / "checks-api.md").read_text(encoding="utf-8")
    assert committed == made, "docs/checks-api.md is stale: run .venv/bin/python docs/make_checks_api.py"


def test_the_page_holds_each_docstring_and_what_runs_at_grading_time():
    made = generator().page()
    for thing in (checks.compare, checks.Args, checks.Check, checks.Call, checks.Outputs.value, checks.lazy):
        assert inspect.getdoc(thing) in made, thing
    assert "### `compare(check_id, reference, *, points, inputs, mistakes=None, properties=None" in made
    assert "only the\nnotebook's answer cells" in made and "What a graded function may receive" in made
    assert all(f"| `{kind}` | {said} |" in made for kind, said in validate.KINDS.items())


def test_a_stale_page_is_refused_by_check_and_written_again(tmp_path, monkeypatch, capsys):
    module = generator()
    page = tmp_path / "checks-api.md"
    page.write_text("# an old page\n")
    monkeypatch.setattr(module, "PAGE", page)
    assert module.main(["--check"]) == 1
    assert "is stale: run .venv/bin/python docs/make_checks_api.py" in capsys.readouterr().err
    assert page.read_text() == "# an old page\n"
    assert module.main([]) == 0 and module.main(["--check"]) == 0
    assert page.read_text() == module.page()
