"""The student's kernel, started in a sandbox (autograder.sandbox) and watched while it runs.

SandboxedKernelManager is jupyter_client's AsyncKernelManager with three changes:

- the kernel talks over ZeroMQ's ipc transport (files in a private folder), not TCP: a kernel in a
  network namespace of its own cannot reach the grader's loopback, and files can be bound in;
- the kernel command runs in bubblewrap (when it works here), with the notebook's folder writable,
  lib/ and data/ readable where the notebook's setup cell looks for them, and nothing else of the
  course, the repository or the home folder in existence; and under limits (memory, file size, processes);
- a watchdog thread counts the kernel's processes: past KERNEL_PROCESSES (a fork bomb) it kills the
  whole sandbox and records why in ``death_reason``, which SurvivingExecute writes into the notebook.

The class's forward cache (lib.transformer.write_forward_cache) is given as ``forward_cache`` in nbgrader's
configuration (autograder.grading writes it into each private folder's), or else taken from the grader's
ATTENTION_FORWARD_CACHE; the kernel sees it read-only at CACHE_INSIDE, and its variable names that.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Unicode

from autograder import sandbox

FORWARD_CACHE = "ATTENTION_FORWARD_CACHE"  # lib.transformer.FORWARD_CACHE (lib, and NumPy, not imported here)
CACHE_INSIDE = "/run/attention/forward"  # where the class's forward cache (a folder) appears in the sandbox
WATCH_EVERY = 0.2  # seconds between two counts of the kernel's processes


def course_root(folder: Path) -> Path | None:
    """The folder the notebook's setup cell would find: ``folder`` or the first one above it holding lib/attention.py."""
    for candidate in [folder, *folder.parents]:
        if (candidate / "lib" / "attention.py").exists():
            return candidate
    return None


def kernel_sandbox(cwd: Path, private: Path, forward_cache: str | None = None) -> sandbox.Sandbox:
    """The kernel's view: its notebook folder and its private folder writable, lib/ and data/ readable (and
    the class's forward cache, when the grader made one: lib.transformer.write_forward_cache)."""
    readable = {CACHE_INSIDE: forward_cache} if forward_cache and os.path.exists(forward_cache) else {}
    root = course_root(cwd)
    if root is not None:
        library = (root / "lib").resolve()
        readable[str(root / "lib")] = str(library)
        if (library.parent / "data").is_dir():  # lib reads the store and its model from ../data
            readable[str(root / "data")] = str(library.parent / "data")
    return sandbox.Sandbox(writable=(cwd, private), readable=readable, cwd=cwd)


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel in a sandbox, over ipc, with a process watchdog (see the module's docstring)."""

    forward_cache = Unicode(None, allow_none=True, help="the class's forward cache (a folder) for the kernel to "
                            "read; default: the grader's ATTENTION_FORWARD_CACHE").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.private = Path(tempfile.mkdtemp(prefix="attention-kernel-"))
        self.transport = "ipc"
        self.ip = str(self.private / "ipc")
        self.connection_file = str(self.private / "connection.json")
        self.death_reason: str | None = None
        self._watching = threading.Event()

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        cwd = Path(kw.get("cwd") or os.getcwd()).resolve()
        inner = sandbox.limited(list(kernel_cmd), sandbox.KERNEL_MEMORY, sandbox.KERNEL_FILES, sandbox.PROCESS_CAP)
        if sandbox.bubblewrap() is not None:
            # In its own process namespace the kernel's parent is bwrap's pid 1: ipykernel's parent poller
            # (JPY_PARENT_PID, set by the launcher) would take that for an orphaning and quit at once. With
            # 1 it polls nothing; --die-with-parent does that poller's job.
            inner = ["/usr/bin/env", "JPY_PARENT_PID=1", *inner]
            # A SIGINT to the process group would also reach bwrap, which dies of it (and the kernel with it):
            # interrupt with a message on the control channel instead; the kernel then signals itself.
            self.kernel_spec.interrupt_mode = "message"
        env = dict(kw.get("env") or os.environ)
        forward_cache = self.forward_cache or env.get(FORWARD_CACHE)
        view = kernel_sandbox(cwd, self.private, forward_cache)
        command = sandbox.command(inner, view)
        if CACHE_INSIDE in view.readable:  # inside the sandbox at CACHE_INSIDE, not at its path outside
            env[FORWARD_CACHE] = CACHE_INSIDE if sandbox.bubblewrap() is not None else forward_cache
        env.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                    "HOME": str(self.private), "TMPDIR": str(self.private), "MPLCONFIGDIR": str(self.private / "matplotlib")})
        env.pop("MPLBACKEND", None)  # ipykernel's inline backend, so the plots reach the notebook and the feedback
        kw["env"] = env
        await super()._async_launch_kernel(command, **kw)
        process = getattr(self.provisioner, "process", None)
        if process is not None:
            self._watching.set()
            threading.Thread(target=self._watch, args=(process.pid,), daemon=True, name="kernel-watchdog").start()

    def _watch(self, pid: int):
        """Kill the kernel's whole sandbox when it runs more than KERNEL_PROCESSES processes."""
        while self._watching.is_set():
            try:
                os.kill(pid, 0)
            except OSError:
                return
            below = sandbox.descendants(pid)
            if len(below) > sandbox.KERNEL_PROCESSES + 3:  # bwrap's own two processes, the limits one-liner's exec
                self.death_reason = (f"your code started more than {sandbox.KERNEL_PROCESSES} processes "
                                     "(os.fork or subprocess in a loop?), so the kernel was stopped")
                for target in [pid, *below]:
                    try:
                        os.kill(target, signal.SIGKILL)
                    except OSError:
                        pass
                return
            time.sleep(WATCH_EVERY)

    async def _async_shutdown_kernel(self, now: bool = False, restart: bool = False):
        self._watching.clear()
        try:
            await super()._async_shutdown_kernel(now=now, restart=restart)
        finally:
            shutil.rmtree(self.private, ignore_errors=True)
