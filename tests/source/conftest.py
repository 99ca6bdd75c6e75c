"""The solved source notebook, run once per test session in a real Jupyter kernel (nbclient), the kernel kept.

tests/source/test_rerun.py re-runs its demo cells in that kernel after the last check; tests/source/test_claims.py
reads what its cells printed and holds the notebook's sentences about the model to those numbers.
"""

from __future__ import annotations

import copy
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

SOURCE = Path(__file__).resolve().parents[2] / "source" / "attention" / "attention.ipynb"


@dataclass
class Solved:
    """The source notebook after one run from the top: its cells with their first outputs, and the live kernel."""

    notebook: nbformat.NotebookNode
    client: NotebookClient
    first: dict  # cell id -> that cell's outputs after the first run (a copy)

    def cell(self, cell_id: str):
        return next(cell for cell in self.notebook.cells if cell.id == cell_id)

    def printed(self, cell_id: str) -> str:
        """What a cell printed on its first run (stdout)."""
        return "".join(out.get("text", "") for out in self.first[cell_id] if out.get("name") == "stdout")

    def markdown(self, cell_id: str) -> str:
        """A markdown cell's text, its line breaks as spaces (a sentence may be wrapped anywhere)."""
        return " ".join(self.cell(cell_id).source.split())

    def run(self, cell) -> list:
        """Run ``cell`` (a cell of the notebook, or a new one) in the kernel again; its new outputs. (nbclient
        stores an executed cell in its own notebook at the index given: that copy is scratch after the first run.)"""
        cell = copy.deepcopy(cell)
        self.client.allow_errors = True  # after the first run an error is an output like any other, to compare
        self.client.execute_cell(cell, 0)
        return cell.outputs


@pytest.fixture(scope="session")
def solved(tmp_path_factory) -> Solved:
    """The source notebook (its solutions in place) run top to bottom, from a folder outside the repository."""
    notebook = nbformat.read(SOURCE, as_version=4)
    folder = tmp_path_factory.mktemp("solved")
    shutil.copy(SOURCE.parent / "visible_checks.json", folder)  # the check cells' recorded values (lib.check)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}})
    with client.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "code":
                client.execute_cell(cell, index)  # a failing cell raises CellExecutionError: the solution is broken
        notebook = copy.deepcopy(notebook)
        first = {cell.id: cell.get("outputs", []) for cell in notebook.cells}
        yield Solved(notebook, client, first)
