"""Gradebook databases for tests: SQLite, and a throwaway PostgreSQL server of the tests' own.

The server is Debian's (``apt-get install postgresql``: initdb and pg_ctl under /usr/lib/postgresql/<n>/bin),
started once per test session with initdb in a temporary folder, listening on a Unix socket in that folder
only (no TCP port), stopped and removed when the session ends. When the binaries are missing, the PostgreSQL
cases are skipped and say why. Run as root, the server runs as the ``postgres`` user (initdb refuses root).

    def test_x(database, tmp_path):
        url = database(tmp_path)      # sqlite:///.../gradebook.db, or postgresql://... (a new, empty database)
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest


def postgres_binaries() -> Path | None:
    """The folder of Debian's initdb and pg_ctl (newest version), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path and shutil.which("initdb") else None


def why_no_postgres() -> str | None:
    """None when a throwaway server can be started here, else why not."""
    try:
        import psycopg  # noqa: F401 - SQLAlchemy's driver for postgresql:// URLs
    except ImportError:
        return "psycopg is not installed (pip install -e . installs psycopg[binary])"
    if postgres_binaries() is None:
        return "PostgreSQL's server programs (initdb, pg_ctl) are not installed: apt-get install postgresql"
    if os.getuid() == 0 and shutil.which("runuser") is None:
        return "running as root, and no runuser to start the server as the postgres user"
    return None


class Server:
    """A PostgreSQL server in a temporary folder, on a Unix socket there."""

    def __init__(self):
        self.bin = postgres_binaries()
        self.folder = Path(tempfile.mkdtemp(prefix="attention-postgres-"))
        self.data, self.socket = self.folder / "data", self.folder / "socket"
        self.socket.mkdir()
        self.prefix = []
        if os.getuid() == 0:  # initdb and postgres refuse to run as root
            self.prefix = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.folder, "postgres")
            shutil.chown(self.socket, "postgres")
            os.chmod(self.folder, 0o755)
        self.user = "postgres" if self.prefix else None

    def run(self, *command: str, timeout: float = 60):
        done = subprocess.run([*self.prefix, *command], capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return done

    def start(self):
        self.run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
            *(["-U", "postgres"] if self.user else []),
        )
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.socket}' -c fsync=off -c max_connections=60"
        )
        self.run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.folder / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        return self

    def url(self, database: str = "postgres") -> str:
        user = self.user or os.environ.get("USER") or "postgres"
        return f"postgresql://{user}@/{database}?host={self.socket}"

    def create_database(self) -> str:
        import psycopg

        name = f"gradebook_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self):
        try:
            self.run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server():
    why = why_no_postgres()
    if why:
        pytest.skip(f"PostgreSQL tests skipped: {why}")
    server = Server().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session", autouse=True)
def alembic_version_once():
    """nbgrader asks the `alembic` program for its schema version each time it makes a new gradebook (about
    a second); the answer never changes within a session, so tests ask once."""
    from nbgrader import api

    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    version = api.get_alembic_version()
    original, api.get_alembic_version = api.get_alembic_version, lambda: version
    yield
    api.get_alembic_version = original


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request):
    """A function of a folder that gives a new, empty gradebook's URL: SQLite in that folder, or a new
    database on the session's throwaway PostgreSQL server."""
    if request.param == "sqlite":
        return lambda folder: f"sqlite:///{Path(folder) / 'course' / 'gradebook.db'}"
    server = request.getfixturevalue("postgres_server")
    return lambda folder: server.create_database()
