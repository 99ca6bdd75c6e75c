"""A student's first run: the release notebook, blank, run from a folder outside the repository.

Every unwritten function says its name and its section; a cell that needs one stops with that one line, not a
traceback through lib; the cells that need no student code (the model's heatmaps, the copy test) run and draw.
"""

import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
RELEASED = ROOT / "release" / "attention" / "attention.ipynb"
SECTIONS = {  # function -> the section that asks for it (the intro's points table)
    "softmax": 1,
    "attention": 1,
    "causal_mask": 2,
    "average_largest_weight": 3,
    "split_heads": 4,
    "join_heads": 4,
    "multi_head_attention": 4,
    "previous_token_weight": 7,
    "even_previous_weight": 7,
    "description_positions": 8,
    "far_back_weight": 8,
    "marker_weight": 8,
    "even_far_back_weight": 8,
    "even_marker_weight": 8,
    "safe_softmax": 9,
}
NEEDS = {  # a cell of the notebook -> the first unwritten function it calls
    "check_softmax": "softmax",
    "check_attention": "attention",
    "s1_run": "attention",
    "s2_run": "causal_mask",
    "check_masked_attention": "attention",
    "s3_run": "average_largest_weight",
    "s4_run": "multi_head_attention",
    "s5_drive": "attention",  # through lib.transformer.forward(ids, attention=attention)
    "s7_run": "previous_token_weight",
    "s8_run": "description_positions",
    "check_safe_softmax": "safe_softmax",
    "s9_run": "softmax",
}
MODEL_CELLS = [  # no student code: they run and draw on a blank notebook
    "s5_load",
    "s5_draw",
    "s6_run",
    "s6_heads_run",  # the heads zeroed, lib's experiment
    "s6_templated",
    "s6_try_heads_run",
    "s7_ablate_run",  # layers 1-2 zeroed: the strongest previous-token heads as recorded, not as the student's
]


def stub_line(function: str) -> str:
    return f'raise NotImplementedError("{function} is not written yet: write it in section {SECTIONS[function]}")'


def test_every_stub_names_its_function_and_section():
    cells = json.loads(RELEASED.read_text())["cells"]
    stubs = {}
    for cell in cells:
        if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution"):
            source = "".join(cell["source"])
            name = re.search(r"^def (\w+)", source, re.M).group(1)
            stubs[name] = source.splitlines()[-2:]
    assert sorted(stubs) == sorted(SECTIONS)
    for name, (comment, stub) in stubs.items():
        assert (comment.strip(), stub.strip()) == ("# YOUR CODE HERE", stub_line(name))


@pytest.fixture(scope="module")
def blank(tmp_path_factory):
    """The release notebook run top to bottom, every error let through, in a folder outside the repository."""
    folder = tmp_path_factory.mktemp("student")
    shutil.copy(RELEASED, folder / "attention.ipynb")
    shutil.copy(RELEASED.parent / "visible_checks.json", folder)  # released beside it: the check cells' numbers
    notebook = nbformat.read(folder / "attention.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, allow_errors=True, resources={"metadata": {"path": str(folder)}}).execute()
    return {cell.id: cell for cell in notebook.cells}


def errors(cell) -> list:
    return [output for output in cell.get("outputs", []) if output["output_type"] == "error"]


def test_a_cell_that_needs_an_unwritten_function_names_it_in_one_line(blank):
    for cell_id, function in NEEDS.items():
        (error,) = errors(blank[cell_id])
        message = f"{function} is not written yet: write it in section {SECTIONS[function]}"
        if error["ename"] != "NotImplementedError":  # a check cell blaming the unwritten callee first (lib.check)
            assert cell_id.startswith("check_") and error["ename"] in ("NotWrittenYet", "CheckFailed"), cell_id
            assert " is not written yet: fill in the cell under 'Write " in error["evalue"], cell_id
            assert len(error["traceback"]) == 1 and "Traceback" not in error["traceback"][0], cell_id
            continue
        assert error["evalue"] == message, cell_id
        assert error["traceback"] == [f"NotImplementedError: {message}"], cell_id  # no traceback through lib
    failing = sorted(cell_id for cell_id, cell in blank.items() if errors(cell))
    checks = sorted(cell_id for cell_id in blank if cell_id.startswith("check_"))
    assert failing == sorted(set(NEEDS) | set(checks))


def test_the_model_cells_run_and_draw_on_a_blank_notebook(blank):
    assert not errors(blank["setup"])
    assert "course library:" in blank["setup"].outputs[0]["text"]
    for cell_id in MODEL_CELLS:
        assert not errors(blank[cell_id]), cell_id
    pictures = {
        cell_id: sum("image/png" in output.get("data", {}) for output in blank[cell_id].outputs)
        for cell_id in MODEL_CELLS
    }
    assert pictures == {cell_id: 0 for cell_id in MODEL_CELLS} | {"s5_draw": 2, "s6_run": 1, "s6_heads_run": 1}
    text = "".join(output.get("text", "") for output in blank["s6_run"].outputs)
    assert re.search(r"name as sold\s+P\(cover\) = 0\.98", text), text


def test_without_the_course_library_the_setup_cell_says_to_install_it(tmp_path):
    """A kernel where `import lib` fails (here a stand-in package that raises it): one line, no traceback."""
    (tmp_path / "site" / "lib").mkdir(parents=True)
    (tmp_path / "site" / "lib" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'lib'\")\n")
    (setup,) = [cell for cell in nbformat.read(RELEASED, as_version=4).cells if cell.id == "setup"]
    notebook = nbformat.v4.new_notebook(cells=[setup])
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    NotebookClient(notebook, timeout=60, allow_errors=True).execute(cwd=str(tmp_path), env=environment)
    assert [(output["output_type"], output.get("name")) for output in setup.outputs] == [("stream", "stderr")]
    (line,) = setup.outputs[0]["text"].splitlines()
    assert "pip install" in line and "attention-course-lib" in line and "attention_course_lib-*.whl" in line


def test_a_cell_run_before_the_cells_it_needs_says_which_cell_to_run_in_one_line(tmp_path):
    """issue 35: in a fresh kernel with only the setup run, a demo that needs an earlier demo's variables says to run
    the cells above, and a call of a graded function whose cell was not run names that cell: one line, no traceback."""
    shutil.copy(RELEASED.parent / "visible_checks.json", tmp_path)
    cells = {cell.id: cell for cell in nbformat.read(RELEASED, as_version=4).cells}
    calls = nbformat.v4.new_code_cell("softmax(np.zeros(3))")
    unknown = nbformat.v4.new_code_cell("print(variable_no_cell_makes)")
    notebook = nbformat.v4.new_notebook(cells=[cells["setup"], cells["s2_run"], calls, unknown])
    NotebookClient(notebook, timeout=60, allow_errors=True).execute(cwd=str(tmp_path))
    (demo,) = errors(notebook.cells[1])
    assert demo["ename"] == "NameError" and len(demo["traceback"]) == 1
    assert demo["traceback"] == [  # section 2's demo needs causal_mask, whose cell was not run
        "NameError: causal_mask is not defined yet: run the cell under 'Write causal_mask(positions)' first, then this "
        "cell again"
    ]
    (graded,) = errors(notebook.cells[2])
    assert graded["traceback"] == [
        "NameError: softmax is not defined yet: run the cell under 'Write softmax(scores)' first, then this cell again"
    ]
    (other,) = errors(notebook.cells[3])
    assert other["traceback"][0].startswith("NameError: variable_no_cell_makes is not defined yet: an earlier cell")


def test_named_stubs_fill_the_function_and_where_it_is_asked_for():
    from autograder.notebook.stubs import NamedStubs

    def answer(name):
        source = f"def {name}(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION"
        metadata = {"nbgrader": {"solution": True, "grade": False, "grade_id": name, "schema_version": 3}}
        return nbformat.v4.new_code_cell(source, metadata=metadata)

    notebook = nbformat.v4.new_notebook(
        cells=[answer("first"), nbformat.v4.new_markdown_cell("## 3. Scaling"), answer("second")]
    )
    stubs = NamedStubs(code_stub={"python": '# YOUR CODE HERE\nraise NotImplementedError("{function}, {place}")'})
    stubbed, _ = stubs.preprocess(notebook, {})
    assert [cell.source.splitlines()[-1] for cell in stubbed.cells if cell.cell_type == "code"] == [
        '    raise NotImplementedError("first, this notebook")',
        '    raise NotImplementedError("second, section 3")',
    ]
    assert stubs.code_stub["python"].endswith('("{function}, {place}")')  # the template itself is kept
