"""The hub's runtime: a Python environment every account on the machine can run, made from nothing.

The hub starts each person's Jupyter server, the grading service and the students' kernels as that person's own
system account, so the Python they run must be open to all accounts. A developer's Python often is not: pyenv or
conda inside root's home (mode 700), a virtual environment whose base interpreter sits there. ``make install-hub``
therefore makes the hub a runtime of its own, ``.hub/venv``:

1. a base interpreter that other accounts can run: ``$HUB_PYTHON`` when given, else the first of the interpreter
   running this, ``python3`` on PATH and Debian's ``/usr/bin/python3`` that the account ``nobody`` can start (tried
   for real, as root); where none can and this runs as root, Debian's ``python3`` and ``python3-venv`` are installed
   with apt-get;
2. ``.hub/venv``, a virtual environment of it, with the course installed (``pip install -e '.[hub]'``: JupyterHub,
   nbgrader, JupyterLab, the course's ``lib`` and ``autograder`` from this checkout), every file readable by all;
3. the verdict in JupyterLab (``labextension/``): its JupyterLab extension built with @jupyterlab/builder from npm
   (``npm ci``, then the builder against the runtime's own JupyterLab, about a second) and the package, with its
   server extension ``attention_checks``, installed into the runtime (not editable: a student's sandbox shows the
   runtime, never the checkout); without npm it says so and the hub runs without it (the checks page remains);
4. a last check: ``nobody`` imports jupyterhub, lib and autograder with it.

    python -m autograder.hub.runtime                 # makes .hub/venv (make install-hub runs it)
    python -m autograder.hub.runtime --check         # says whether .hub/venv is there and open to all

Only the standard library is used here: this runs before any environment of the hub's exists. The checkout itself
must be reachable by other accounts (its lib/, data/, hub/ and autograder/ are read by their servers): cloned under
a closed folder (e.g. /root), it says which folder to open or where to clone instead.
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from autograder import REPOSITORY

VENV = REPOSITORY / ".hub" / "venv"
LAB_EXTENSION = REPOSITORY / "labextension"  # the verdict in JupyterLab: sources; its build lands inside it
BUILDER = Path("node_modules") / "@jupyterlab" / "builder" / "lib" / "build-labextension.js"
STAMP = ".installed"  # written last: the runtime is whole
PROBE_ACCOUNT = "nobody"  # an account that owns nothing: what it can run, every account can
DEBIAN_PYTHON = Path("/usr/bin/python3")
PROBE = "import sys, venv, ensurepip; print(sys.version_info[0], sys.version_info[1])"


class RuntimeProblem(RuntimeError):
    """The runtime cannot be made here; the message says why and what to do."""


def closed_folder(path: Path) -> Path | None:
    """The first folder at or above ``path`` that other accounts cannot pass through (no o+x), or None."""
    for folder in [path, *path.parents]:
        if folder.exists() and not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def runs_for_others(python: Path, code: str = PROBE) -> tuple[bool, str]:
    """Whether another account can run ``python`` with ``code``: tried as ``nobody`` where this runs as root (the
    real test: ACLs, mount options and modes all count), else judged from the folders' modes."""
    if os.geteuid() == 0 and shutil.which("runuser"):
        try:
            done = subprocess.run(
                ["runuser", "-u", PROBE_ACCOUNT, "--", str(python), "-I", "-c", code],
                capture_output=True,
                text=True,
                timeout=120,
                cwd="/",
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return False, str(error)
        return done.returncode == 0, (done.stderr.strip().splitlines() or [""])[-1]
    real = python.resolve()
    closed = closed_folder(real.parent)
    if closed is not None:
        return False, f"{closed} is closed to other accounts"
    return bool(real.stat().st_mode & stat.S_IXOTH), f"{real} is not executable by others"


def candidates() -> list[Path]:
    """Base interpreters to try, in order: $HUB_PYTHON, this one's base, python3 on PATH, Debian's."""
    found = []
    named = os.environ.get("HUB_PYTHON")
    base = getattr(sys, "_base_executable", None) or sys.executable
    for candidate in (named, base, shutil.which("python3"), str(DEBIAN_PYTHON)):
        if candidate and Path(candidate).is_file() and Path(candidate).resolve() not in [p.resolve() for p in found]:
            found.append(Path(candidate))
    return found


def open_python(install: bool = True) -> Path:
    """A base interpreter (3.11 or later, with venv and ensurepip) that every account can run."""
    tried = []
    for python in candidates():
        works, why = runs_for_others(python)
        if works:
            done = subprocess.run([str(python), "-I", "-c", PROBE], capture_output=True, text=True)
            major, minor = (int(part) for part in done.stdout.split())
            if (major, minor) >= (3, 11):
                return python
            why = f"Python {major}.{minor}; the course needs 3.11 or later"
        tried.append(f"{python} ({why})")
    if install and os.geteuid() == 0 and shutil.which("apt-get"):
        print("no Python open to all accounts: installing Debian's python3 and python3-venv", flush=True)
        command = ["apt-get", "install", "-y", "-qq", "python3", "python3-venv"]
        if subprocess.run(command, capture_output=True).returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
            subprocess.run(command, capture_output=True)
        return open_python(install=False)
    raise RuntimeProblem(
        "no Python that other accounts can run (the students' and the instructor's servers run as their own "
        f"accounts); tried: {'; '.join(tried)}. Install Debian's (sudo apt-get install python3 python3-venv) or name "
        "one installed under folders open to all with HUB_PYTHON=/path/to/python3, then run make install-hub again"
    )


def check_checkout() -> None:
    """The checkout must be reachable by other accounts: their servers read its lib/, data/, hub/ and autograder/."""
    closed = closed_folder(REPOSITORY)
    if closed is not None:
        raise RuntimeProblem(
            f"the checkout {REPOSITORY} is inside {closed}, which other accounts cannot pass through (mode "
            f"{stat.S_IMODE(closed.stat().st_mode):o}), and the hub's servers run as other accounts: clone the "
            f"course under a folder open to all (e.g. /srv/attention-course), or open the way (chmod o+x {closed}: "
            "passing through, not listing)"
        )


def open_to_all(folder: Path) -> None:
    """Every file of ``folder`` readable, every folder passable, by all accounts (a root umask of 077 included)."""
    for root, folders, files in os.walk(folder):
        for name in [*folders, *files]:
            path = Path(root) / name
            if not path.is_symlink():
                mode = path.stat().st_mode
                path.chmod(mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() or mode & stat.S_IXUSR else 0))
    folder.chmod(folder.stat().st_mode | stat.S_IROTH | stat.S_IXOTH)


def why_not_ready(venv: Path = VENV) -> str | None:
    """Why ``venv`` is not a runtime the hub can use (None: it is)."""
    python = venv / "bin" / "python"
    if not (venv / STAMP).is_file() or not python.exists():
        return f"the hub's runtime {venv} is not made: make install-hub (python -m autograder.hub.runtime)"
    works, why = runs_for_others(python, "import jupyterhub, lib, autograder")
    if not works:
        return f"other accounts cannot run the hub's runtime {python} ({why}): make install-hub again"
    return None


def build_lab_extension(python: Path, folder: Path = LAB_EXTENSION) -> str | None:
    """``folder``'s JupyterLab extension built (npm ci: @jupyterlab/builder, at the version package-lock.json names;
    then its build-labextension against ``python``'s JupyterLab) and the package installed into ``python``'s
    environment. Returns why it was not (npm or Node.js missing), None when it was."""
    npm, node = shutil.which("npm"), shutil.which("node") or shutil.which("nodejs")
    if npm is None or node is None:
        return (
            "npm is missing (apt-get install nodejs npm): the students' JupyterLab will not show their verdicts "
            "after Submit (the grading service's page still does); run make install-hub again once it is there"
        )
    where = "import jupyterlab, pathlib; print(pathlib.Path(jupyterlab.__file__).parent / 'staging')"
    try:
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, check=True)
        core = subprocess.run([str(python), "-c", where], capture_output=True, text=True, check=True).stdout.strip()
        for made in (folder / "attention_checks" / "labextension", folder / "build"):  # no file of an earlier build
            shutil.rmtree(made, ignore_errors=True)
        build = [node, str(BUILDER), "--core-path", core, "."]
        subprocess.run(build, cwd=folder, check=True, stdout=subprocess.DEVNULL)
        install = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(folder)]
        subprocess.run(install, check=True)
    except subprocess.CalledProcessError as error:  # npm's registry out of reach, a build that fails
        return (
            f"the verdict in JupyterLab was not built ({' '.join(map(str, error.cmd[:3]))} exited with "
            f"{error.returncode}, above): the students' JupyterLab will not show their verdicts after Submit (the "
            "grading service's page still does); run make install-hub again once the cause is fixed"
        )
    return None


def make(venv: Path = VENV) -> Path:
    """``venv`` made from an open interpreter, the course installed in it; returns its python."""
    check_checkout()
    base = open_python()
    venv.parent.mkdir(parents=True, exist_ok=True)
    (venv / STAMP).unlink(missing_ok=True)
    python = venv / "bin" / "python"
    if python.exists() and python.resolve() != base.resolve():
        shutil.rmtree(venv)  # made from another interpreter before: made again
    if not python.exists():
        subprocess.run([str(base), "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-e", f"{REPOSITORY}[hub]"], check=True)
    # Formgrader and nbgrader from here never release checks.py or reference.py (autograder.course.guard)
    subprocess.run([str(python), "-m", "autograder.course.guard"], check=True)
    missing = build_lab_extension(python)
    if missing:
        print(f"WARNING: {missing}", file=sys.stderr, flush=True)
    open_to_all(venv)
    for folder in (venv.parent, REPOSITORY / ".hub"):
        folder.chmod(folder.stat().st_mode | stat.S_IXOTH | stat.S_IROTH)
    works, why = runs_for_others(python, "import jupyterhub, lib, autograder")
    if not works:
        raise RuntimeProblem(f"the runtime {venv} was made, but another account cannot use it: {why}")
    (venv / STAMP).touch()
    return python


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.hub.runtime", description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=VENV, help="where to make it (default .hub/venv)")
    parser.add_argument("--check", action="store_true", help="only say whether it is made and open to all")
    args = parser.parse_args(argv)
    venv = args.venv.absolute()
    if args.check:
        why = why_not_ready(venv)
        print(why or f"the hub's runtime {venv} is ready: other accounts run it")
        return 1 if why else 0
    try:
        python = make(venv)
    except RuntimeProblem as problem:
        print(f"FAILED: {problem}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as error:
        print(f"FAILED: {' '.join(map(str, error.cmd))} exited with {error.returncode}", file=sys.stderr)
        return 1
    print(f"the hub's runtime: {python} ({python.resolve()}), open to all accounts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
