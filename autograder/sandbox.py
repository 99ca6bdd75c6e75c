"""What a student's code may see and do while it is graded: bubblewrap where it is installed, limits always.

Two kinds of student process run during grading, and both go through here:

- the notebook's kernel (autograder.notebook.kernel.SandboxedKernelManager), which runs the whole notebook;
- the runner (autograder.answers.runner, started by autograder.answers.process in autograder.answers.sandbox's view),
  which runs the answer cells for the hidden checks.

With bubblewrap (``apt-get install bubblewrap``) each runs in a sandbox of its own:

- no network: a network namespace of its own, with only its own loopback (``--unshare-net``);
- a file system built from nothing (``command``): the system's programs, libraries and /etc (its
  secrets hidden), all read-only; for the kernel, the Python environment, lib/ and data/; for the
  runner, only Python's standard library, NumPy and the runner's one file (every site-packages and the
  course's packages hidden: nothing there leads to the reference or the recorded statistics); an empty,
  read-only /tmp; writable, only its own folder (the kernel's TMPDIR and HOME are a private folder of its
  own). Not there: the
  instructor's home, other submissions and kernels, the repository (its solutions, hidden checks,
  examples, .git), the course folder (its submissions and gradebook);
- its own process, IPC and host-name namespaces; it dies with the grader that started it (and every
  process it started dies with it).

Without bubblewrap nothing student-written runs: ``command`` raises SandboxUnavailable (fail closed),
unless the instructor allowed it for this process and its children (``python -m autograder.course
--unsandboxed`` sets ATTENTION_UNSANDBOXED=1), accepting that the student's code can then read and
write whatever the grader's user can. ``warn_once`` says so, once per process.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder import REPOSITORY

INSTALL = "apt-get install bubblewrap"
MISSING = (
    "network access, and reading or writing the instructor's files, other submissions, the reference and the "
    "hidden checks"
)
UNSANDBOXED = "ATTENTION_UNSANDBOXED"  # "1": the instructor allowed student code to run without bubblewrap
SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # the programs a student process may find by name, after Python's own
LOCALE = "C.UTF-8"  # one locale for every student: text and number formatting never depend on the grader's

# Limits of every process that runs a student's code (the kernel and the answers' runner)
STUDENT_MEMORY = 4 * 2**30  # bytes of address space
STUDENT_FILES = 256 * 2**20  # the largest file it may write
KERNEL_PROCESSES = 16  # processes it may run before the watchdog stops it (autograder.notebook.kernel)
SHARED_MEMORY = 64 * 2**20  # bytes of /dev/shm, a tmpfs in RAM (the rest of /dev is read-only)
PROCESS_CAP = 64  # RLIMIT_NPROC: processes beyond what the user runs already (a fork bomb stops here)


@dataclass(frozen=True)
class Sandbox:
    """One sandbox's view: what it may read (``readable``: {path inside: path outside}) and write."""

    writable: tuple[Path, ...]
    readable: dict = field(default_factory=dict)
    cwd: Path | None = None
    environment: bool = True  # show this Python's environment (a sandbox that does not brings its own in readable)
    hidden: tuple = ()  # folders inside what is shown that appear empty (site-packages, the course's packages)
    network: bool = False  # keep the machine's network (a server that must answer on 127.0.0.1); default: none


class SandboxUnavailable(RuntimeError):
    """Student code would run without the sandbox, and the instructor did not allow that."""


@functools.cache
def bubblewrap() -> str | None:
    """The bwrap command when it is installed and works here (user namespaces allowed), else None."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    try:
        probe = subprocess.run(
            [path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"], capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if probe.returncode == 0 else None


def why_unprotected() -> str | None:
    """None when bubblewrap works; otherwise one sentence on what is missing and how to fix it."""
    if bubblewrap() is not None:
        return None
    found = shutil.which("bwrap")
    cause = (
        f"{found} is installed but cannot create a sandbox here (are user namespaces disabled?)"
        if found
        else f"bubblewrap is not installed ({INSTALL})"
    )
    return (
        f"{cause}: student code would run without the sandbox, so nothing would stop {MISSING}; "
        "the memory, process, file-size and time limits would still apply"
    )


def unsandboxed_allowed() -> bool:
    """True when the instructor allowed student code to run without bubblewrap (--unsandboxed)."""
    return os.environ.get(UNSANDBOXED) == "1"


def refusal() -> str:
    """What to tell an instructor whose machine cannot sandbox student code."""
    return (
        f"{why_unprotected()}. Nothing was graded. Install bubblewrap ({INSTALL}) and run again; or, knowing that "
        "every student's code can then read and change anything your user can (the reference, the hidden checks, "
        "the gradebook, other submissions), pass --unsandboxed"
    )


@functools.cache
def warn_once(log: logging.Logger | None = None) -> str | None:
    """Say once per process which protection is missing (None when bubblewrap works)."""
    message = why_unprotected()
    if message is not None:
        message = message.replace("would ", "") + " (allowed by --unsandboxed)"
    if message is not None:
        (log or logging.getLogger("autograder")).warning(message)
        print(f"WARNING: {message}", file=sys.stderr, flush=True)
    return message


def student_environment(home: Path, **extra: str) -> dict[str, str]:
    """The whole environment of a student process, built from an allow-list, never copied from the grader's.

    What Python, NumPy and Jupyter need and nothing else: PATH (this Python's bin folder, then the system's),
    HOME and TMPDIR (``home``, the process's private folder), one UTF-8 locale (LANG, LC_ALL), the BLAS
    libraries held to one thread, and ``extra`` (what the caller adds on purpose: PYTHONPATH for the course's
    lib, MPLCONFIGDIR, the forward cache's folder). A password or token in the grader's environment (a
    database URL, JUPYTERHUB_API_TOKEN, a cloud key) therefore never reaches student code.
    """
    python_bin = str(Path(sys.executable).parent)
    return {
        "PATH": f"{python_bin}:{SYSTEM_PATH}",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": LOCALE,
        "LC_ALL": LOCALE,
        **SINGLE_THREAD,
        **extra,
    }


def environment_roots() -> list[Path]:
    """The folders Python needs: the environment (a venv may sit inside the repository) and its base."""
    roots = []
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        path = Path(prefix).resolve()
        if path not in roots:
            roots.append(path)
    return roots


def site_folders() -> list[Path]:
    """Every folder where a Python on this machine keeps installed packages (site-packages, dist-packages)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    found = []
    for prefix in {sys.prefix, sys.base_prefix, "/usr", "/usr/local"}:
        for name in ("site-packages", "dist-packages"):
            for folder in (Path(prefix) / "lib" / version / name, Path(prefix) / "lib" / "python3" / name):
                if folder.is_dir() and folder.resolve() not in found:
                    found.append(folder.resolve())
    return found


def course_folders() -> list[Path]:
    """The course's own packages and data wherever they are installed: lib, autograder, the repository."""
    found = [REPOSITORY]
    for package in ("lib", "autograder"):
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            found.append(Path(location).resolve())
    return found


def _inside(path: Path, folders) -> bool:
    return any(path == folder or folder in path.parents for folder in folders)


SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")  # shown read-only
SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
    "/etc/security/opasswd",
)  # hidden inside /etc


def command(inner: list[str], sandbox: Sandbox) -> list[str]:
    """``inner`` wrapped in bubblewrap with the sandbox's view.

    Without a working bwrap: ``inner`` itself where the instructor allowed it (``unsandboxed_allowed``, said
    once by ``warn_once``), else SandboxUnavailable with what to do.

    The view is built up from nothing: the system's programs and libraries and /etc (its secrets hidden),
    the Python environment, what the sandbox may read, what it may write; the root and /tmp are read-only,
    so a write anywhere else fails instead of landing in a throwaway folder. Nothing else exists inside: not
    /home, /root, /srv, the repository, the course.
    """
    bwrap = bubblewrap()
    if bwrap is None:
        if not unsandboxed_allowed():
            raise SandboxUnavailable(refusal())
        warn_once()
        return inner
    arguments = [bwrap]
    for folder in SYSTEM:
        if os.path.exists(folder):
            arguments += ["--ro-bind", folder, folder]
    for secret in SECRETS:
        if os.path.isdir(secret) and not os.path.islink(secret):
            arguments += ["--tmpfs", secret]
        elif os.path.exists(secret):
            arguments += ["--ro-bind", "/dev/null", secret]
    scratch = sorted({"/tmp", str(Path(tempfile.gettempdir()).resolve())})
    # /dev: bubblewrap's own devices in a tmpfs as large as half the machine's RAM, so /dev/shm gets a bounded tmpfs
    # of its own and the rest is made read-only below (no file of a student's there takes the machine's memory)
    arguments += ["--dev", "/dev", "--size", str(SHARED_MEMORY), "--tmpfs", "/dev/shm", "--proc", "/proc"]
    for folder in scratch:
        arguments += ["--tmpfs", folder]
    for folder in sandbox.writable:
        arguments += ["--bind", str(folder), str(folder)]
    shown = [(root, root) for root in environment_roots() if not _inside(root, [Path(f) for f in SYSTEM])]
    shown = shown if sandbox.environment else []
    shown += [(Path(inside), Path(outside)) for inside, outside in sandbox.readable.items()]
    for inside, outside in shown:  # after the writable folders: what is readable inside one stays read-only
        arguments += ["--ro-bind", str(outside), str(inside)]
    for folder in sandbox.hidden:  # empty, wherever a folder shown above holds them
        if Path(folder).is_dir() and any(_inside(Path(folder), [Path(f)]) for f in [*SYSTEM, *(i for i, _ in shown)]):
            arguments += ["--tmpfs", str(folder)]
    for folder in ["/", "/dev", *scratch]:  # read-only too: /tmp only holds the mount points of what is bound above
        arguments += ["--remount-ro", folder]
    arguments += ["--unshare-all", "--die-with-parent"]  # the kernel manager interrupts by message
    if sandbox.network:
        arguments.append("--share-net")
    if sandbox.cwd is not None:
        arguments += ["--chdir", str(sandbox.cwd)]
    return arguments + ["--", *inner]


def limited(inner: list[str], memory: int, file_size: int, processes: int, cpu_seconds: int | None = None) -> list[str]:
    """``inner`` started through a Python one-liner that first lowers its own limits, then execs it.

    processes: how many more processes than the user runs now (RLIMIT_NPROC counts all of them);
    cpu_seconds: RLIMIT_CPU, or None for none. The limits hold inside the sandbox too (set before exec).
    """
    allowed = user_processes() + processes
    cpu = "" if cpu_seconds is None else f"(r.RLIMIT_CPU,{int(cpu_seconds)}),"
    setup = (
        "import os,resource as r,sys;"
        f"[r.setrlimit(k,(v,v)) for k,v in ((r.RLIMIT_AS,{memory}),(r.RLIMIT_FSIZE,{file_size}),{cpu}"
        f"(r.RLIMIT_CORE,0),(r.RLIMIT_NPROC,min({allowed},r.getrlimit(r.RLIMIT_NPROC)[1])))];"
        "os.execv(sys.argv[1],sys.argv[1:])"
    )
    return [sys.executable, "-c", setup, *inner]


def user_processes() -> int:
    """How many tasks this user runs now, every thread of every process counted (what RLIMIT_NPROC compares
    against: a limit of processes only would leave a user whose servers and kernels run many threads no room to
    start even one more process)."""
    uid, count = os.getuid(), 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
                with open(f"/proc/{entry}/status", "rb") as status:
                    threads = next((line for line in status if line.startswith(b"Threads:")), b"Threads: 1")
                count += int(threads.split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return count


def alive(pid: int) -> bool:
    """Whether the process ``pid`` is running (a zombie, ended but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return True  # no /proc to look in: it answered the signal
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (children, their children, ...), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        parent = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
