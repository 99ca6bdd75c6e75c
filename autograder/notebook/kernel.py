"""The student's kernel: it runs the whole notebook, in a sandbox (autograder.sandbox), watched while it runs.

SandboxedKernelManager is jupyter_client's AsyncKernelManager with three changes:

- the kernel talks over ZeroMQ's ipc transport (files in a private folder), not TCP: a kernel in a
  network namespace of its own cannot reach the grader's loopback, and files can be bound in;
- the kernel command runs in bubblewrap (when it works here), with the notebook's folder writable,
  lib/ and data/ readable in the course folder above the notebook, that folder first on the kernel's
  PYTHONPATH (the setup cell's ``import lib`` finds the course's lib there), and nothing else of the
  course, the repository or the home folder in existence; and under limits (memory, file size, processes);
- a watchdog thread counts the kernel's processes: past KERNEL_PROCESSES (a fork bomb) it kills the
  whole sandbox and records it in ``stopped_for`` (verdicts.PROCESSES), which SurvivingExecute records; and while a
  cell runs it watches whether the kernel works: a cell that waits ``idle_limit`` seconds without computing or
  printing (no thread of the sandbox runnable or in disk wait, no CPU second gained, no output: a sleep, a lock,
  input) gets the sandbox killed too (verdicts.WAITED). A busy machine's load moves none of that: a thread waiting
  for a core is runnable.

SurvivingExecute is nbgrader's Execute step made to survive whatever a student's notebook does to its kernel:
- a kernel that dies (``os._exit``, a segfault, the memory or process limit) no longer aborts the whole
  submission, as nbgrader's own Execute does: the cell that was running gets an error output saying what
  happened, the cells after it are left unexecuted, and the pipeline goes on, so the hidden checks (which
  run outside this kernel) still grade every answer;
- output is capped while it arrives (``max_cell_output``, ``max_output`` characters), so a notebook that
  prints gigabytes cannot fill the grader's memory; the cap is noted in the cell;
- the whole notebook has a wall-clock budget (``notebook_timeout``, timeouts.NOTEBOOK_BUDGET seconds unless the
  course sets ``c.SurvivingExecute.notebook_timeout``), counted from its first cell (the kernel's start is the
  grader's), besides nbgrader's per-cell ``timeout``: each cell gets at most what is left of it, and once it is
  spent the cell running is interrupted and no later cell runs. No student extends it: a cell that sleeps is cut
  when the budget is spent, one that swallows the interrupt stops the notebook there, and the grader then stops
  the kernel;
- a cell that waits without computing or printing is stopped after ``idle_timeout`` seconds (timeouts.IDLE_TIMEOUT
  unless the course sets ``c.SurvivingExecute.idle_timeout``; 0: never), and no later cell runs: a notebook that
  sleeps costs the class that much, not its whole budget (benchmarks/sleepers.py).

How the kernel ended, when it ended early, is data (autograder.verdicts.KernelEnd: a cell's limit, the notebook's
budget, an exit, a signal, memory, the process limit): a list in the notebook's metadata (verdicts.KERNEL), which
the feedback page, the class's table and the report read; the cell's error output says the same in words
(KernelEnd.text). Whatever a student's notebook held under that key is dropped first.

The class's forward cache (autograder.grading.forward.write_forward_cache) is given as ``forward_cache`` in
nbgrader's configuration (autograder.notebook.pipeline sets it for each private folder's chain), or else taken from the
grader's ATTENTION_FORWARD_CACHE; the kernel sees it read-only at CACHE_INSIDE, its variable names that, and the
kernel runs the cache's start.py when it starts (autograder.grading.recorded: lib's forward reads the cache).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Float, Integer, Unicode

from autograder import sandbox, verdicts
from autograder.answers.process import computing, killed_by, process_cpu, signal_name
from autograder.timeouts import IDLE_TIMEOUT, NOTEBOOK_BUDGET
from autograder.verdicts import KernelEnd

FORWARD_CACHE = "ATTENTION_FORWARD_CACHE"  # grading.recorded.FORWARD_CACHE (lib, and NumPy, not imported here)
CACHE_INSIDE = "/run/attention/forward"  # where the class's forward cache (a folder) appears in the sandbox
WATCH_EVERY = 0.2  # seconds between two counts of the kernel's processes


def course_root(folder: Path) -> Path | None:
    """The course folder of a notebook in ``folder``: ``folder`` or the first one above it holding lib/transformer.py
    (a course made by autograder.course.classroom, or a private grading folder, links the grader's lib/ there)."""
    for candidate in [folder, *folder.parents]:
        if (candidate / "lib" / "transformer.py").exists():
            return candidate
    return None


def kernel_sandbox(cwd: Path, private: Path, forward_cache: str | None = None) -> sandbox.Sandbox:
    """The kernel's view: its notebook folder and its private folder writable, lib/ and data/ readable (and
    the class's forward cache, when the grader made one: grading.forward.write_forward_cache)."""
    readable = {CACHE_INSIDE: forward_cache} if forward_cache and os.path.exists(forward_cache) else {}
    root = course_root(cwd)
    if root is not None:
        library = (root / "lib").resolve()
        readable[str(root / "lib")] = str(library)
        if (library.parent / "data").is_dir():  # lib reads the store and its model from ../data
            readable[str(root / "data")] = str(library.parent / "data")
    return sandbox.Sandbox(writable=(cwd, private), readable=readable, cwd=cwd)


def kernel_environment(
    private: Path, root: Path | None, view: sandbox.Sandbox, forward_cache: str | None, spec_env: dict | None = None
) -> dict[str, str]:
    """The kernel's whole environment: sandbox.student_environment's allow-list, and on purpose

    - PYTHONPATH: the course folder (``root``), so the setup cell's ``import lib`` finds the course's lib
      (bound read-only there by kernel_sandbox); the grader's own PYTHONPATH is not passed on;
    - MPLCONFIGDIR in the private folder; MPLBACKEND left unset, so ipykernel's inline backend puts plots
      in the notebook and the feedback;
    - ATTENTION_FORWARD_CACHE when the class has a forward cache (where the kernel sees it);
    - the kernel spec's own ``env`` (the instructor's configuration of the kernel, not the grader's shell).

    jupyter_client's launcher adds JPY_PARENT_PID. Nothing else of the grader's environment is copied.
    """
    extra = {"MPLCONFIGDIR": str(private / "matplotlib")}
    if root is not None:
        extra["PYTHONPATH"] = str(root)
    if CACHE_INSIDE in view.readable:  # inside the sandbox at CACHE_INSIDE, not at its path outside
        extra[FORWARD_CACHE] = CACHE_INSIDE if sandbox.bubblewrap() is not None else forward_cache
    return {**{str(k): str(v) for k, v in (spec_env or {}).items()}, **sandbox.student_environment(private, **extra)}


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel in a sandbox, over ipc, with a process watchdog (see the module's docstring)."""

    forward_cache = Unicode(
        None,
        allow_none=True,
        help=(
            "the class's forward cache (a folder) for the kernel to read; default: the grader's ATTENTION_FORWARD_CACHE"
        ),
    ).tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.private = Path(tempfile.mkdtemp(prefix="attention-kernel-"))
        self.transport = "ipc"
        self.ip = str(self.private / "ipc")
        self.connection_file = str(self.private / "connection.json")
        self.stopped_for: str | None = None  # verdicts.PROCESSES or WAITED when the watchdog stopped the kernel
        self._watching = threading.Event()
        self.idle_limit = 0.0  # seconds a cell may wait without computing or printing (0: no limit)
        self._cell_running = False  # set by SurvivingExecute while a code cell runs
        self._quiet_since: float | None = None  # when the running cell was last seen working

    def cell_began(self, idle_limit: float) -> None:
        """A code cell starts: from now on it may wait ``idle_limit`` seconds at a time (0: no limit)."""
        self.idle_limit, self._quiet_since, self._cell_running = idle_limit, None, True

    def cell_ended(self) -> None:
        self._cell_running, self._quiet_since = False, None

    def heard(self) -> None:
        """The running cell printed or showed something: it is not waiting."""
        self._quiet_since = None

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        cwd = Path(kw.get("cwd") or os.getcwd()).resolve()
        given = dict(kw.get("env") or os.environ)  # the grader's: read for the forward cache only, never passed on
        forward_cache = self.forward_cache or given.get(FORWARD_CACHE)
        view = kernel_sandbox(cwd, self.private, forward_cache)
        kw["env"] = kernel_environment(self.private, course_root(cwd), view, forward_cache, self.kernel_spec.env)
        if FORWARD_CACHE in kw["env"]:  # the kernel's first act: lib's forward reads the cache (grading.recorded)
            kernel_cmd = [*kernel_cmd, f"--IPKernelApp.exec_files={kw['env'][FORWARD_CACHE]}/start.py"]
        inner = sandbox.limited(list(kernel_cmd), sandbox.STUDENT_MEMORY, sandbox.STUDENT_FILES, sandbox.PROCESS_CAP)
        if sandbox.bubblewrap() is not None:
            # In its own process namespace the kernel's parent is bwrap's pid 1: ipykernel's parent poller
            # (JPY_PARENT_PID, set by the launcher) would take that for an orphaning and quit at once. With
            # 1 it polls nothing; --die-with-parent does that poller's job.
            inner = ["/usr/bin/env", "JPY_PARENT_PID=1", *inner]
            # A SIGINT to the process group would also reach bwrap, which dies of it (and the kernel with it):
            # interrupt with a message on the control channel instead; the kernel then signals itself.
            self.kernel_spec.interrupt_mode = "message"
        command = sandbox.command(inner, view)
        await super()._async_launch_kernel(command, **kw)
        process = getattr(self.provisioner, "process", None)
        if process is not None:
            self._watching.set()
            threading.Thread(target=self._watch, args=(process.pid,), daemon=True, name="kernel-watchdog").start()

    def _watch(self, pid: int):
        """Kill the kernel's whole sandbox when it runs more than KERNEL_PROCESSES processes, or when the cell that
        runs has waited ``idle_limit`` seconds without computing or printing."""
        used = 0.0
        while self._watching.is_set():
            try:
                os.kill(pid, 0)
            except OSError:
                return
            below = sandbox.descendants(pid)
            if len(below) > sandbox.KERNEL_PROCESSES + 3:  # bwrap's own two processes, the limits one-liner's exec
                self._kill(verdicts.PROCESSES, [pid, *below])
                return
            if self._cell_running and self.idle_limit:  # the threads' states and CPU read only while they matter
                tree = [pid, *below]
                cpu = sum(process_cpu(member) for member in tree)
                working, used = computing(tree) or cpu > used, max(cpu, used)
                now = time.monotonic()
                if working:
                    self._quiet_since = None
                elif self._quiet_since is None:
                    self._quiet_since = now
                elif now - self._quiet_since >= self.idle_limit:
                    self._kill(verdicts.WAITED, tree)
                    return
            time.sleep(WATCH_EVERY)

    def _kill(self, why: str, processes: list[int]) -> None:
        self.stopped_for = why
        for target in processes:
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass

    async def _async_shutdown_kernel(self, now: bool = False, restart: bool = False):
        self._watching.clear()
        await super()._async_shutdown_kernel(now=now, restart=restart)

    async def _async_cleanup_resources(self, restart: bool = False):
        """The last step of a shutdown, and all nbclient does for a kernel that is already dead."""
        try:
            await super()._async_cleanup_resources(restart=restart)
        finally:
            if not restart:  # a restart launches again in the same folder (its connection file, its ipc sockets)
                shutil.rmtree(self.private, ignore_errors=True)

    # AsyncKernelManager binds these names to KernelManager's own coroutines, not to a subclass's overrides: without
    # these lines nbclient never reached the two methods above, and every kernel left its private folder behind
    shutdown_kernel = _async_shutdown_kernel
    cleanup_resources = _async_cleanup_resources


# --- nbgrader's Execute, with that kernel -----------------------------------------------------------


def message_size(msg: dict) -> int:
    """Characters an output message would add to the notebook."""
    content = msg.get("content", {})
    if msg.get("msg_type") == "stream":
        return len(content.get("text", ""))
    return len(json.dumps(content.get("data", content), default=str))


def death(km, index: int) -> KernelEnd:
    """How the kernel of ``km`` died while it ran cell ``index`` (from 0): stopped by the watchdog, else its
    process's exit status (a signal: SIGKILL from the system is taken for its memory), else not known."""
    cell, stopped_for = index + 1, getattr(km, "stopped_for", None)
    if stopped_for == verdicts.PROCESSES:
        return KernelEnd(verdicts.PROCESSES, cell, limit=sandbox.KERNEL_PROCESSES)
    if stopped_for == verdicts.WAITED:
        return KernelEnd(verdicts.WAITED, cell, limit=km.idle_limit)
    process = getattr(getattr(km, "provisioner", None), "process", None)
    try:
        code = process.wait(timeout=2) if process is not None else None
    except Exception:  # noqa: BLE001 - still running, or not a Popen: how it died is not known
        code = None
    killed = killed_by(code, wrapped=sandbox.bubblewrap() is not None)
    if killed is not None:
        name = signal_name(killed)
        return KernelEnd(verdicts.MEMORY if name == "SIGKILL" else verdicts.SIGNAL, cell, signal=name)
    if code is not None:
        return KernelEnd(verdicts.EXITED, cell, code=code)
    return KernelEnd(verdicts.DIED, cell)


class SurvivingExecute(Execute):
    """Execute every cell in a sandboxed kernel within the notebook's budget; if the kernel dies, record how in
    that cell and stop executing. ``ends``: how the run ended early, each a KernelEnd (also in the notebook's
    metadata, verdicts.KERNEL)."""

    notebook_timeout = Integer(
        NOTEBOOK_BUDGET, help="The notebook's wall-clock budget in seconds, every cell together; no cell runs after it"
    ).tag(config=True)
    idle_timeout = Float(
        IDLE_TIMEOUT,
        help="Seconds a cell may wait without computing or printing before the kernel is stopped (0: never)",
    ).tag(config=True)
    max_cell_output = Integer(2_000_000, help="Characters of output kept per cell").tag(config=True)
    max_output = Integer(20_000_000, help="Characters of output kept for the whole notebook").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)
        self.timeout_func = self._cell_timeout

    def preprocess(self, nb, resources=None, km=None):
        nb.metadata.pop(verdicts.KERNEL, None)  # only what this step records, never the student's own
        self.ends: list[KernelEnd] = []
        self._stopped = False  # the kernel died or the budget is spent: no cell runs any more
        self._started = None  # when the first cell started: the kernel's start (the grader's) is not the notebook's
        self._output_size = {}
        self._capped = set()
        try:
            return super().preprocess(nb, resources, km)
        finally:
            nb.metadata[verdicts.KERNEL] = [end.to_dict() for end in self.ends]

    def _left(self) -> float:
        if self._started is None:
            self._started = time.monotonic()
        return self.notebook_timeout - (time.monotonic() - self._started)

    def _cell_timeout(self, cell) -> int:
        """The per-cell limit, or what is left of the notebook's budget if that is shorter (at least 1 s)."""
        left = self._left()
        self._budget_binds = not self.timeout or left <= self.timeout  # the budget's remainder is the cell's limit
        return max(1, int(min(self.timeout or left, left)))

    def _end(self, cell, end: KernelEnd, ename: str) -> None:
        """Record ``end``, and say it in ``cell`` (in place of nbclient's own timeout output, when it wrote one)."""
        self.ends.append(end)
        outputs = cell.setdefault("outputs", [])
        outputs[:] = [output for output in outputs if output.get("ename") != "CellTimeoutError"]
        outputs.append(new_output("error", ename=ename, traceback=[], evalue=end.text()))

    def preprocess_cell(self, cell, resources, index):
        if self._stopped:
            return cell, resources
        if self._left() <= 0:
            if cell.cell_type == "code":
                self._stopped = True
                self._end(
                    cell, KernelEnd(verdicts.BUDGET, index + 1, limit=self.notebook_timeout), "NotebookTimeoutError"
                )
            return cell, resources
        self._timed_out, self._budget_binds = None, False
        watched = cell.cell_type == "code" and hasattr(self.km, "cell_began")  # the sandboxed kernel's watchdog
        if watched:
            self.km.cell_began(self.idle_timeout)
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._stopped = True
            end = death(self.km, index)
            self._end(cell, end, "DeadKernelError")
            self.log.warning("kernel died in cell %d (%s); the remaining cells were not executed", index, end.kind)
            return cell, resources
        except CellTimeoutError:  # interrupted at its limit, it went on (nbclient waited for its end in vain)
            self._stopped = True
            limit = self.notebook_timeout if self._budget_binds else self._timed_out
            kind = verdicts.BUDGET if self._budget_binds else verdicts.STUCK
            self._end(cell, KernelEnd(kind, index + 1, limit=limit), "CellTimeoutError")
            return cell, resources
        finally:
            if watched:
                self.km.cell_ended()
        if self._timed_out is not None:
            if self._budget_binds:  # the budget's remainder cut it, not the cell's own limit
                self._stopped = True
                self._end(
                    cell, KernelEnd(verdicts.BUDGET, index + 1, limit=self.notebook_timeout), "NotebookTimeoutError"
                )
            else:
                self._end(cell, KernelEnd(verdicts.CELL_TIME, index + 1, limit=self._timed_out), "CellTimeoutError")
        return cell, resources

    async def _async_handle_timeout(self, timeout: int, cell=None):
        self._timed_out = timeout  # which limit cut the cell in: recorded, and said in the cell
        return await super()._async_handle_timeout(timeout, cell)

    def output(self, outs, msg, display_id, cell_index):
        """Keep an output only while the cell's and the notebook's output stay under their caps."""
        if msg.get("msg_type") in ("stream", "display_data", "execute_result", "error", "update_display_data"):
            if hasattr(self.km, "heard"):
                self.km.heard()  # the cell is not waiting (kept or not, its output says it works)
            size = message_size(msg)
            total = sum(self._output_size.values())
            cell_size = self._output_size.get(cell_index, 0)
            if cell_size + size > self.max_cell_output or total + size > self.max_output:
                if cell_index not in self._capped:
                    self._capped.add(cell_index)
                    note = new_output(
                        "stream",
                        name="stdout",
                        text=(
                            f"\n[output cut: past {self.max_cell_output:,} characters for one cell or "
                            f"{self.max_output:,} for the notebook; the rest was dropped while grading]\n"
                        ),
                    )
                    outs.append(note)
                return None
            self._output_size[cell_index] = cell_size + size
        return super().output(outs, msg, display_id, cell_index)
