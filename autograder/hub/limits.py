"""What one account's server may take of the hub's machine: its memory, stated and enforced by the kernel.

A student's server, its kernels and terminals share one memory cgroup of their own, ``attention-hub/<account>``,
limited to ``SERVER_MEMORY``: past it the kernel's OOM killer stops a process of that server (usually the
notebook's kernel, which JupyterLab then says died), never a classmate's or the hub. Root makes the group before
the server starts and puts the server's first process into it before it drops to the account
(``CourseSpawner.make_preexec_fn`` in hub/jupyterhub_config.py), so every process the server starts is in it and
no process of the account can leave it (moving a process needs write access to another group, root's only).
cgroup v2 (``memory.max``) and v1 (``memory.limit_in_bytes``) are both understood.

Where the machine offers no memory cgroup root can write (a container without one), each process of the server
gets ``SERVER_MEMORY`` of address space instead (RLIMIT_AS), and the hub says at start that the bound is then per
process, not per server. The sandbox bounds the rest of a student's RAM-backed room: ``/dev/shm`` is a tmpfs of
``autograder.sandbox.SHARED_MEMORY`` and the rest of ``/dev`` is read-only.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

SERVER_MEMORY = 2 * 2**30  # bytes: one account's server with its kernels and terminals, together
GROUPS = "attention-hub"  # the folder of the servers' groups in the memory hierarchy
CGROUP = Path("/sys/fs/cgroup")


def hierarchy(root: Path = CGROUP) -> tuple[Path, str] | None:
    """(the folder the servers' groups go in, "v2" or "v1") where root can make memory groups, else None."""
    unified = root / "cgroup.controllers"
    if unified.is_file() and "memory" in unified.read_text().split():
        return root / GROUPS, "v2"
    if (root / "memory" / "memory.limit_in_bytes").is_file():
        return root / "memory" / GROUPS, "v1"
    return None


def server_group(account: str, memory: int | None = None, root: Path = CGROUP) -> Path | None:
    """The memory group of ``account``'s server, made (or kept) with its limit (default SERVER_MEMORY); None where
    there is none to make (``why_unbounded`` says what then holds)."""
    memory = memory or SERVER_MEMORY
    found = hierarchy(root)
    if found is None:
        return None
    groups, version = found
    try:
        if version == "v2" and "memory" not in (root / "cgroup.subtree_control").read_text().split():
            (root / "cgroup.subtree_control").write_text("+memory")
        groups.mkdir(exist_ok=True)
        if version == "v2":
            (groups / "cgroup.subtree_control").write_text("+memory")
        group = groups / account
        group.mkdir(exist_ok=True)
        if version == "v2":
            (group / "memory.max").write_text(str(memory))
            swap = group / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
        else:
            (group / "memory.limit_in_bytes").write_text(str(memory))
            swap = group / "memory.memsw.limit_in_bytes"
            if swap.exists():
                swap.write_text(str(memory))
    except OSError:
        return None
    return group


def limit_of(group: Path) -> int:
    """The memory limit a group holds, in bytes (as the kernel rounds it)."""
    for name in ("memory.max", "memory.limit_in_bytes"):
        if (group / name).is_file():
            return int((group / name).read_text().strip())
    raise FileNotFoundError(f"{group} holds no memory limit")


def enter(group: Path | None, memory: int) -> None:
    """This process into ``group`` (root, in the server's first process, before it becomes the account): every
    process it starts stays there. Without a group: RLIMIT_AS of ``memory`` on this process and its children.
    Runs between fork and exec: no logging, nothing that may take a lock."""
    if group is not None:
        with open(group / "cgroup.procs", "w") as procs:
            procs.write(str(os.getpid()))
        return
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def why_unbounded(root: Path = CGROUP) -> str | None:
    """None when servers get a memory group each; else what bounds them instead, in a sentence."""
    if hierarchy(root) is not None:
        return None
    return (
        f"no memory cgroup can be made here, so each process of a server is limited to {SERVER_MEMORY // 2**30} GiB "
        "of address space instead of each server as a whole (run the hub where /sys/fs/cgroup is writable by root)"
    )


def remove_groups(root: Path = CGROUP) -> list[str]:
    """The servers' groups removed (each once its processes have ended; a busy one is left); their names."""
    found = hierarchy(root)
    if found is None or not found[0].is_dir():
        return []
    removed = []
    for group in sorted(path for path in found[0].iterdir() if path.is_dir()):
        try:
            group.rmdir()
            removed.append(group.name)
        except OSError:
            pass
    return removed
