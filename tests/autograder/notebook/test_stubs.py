"""autograder.notebook.stubs.NamedStubs alone, on in-memory notebooks: each answer cell's stub names the function the
cell defines and the section that asks for it, and the solution is gone."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.notebook.stubs import NamedStubs

PYTHON = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
STUB = 'raise NotImplementedError("{function} is not written yet: {place}")'


def answer(source: str):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False, "grade_id": "answer"}
    return cell


def solution(name: str) -> str:
    return f"### BEGIN SOLUTION\ndef {name}(x):\n    return 1\n### END SOLUTION\n"


def stubbed(*cells) -> list[str]:
    notebook, _ = NamedStubs(code_stub={"python": STUB}).preprocess(
        new_notebook(cells=list(cells), metadata=PYTHON), {}
    )
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def test_the_stub_names_the_function_and_its_section():
    [source] = stubbed(new_markdown_cell("## 2. The causal mask"), answer(solution("causal_mask")))
    assert "return 1" not in source and "BEGIN SOLUTION" not in source
    assert 'raise NotImplementedError("causal_mask is not written yet: section 2")' in source


def test_each_cell_gets_its_own_function_and_the_latest_section():
    sources = stubbed(
        answer(solution("softmax")),
        new_markdown_cell("## 3. Scaling\n\n## not a numbered heading"),
        answer(solution("scaled_scores")),
        new_markdown_cell("## 10. Heads"),
        answer(solution("split_heads")),
    )
    assert [source.split('"')[1] for source in sources] == [
        "softmax is not written yet: this notebook",  # before any numbered section
        "scaled_scores is not written yet: section 3",
        "split_heads is not written yet: section 10",
    ]


def test_a_cell_that_defines_no_function_says_this_cell():
    [source] = stubbed(answer("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n"))
    assert "this cell is not written yet: this notebook" in source


def test_the_configured_stub_is_left_as_it_was_for_the_next_notebook():
    step = NamedStubs(code_stub={"python": STUB})
    step.preprocess(new_notebook(cells=[answer(solution("softmax"))], metadata=PYTHON), {})
    assert step.code_stub == {"python": STUB}
