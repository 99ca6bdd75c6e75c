"""What one student's server may take of the hub's machine: memory, processes and CPU, enforced by the kernel.

A student's server, its kernels and terminals share one control group of their own, ``attention-hub/<account>``:

- memory: ``SERVER.memory`` for all of them together; past it the kernel's OOM killer stops a process of that
  server (usually the notebook's kernel, which JupyterLab then says died), never a classmate's or the hub;
- processes: at most ``SERVER.processes`` (a fork bomb in a terminal stops there, not at the machine's limit);
- CPU: at most ``SERVER.cpus`` cores' worth of time, so one student's busy loops cannot take every core.

Root makes the group before the server starts and puts the server's first process into it before it drops to the
account (``CourseSpawner.make_preexec_fn`` in hub/jupyterhub_config.py), so every process the server starts is in it,
and no process of the account can leave it (moving a process needs write access to another group: root's only).
cgroup v2 (one group: ``memory.max``, ``pids.max``, ``cpu.max``) and v1 (a group in each of the memory, pids and cpu
hierarchies) are both understood.

Where the machine offers no memory group root can write (a container without one), each process of the server gets
``SERVER.memory`` of address space instead (RLIMIT_AS), and the hub says at start that the bound is then per process.
The sandbox bounds the rest of a student's RAM-backed room: ``/dev/shm`` is a tmpfs of
``autograder.sandbox.SHARED_MEMORY`` and the rest of ``/dev`` is read-only.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

GROUPS = "attention-hub"  # the folder of the servers' groups in each hierarchy
CGROUP = Path("/sys/fs/cgroup")
PERIOD = 100_000  # microseconds: the CPU quota's period


@dataclass(frozen=True)
class ServerLimits:
    """One student's server with its kernels and terminals, together."""

    memory: int = 2 * 2**30  # bytes
    processes: int = 512
    cpus: float = 1.0  # cores' worth of CPU time


SERVER = ServerLimits()


def hierarchies(root: Path = CGROUP) -> dict[str, Path]:
    """{controller: the folder the servers' groups go in} for the controllers root can use here: cgroup v2's one
    folder for all three, else v1's hierarchy of each (memory, pids, cpu) that is mounted."""
    unified = root / "cgroup.controllers"
    if unified.is_file():
        offered = unified.read_text().split()
        return {name: root / GROUPS for name in ("memory", "pids", "cpu") if name in offered}
    found = {}
    for name, probe in (("memory", "memory.limit_in_bytes"), ("pids", "cgroup.procs"), ("cpu", "cpu.cfs_quota_us")):
        if (root / name / probe).is_file():
            found[name] = root / name / GROUPS
    return found


def _write(path: Path, value) -> None:
    path.write_text(str(value))


def server_groups(account: str, limits: ServerLimits | None = None, root: Path = CGROUP) -> list[Path]:
    """The groups of ``account``'s server, made (or kept) with ``limits`` written (default SERVER): one on cgroup v2,
    one per controller on v1; none where none can be made (``why_unbounded`` says what then holds)."""
    limits = limits or SERVER
    found = hierarchies(root)
    groups = []
    try:
        if (root / "cgroup.controllers").is_file() and found:
            enabled = " ".join(f"+{name}" for name in found)
            _write(root / "cgroup.subtree_control", enabled)
            (root / GROUPS).mkdir(exist_ok=True)
            _write(root / GROUPS / "cgroup.subtree_control", enabled)
            group = root / GROUPS / account
            group.mkdir(exist_ok=True)
            if "memory" in found:
                _write(group / "memory.max", limits.memory)
                if (group / "memory.swap.max").exists():
                    _write(group / "memory.swap.max", 0)
            if "pids" in found:
                _write(group / "pids.max", limits.processes)
            if "cpu" in found:
                _write(group / "cpu.max", f"{int(limits.cpus * PERIOD)} {PERIOD}")
            return [group]
        for name, folder in found.items():
            folder.mkdir(exist_ok=True)
            group = folder / account
            group.mkdir(exist_ok=True)
            if name == "memory":
                _write(group / "memory.limit_in_bytes", limits.memory)
                if (group / "memory.memsw.limit_in_bytes").exists():
                    _write(group / "memory.memsw.limit_in_bytes", limits.memory)
            elif name == "pids":
                _write(group / "pids.max", limits.processes)
            else:
                _write(group / "cpu.cfs_period_us", PERIOD)
                _write(group / "cpu.cfs_quota_us", int(limits.cpus * PERIOD))
            groups.append(group)
    except OSError:
        return groups
    return groups


def memory_limit(groups: list[Path]) -> int | None:
    """The memory limit the groups hold, in bytes, or None."""
    for group in groups:
        for name in ("memory.max", "memory.limit_in_bytes"):
            if (group / name).is_file():
                return int((group / name).read_text().strip())
    return None


def enter(groups: list[Path], memory: int) -> None:
    """This process into each of ``groups`` (as root, in the server's first process, before it becomes the
    account): every process it starts stays there. Without a memory group: RLIMIT_AS of ``memory`` on this process
    and each it starts. Runs between fork and exec: no logging, nothing that may take a lock."""
    for group in groups:
        with open(group / "cgroup.procs", "w") as procs:
            procs.write(str(os.getpid()))
    if memory_limit(groups) is None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def why_unbounded(root: Path = CGROUP) -> str | None:
    """None when each server gets its memory group; else what bounds a server instead, in a sentence."""
    if "memory" in hierarchies(root):
        return None
    return (
        f"no memory cgroup can be made here, so each process of a server is limited to {SERVER.memory / 2**30:g} GiB "
        "of address space instead of each server as a whole (run the hub where /sys/fs/cgroup is writable by root)"
    )


def stated(root: Path = CGROUP) -> str:
    """What each student's server may take here, in a line (the hub says it at start)."""
    found = hierarchies(root)
    parts = [f"{SERVER.memory / 2**30:g} GiB of memory" if "memory" in found else f"WARNING: {why_unbounded(root)}"]
    if "pids" in found:
        parts.append(f"{SERVER.processes} processes")
    if "cpu" in found:
        parts.append(f"{SERVER.cpus:g} CPU")
    return ", ".join(parts) + " per student's server (kernels and terminals included)"


def remove_groups(root: Path = CGROUP) -> list[str]:
    """The servers' groups removed (each once its processes have ended; a busy one is left); their paths."""
    removed = []
    for folder in sorted(set(hierarchies(root).values())):
        if not folder.is_dir():
            continue
        for group in sorted(path for path in folder.iterdir() if path.is_dir()):
            try:
                group.rmdir()
                removed.append(str(group))
            except OSError:
                pass
    return removed
