"""nbgrader's Execute step, made to survive a student's kernel dying.

nbgrader's own Execute lets a dead kernel (``os._exit``, a segfault, the memory limit) abort the whole
submission: nothing is autograded and the command fails for the class. Here the cell that was running
gets an error output saying what happened and where, the cells after it are left unexecuted, and the
pipeline goes on, so the hidden checks (which run outside this kernel) still grade every answer.
"""

from __future__ import annotations

from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute


class SurvivingExecute(Execute):
    """Execute every cell; if the kernel dies, record it in that cell and stop executing."""

    def preprocess(self, nb, resources=None, km=None):
        self._died_at = None
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell, resources, index):
        if self._died_at is not None:
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError as error:
            self._died_at = index
            cell.setdefault("outputs", []).append(new_output(
                "error", ename="DeadKernelError",
                evalue=(f"the kernel died while running this cell ({error}); the cells after it were not run. "
                        "Look in this cell for os._exit, sys.exit in a loop, or an allocation that exhausts memory."),
                traceback=[],
            ))
            self.log.warning("kernel died in cell %d; the remaining cells were not executed", index)
            return cell, resources
