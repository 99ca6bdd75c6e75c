"""Formgrader on a graded course: JupyterLab (with nbgrader's formgrader extension) rooted at the course folder.

    python -m autograder.course.formgrader                      # demo/, the class `make demo` graded
    python -m autograder.course.formgrader --course /srv/attention --port 8890 --no-browser

nbgrader's Formgrader needs three things that a plain `jupyter lab` in the repository does not give it: the
course folder as the server's root (Formgrader refuses a course that is not under the root), the course's
nbgrader_config.py read from the working folder (the gradebook, the course root), and `alembic` on PATH
(nbgrader runs it to check the gradebook's schema; it lives in the virtual environment's bin/). This command
starts the virtual environment's `jupyter lab` (or `jupyter server` with --server) in the course folder with
the environment's bin/ first on PATH, listening on 127.0.0.1 only, with a token (printed, or --token), and
prints the address of Formgrader's page. It replaces itself with Jupyter, so stopping it (Ctrl-C twice, or
SIGTERM) stops the server. Before that it writes the course's generated configuration again, as a class run does
(autograder.course.config), so a course an earlier version configured runs today's grading chain.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path

from autograder import REPOSITORY
from autograder.course.config import write_course_files
from autograder.settings import GENERATED_FILE, SettingsError

EXTENSION = "nbgrader.server_extensions.formgrader"


def command(course: Path, port: int, token: str, browser: bool, server: bool) -> tuple[list[str], dict]:
    """(argv, environment) of the Jupyter server that serves Formgrader for ``course``."""
    bin_folder = Path(sys.executable).parent  # the environment's bin/, not the interpreter it links to
    program = "jupyter-server" if server else "jupyter-lab"
    argv = [
        str(bin_folder / program),
        f"--ServerApp.root_dir={course}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.open_browser={browser}",
        f"--ServerApp.jpserver_extensions={{'{EXTENSION}': True}}",  # on, whatever the user's configuration says
    ]
    if os.geteuid() == 0:  # Jupyter refuses root unless told; a container or a course machine's own account
        argv.append("--ServerApp.allow_root=True")
    environment = {**os.environ, "PATH": os.pathsep.join([str(bin_folder), os.environ.get("PATH", "")])}
    return argv, environment


def configured(course: Path) -> list[str]:
    """The configuration the project generates for ``course`` written again when the course has one (as every class
    run does: one an earlier version wrote may name modules that have moved since), before Formgrader runs nbgrader
    on it; the notes to print. SettingsError when the instructor's own file must be changed first."""
    return write_course_files(course) if (course / GENERATED_FILE).is_file() else []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.course.formgrader", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--course",
        type=Path,
        default=REPOSITORY / "demo",
        help="the course folder (made by python -m autograder.course; default: demo/)",
    )
    parser.add_argument("--port", type=int, default=8888, help="port on 127.0.0.1 (default 8888)")
    parser.add_argument("--token", default=None, help="the server's token (default: a new random one)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--server", action="store_true", help="a plain Jupyter server (Formgrader's pages), no Lab")
    args = parser.parse_args(argv)
    course = args.course.resolve()
    if not (course / "nbgrader_config.py").is_file():
        print(
            f"FAILED: {course} has no nbgrader_config.py: grade a class into it first "
            f"(python -m autograder.course --course {args.course})",
            file=sys.stderr,
        )
        return 1
    try:
        for note in configured(course):
            print(note)
    except SettingsError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    token = args.token or secrets.token_hex(24)
    program, environment = command(course, args.port, token, not args.no_browser, args.server)
    print(f"Formgrader for {course}: http://127.0.0.1:{args.port}/formgrader?token={token}", flush=True)
    os.chdir(course)  # nbgrader reads the course's nbgrader_config.py from the working folder
    os.execve(program[0], program, environment)


if __name__ == "__main__":
    sys.exit(main())
