"""JupyterHub for the attention course: one instructor, N students, nbgrader's exchange, each role its tools.

`make hub` (python -m autograder.hub) prepares a state folder and starts JupyterHub with this file; it sets:

    ATTENTION_HUB_STATE        the state folder: homes, the exchange, the course, the hub's database and secrets
    ATTENTION_HUB_PORT         the port the course is served on, on 127.0.0.1
    ATTENTION_HUB_PORTS        the hub's own API and the proxy's API ports (two numbers, comma-separated)
    ATTENTION_HUB_PROXY        the configurable-http-proxy program (from npm)
    ATTENTION_HUB_INSTRUCTOR   the instructor's account
    ATTENTION_HUB_STUDENTS     the students' accounts, comma-separated

Roles: the instructor's server reads hub/instructor/ (Formgrader, Create Assignment, the course list, and the
course's nbgrader configuration), a student's reads hub/student/ (the assignment list and Validate only; the
Formgrader and course-list server extensions are off, so their pages and APIs do not exist for a student).
Each folder is put first on the user's JUPYTER_CONFIG_PATH, above the environment's own settings.

Students' servers, and the kernels they start, run in bubblewrap (autograder.sandbox, as the grader's kernels
do): the sandbox shows the student's home, the course library and its data, hub/student/, and the course's
exchange folders (released assignments and feedback read-only, inbound writable), nothing else: not the
repository (solutions, hidden checks, the grader), not the instructor's course or gradebook, not other homes.
Without bubblewrap a student's server does not start, and says why (unless ATTENTION_UNSANDBOXED=1).

This sample is for one machine, to try the course: any password is accepted and every account is the same OS
user, so the inbound folder is shared (a student's notebook could list or delete other submissions before they
are collected). Never run a class on it. For a real server, change:

- the authenticator: ``c.JupyterHub.authenticator_class = "pam"`` (system accounts) or your institution's
  OAuth (oauthenticator), keeping ``allowed_users`` and ``admin_users``;
- the spawner: ``c.JupyterHub.spawner_class = "localprocess"`` (each account a system user, its own home),
  or DockerSpawner / KubeSpawner; students' environments then hold only the student wheel
  (``make student-wheel``), JupyterLab and nbgrader, never this repository;
- the exchange: a folder every account can write to (``chmod 1777``), e.g. /srv/nbgrader/exchange; the
  instructor's home and course folder readable by the instructor only (``chmod 700``);
- ``hub/student/nbgrader_config.py``'s ``student_id`` line can go: with system accounts the OS name is the
  account's name;
- ``bind_url``: the public address, behind TLS (``c.JupyterHub.ssl_cert`` / ``ssl_key`` or a proxy).
"""

import os
import sys
from pathlib import Path

from autograder.lti.hub_login import enable_if_configured

c = get_config()  # noqa: F821 (JupyterHub provides it)

HERE = Path(__file__).resolve().parent
state = Path(os.environ["ATTENTION_HUB_STATE"])
instructor = os.environ.get("ATTENTION_HUB_INSTRUCTOR", "instructor")
students = [name for name in os.environ.get("ATTENTION_HUB_STUDENTS", "").split(",") if name]
hub_api_port, proxy_api_port = (int(port) for port in os.environ["ATTENTION_HUB_PORTS"].split(","))
bin_folder = Path(sys.executable).parent  # the environment JupyterHub runs in: jupyterhub-singleuser, alembic

# --- where it listens: 127.0.0.1 only ---------------------------------------------------------------------
c.JupyterHub.bind_url = f"http://127.0.0.1:{os.environ.get('ATTENTION_HUB_PORT', '8000')}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub_api_port
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [os.environ["ATTENTION_HUB_PROXY"]]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.Spawner.ip = "127.0.0.1"

# --- what it keeps: all in the state folder ---------------------------------------------------------------
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
# stopping the hub stops the proxy and every user's server (the defaults, written down: nothing is left running)
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# --- who may log in ---------------------------------------------------------------------------------------
c.JupyterHub.authenticator_class = "dummy"  # any password: one machine only (see above)
c.Authenticator.allowed_users = {instructor, *students}
c.Authenticator.admin_users = {instructor}
# students from the LMS (autograder.lti.hub_login): on when the secret shared with the LTI tool is there
enable_if_configured(c, state / "lti-hub-secret")

# --- each account's server --------------------------------------------------------------------------------
c.JupyterHub.spawner_class = "simple"  # a process of this user per account, its home under the state folder
c.SimpleLocalProcessSpawner.home_dir_template = str(state / "home" / "{username}")
SERVER = [str(bin_folder / "jupyterhub-singleuser")]  # each account's Jupyter server
c.Spawner.cmd = SERVER
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
if os.geteuid() == 0:  # a container's root: Jupyter refuses it unless told
    c.Spawner.args = ["--allow-root"]


def role_of(name: str) -> str:
    """The folder of hub/ whose configuration the account's server reads."""
    return "instructor" if name == instructor else "student"


def student_sandbox(spawner, command: list) -> list:
    """A student's server (and the kernels it starts) in bubblewrap, built from nothing (autograder.sandbox): the
    system and Python read-only, the course library and its data read-only, hub/student/, the exchange's
    released assignments and feedback read-only, its inbound writable, the student's home writable; the network
    kept (the server answers the proxy on 127.0.0.1). Not there: the repository (solutions, hidden checks, the
    grader), the instructor's course and gradebook, other students' homes. Without bubblewrap the server does not
    start, and the student is told why (unless ATTENTION_UNSANDBOXED=1 was set for the hub)."""
    import lib
    from autograder import sandbox

    home, course = Path(spawner.home_dir), state / "exchange" / "attention"
    library = Path(lib.__file__).resolve().parent
    readable = {folder: folder for folder in (library, lib.data_folder(), HERE / "student")}
    readable |= {course / "outbound": course / "outbound", course / "feedback": course / "feedback"}
    view = sandbox.Sandbox(writable=(home, course / "inbound"), readable=readable, cwd=home, network=True)
    return sandbox.command(command, view)


def student_exchange(home: Path) -> Path:
    """The exchange as a student's sandbox sees it: a folder of the student's own (nbgrader wants the exchange's
    root writable), whose attention/outbound, inbound and feedback lead to the course's (shown in the sandbox,
    read-only but for inbound); the rest of the course's exchange is not there."""
    root = home / ".exchange"
    (root / "attention").mkdir(parents=True, exist_ok=True)
    for folder in ("outbound", "inbound", "feedback"):
        link = root / "attention" / folder
        if not link.is_symlink():
            link.symlink_to(state / "exchange" / "attention" / folder, target_is_directory=True)
    return root


def give_role(spawner) -> None:
    """Before a server starts: its role's configuration first on JUPYTER_CONFIG_PATH, the exchange, the course;
    a student's server in its sandbox."""
    role = role_of(spawner.user.name)
    environment = {
        "PATH": os.pathsep.join([str(bin_folder), os.environ.get("PATH", "")]),  # nbgrader runs alembic
        "JUPYTER_CONFIG_PATH": str(HERE / role),
        "ATTENTION_HUB_EXCHANGE": str(state / "exchange"),
    }
    if role == "instructor":
        environment["ATTENTION_HUB_COURSE"] = str(state / "home" / instructor / "attention")
    else:
        home = Path(spawner.home_dir)
        environment["ATTENTION_HUB_EXCHANGE"] = str(student_exchange(home))
        environment["TMPDIR"] = str(home / ".tmp")  # the sandbox's /tmp is read-only
        (home / ".tmp").mkdir(parents=True, exist_ok=True)
        spawner.cmd = student_sandbox(spawner, SERVER)
    spawner.environment = {**spawner.environment, **environment}  # a copy: the configured dict is shared


c.Spawner.pre_spawn_hook = give_role
