"""nbgrader's Execute step, made to survive whatever a student's notebook does to its kernel.

- The kernel runs in a sandbox, under limits (autograder.kernel.SandboxedKernelManager).
- A kernel that dies (``os._exit``, a segfault, the memory or process limit) no longer aborts the whole
  submission, as nbgrader's own Execute does: the cell that was running gets an error output saying what
  happened, the cells after it are left unexecuted, and the pipeline goes on, so the hidden checks (which
  run outside this kernel) still grade every answer.
- Output is capped while it arrives (``max_cell_output``, ``max_output`` characters), so a notebook that
  prints gigabytes cannot fill the grader's memory; the cap is noted in the cell.
- The whole notebook has a time limit (``notebook_timeout``) besides nbgrader's per-cell ``timeout``.
"""

from __future__ import annotations

import json
import time

from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Integer

from autograder.kernel import SandboxedKernelManager


def message_size(msg: dict) -> int:
    """Characters an output message would add to the notebook."""
    content = msg.get("content", {})
    if msg.get("msg_type") == "stream":
        return len(content.get("text", ""))
    return len(json.dumps(content.get("data", content), default=str))


class SurvivingExecute(Execute):
    """Execute every cell in a sandboxed kernel; if the kernel dies, record it in that cell and stop executing."""

    notebook_timeout = Integer(900, help="Seconds for the whole notebook; the cells after that are not run").tag(config=True)
    max_cell_output = Integer(2_000_000, help="Characters of output kept per cell").tag(config=True)
    max_output = Integer(20_000_000, help="Characters of output kept for the whole notebook").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)
        self.timeout_func = self._cell_timeout

    def preprocess(self, nb, resources=None, km=None):
        self._died_at = None
        self._out_of_time = False
        self._started = time.monotonic()
        self._output_size = {}
        self._capped = set()
        return super().preprocess(nb, resources, km)

    def _cell_timeout(self, cell) -> int:
        """The per-cell limit, or what is left of the notebook's limit if that is shorter (at least 1 s)."""
        left = self.notebook_timeout - (time.monotonic() - self._started)
        return max(1, int(min(self.timeout or left, left)))

    def preprocess_cell(self, cell, resources, index):
        if self._died_at is not None:
            return cell, resources
        if time.monotonic() - self._started >= self.notebook_timeout:
            if not self._out_of_time and cell.cell_type == "code":
                self._out_of_time = True
                cell.setdefault("outputs", []).append(new_output(
                    "error", ename="NotebookTimeoutError", traceback=[],
                    evalue=f"the notebook ran past its limit of {self.notebook_timeout} s; this cell and the ones after it were not run"))
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError as error:
            self._died_at = index
            reason = getattr(self.km, "death_reason", None) or (
                f"the kernel died while running this cell ({error}). Look in this cell for os._exit, sys.exit "
                "in a loop, or an allocation that exhausts memory")
            cell.setdefault("outputs", []).append(new_output(
                "error", ename="DeadKernelError", traceback=[],
                evalue=f"{reason}; the cells after it were not run."))
            self.log.warning("kernel died in cell %d (%s); the remaining cells were not executed", index, reason)
            return cell, resources

    def output(self, outs, msg, display_id, cell_index):
        """Keep an output only while the cell's and the notebook's output stay under their caps."""
        if msg.get("msg_type") in ("stream", "display_data", "execute_result", "error", "update_display_data"):
            size = message_size(msg)
            total = sum(self._output_size.values())
            cell_size = self._output_size.get(cell_index, 0)
            if cell_size + size > self.max_cell_output or total + size > self.max_output:
                if cell_index not in self._capped:
                    self._capped.add(cell_index)
                    note = new_output("stream", name="stdout", text=(
                        f"\n[output cut: past {self.max_cell_output:,} characters for one cell or "
                        f"{self.max_output:,} for the notebook; the rest was dropped while grading]\n"))
                    outs.append(note)
                return None
            self._output_size[cell_index] = cell_size + size
        return super().output(outs, msg, display_id, cell_index)
