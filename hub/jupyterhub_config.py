"""JupyterHub for a course on one machine: an instructor and N students, each a system account, nbgrader's exchange.

`make hub` (python -m autograder.hub, as root) makes the accounts, the homes, the exchange and the course, then
starts JupyterHub with this file; it sets:

    ATTENTION_HUB_STATE        the state folder: homes, the exchange, the hub's own files (hub/, root's only)
    ATTENTION_HUB_PORT         the port the course is served on, on 127.0.0.1 (the proxy's public port)
    ATTENTION_HUB_PUBLIC_URL   the hub's address in browsers (default http://localhost:PORT); every account's server
                               and the grading service are on subdomains of it (below)
    ATTENTION_HUB_PORTS        the ports of the hub's API, the proxy's API and the grading service (comma-separated)
    ATTENTION_HUB_PROXY        the configurable-http-proxy program (from npm)
    ATTENTION_HUB_COURSE_ID    the course's name: its folder in the exchange and in the instructor's home
    ATTENTION_HUB_INSTRUCTOR   the instructor's account
    ATTENTION_HUB_STUDENTS     the students' accounts, comma-separated

The grading service (below) checks the Submits of every assignment of the course, each by its own checks.

Each account is a system account (autograder.hub.launch makes them with useradd) and JupyterHub's LocalProcessSpawner
starts its server as that account, in its home (mode 700): nobody reads another's files, the instructor's course
included. nbgrader's exchange keeps nbgrader's permission model: released assignments readable by all, inbound
writable but not listable (and sticky: nobody removes another's submission), feedback not listable (each page
named by a hash of its submission's secret). Collect takes only what each student made
(autograder.hub.collect.OwnCollect: no links, no special files, no submission in another's name).

Roles: the instructor's server reads hub/instructor/ (Formgrader, which opens inside JupyterLab, Create Assignment,
the course list, the course's nbgrader configuration), a student's reads hub/student/ (the assignment list and
Validate only; the Formgrader and course-list server extensions are off, so their pages and APIs do not exist for
a student). Each folder is put first on the user's JUPYTER_CONFIG_PATH, above the environment's own settings.

Students' servers, and the kernels they start, run in bubblewrap (autograder.sandbox) with a network of their own:
the sandbox shows the student's home, the course library and its data, hub/student/, and the course's exchange
folders (released assignments and feedback read-only, inbound writable), nothing else; its only loopback holds
the server and one door out, the proxy's public port (autograder.hub.bridge carries both through Unix sockets in the
student's home). The hub's API, the proxy's API, and other servers on 127.0.0.1 cannot be reached from it except
through the proxy, with a login, as from a browser. The server talks to the hub through the proxy too
(hub_connect_url). Without bubblewrap a student's server does not start, and says why.

What each student's server may take: 2 GiB of memory, 512 processes and 1 CPU for the server, its kernels and
terminals together (a control group of its own, autograder.hub.limits; where no memory group can be made, 2 GiB of
address space per process), 64 MiB of
/dev/shm (the rest of the sandbox's /dev read-only). What stays shared on one machine: the CPUs and disk (no quotas
are set: one student's runaway loop slows everyone), the kernel and its bugs, the exchange folder (its modes keep
students apart, not a separate service), the course's Python environment (read-only), and root, which runs the
hub and sees everything. The accounts' names and numbers are visible to all (/etc/passwd).

What a multi-machine deployment changes (Zero to JupyterHub on Kubernetes, for example):

- the spawner: KubeSpawner, each server a pod of its own on any node, with CPU and memory limits and its own
  volume; network policies replace the bridge (z2jh's singleuser.networkPolicy lets a pod reach the proxy and
  the hub's API only);
- the exchange: a shared folder between pods becomes an exchange service such as ngshare (nbgrader's
  ExchangeFactory pointed at ngshare_exchange), which checks who each request comes from instead of relying on
  file modes;
- the authenticator: PAM (``c.JupyterHub.authenticator_class = "pam"``) or your institution's OAuth
  (oauthenticator), keeping ``allowed_users`` and ``admin_users``; here any password is accepted;
- the students' image holds only the student wheel (``make student-wheel``), JupyterLab and nbgrader, never this
  repository; the grading runs on the instructor's machine (autograder.course.classroom, bubblewrap);
- ``bind_url``: the public address, behind TLS (``c.JupyterHub.ssl_cert`` / ``ssl_key`` or an ingress); the origin
  per user (``c.JupyterHub.subdomain_host``, below) then needs a wildcard DNS record and certificate for the domain
  (``python -m autograder.hub --public-url https://hub.school.edu``), and ``c.JupyterHub.cookie_host_prefix_enabled``.
"""

import os
import pwd
import sys
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner

from autograder.hub import limits
from autograder.lms.lti.hub_login import enable_if_configured

c = get_config()  # noqa: F821 (JupyterHub provides it)

HERE = Path(__file__).resolve().parent
BRIDGE = HERE.parent / "autograder" / "hub" / "bridge.py"  # imports nothing of ours: shown alone in a sandbox,
INNER_BRIDGE = Path("/opt/attention/bridge.py")  # here (not in the repository's folders, which the sandbox hides)
state = Path(os.environ["ATTENTION_HUB_STATE"])
private = state / "hub"  # root's only (autograder.hub.launch makes it, mode 700)
course_id = os.environ.get("ATTENTION_HUB_COURSE_ID", "attention")
instructor = os.environ.get("ATTENTION_HUB_INSTRUCTOR", "instructor")
students = [name for name in os.environ.get("ATTENTION_HUB_STUDENTS", "").split(",") if name]
public_port = int(os.environ.get("ATTENTION_HUB_PORT", "8000"))
public_url = os.environ.get("ATTENTION_HUB_PUBLIC_URL", f"http://localhost:{public_port}").rstrip("/")
hub_api_port, proxy_api_port, service_port = (int(port) for port in os.environ["ATTENTION_HUB_PORTS"].split(","))
bin_folder = Path(sys.executable).parent  # the environment JupyterHub runs in: jupyterhub-singleuser, alembic

# --- where it listens: 127.0.0.1 only ---------------------------------------------------------------------
c.JupyterHub.bind_url = f"http://127.0.0.1:{public_port}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub_api_port
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [os.environ["ATTENTION_HUB_PROXY"]]
c.ConfigurableHTTPProxy.pid_file = str(private / "proxy.pid")
c.Spawner.ip = "127.0.0.1"

# --- one origin per person ----------------------------------------------------------------------------------
# Each account's server is an origin of its own (http://student1.localhost:8000/user/student1/), the grading service
# another (http://grading--service.localhost:8000), the hub a third (http://localhost:8000): a page a student's server
# serves cannot read, frame or script the instructor's JupyterLab or a classmate's, whatever that page is. Browsers
# resolve every *.localhost name to the loopback; on a real domain, subdomain_host is https://hub.school.edu with a
# wildcard DNS record (*.hub.school.edu) and a wildcard certificate in front of 127.0.0.1 (README).
c.JupyterHub.subdomain_host = public_url
scheme, _, public_host = public_url.partition("://")
checks_url = f"{scheme}://grading--service.{public_host}/services/grading/"  # the grading service's pages
# the hub's pages: no other page keeps a hold on them through window.open (JupyterHub already sends frame-ancestors
# 'none'); the servers' and the service's say the same (hub/<role>/jupyter_server_config.json, autograder.service.app)
c.JupyterHub.tornado_settings = {"headers": {"Cross-Origin-Opener-Policy": "same-origin"}}
# nothing in an account's home configures its server: JupyterHub drops ~/.jupyter and ~/.local/share/jupyter from the
# server's search paths; give_role below sets the rest (the configuration folder, no user site-packages)
c.Spawner.disable_user_config = True

# --- what it keeps: all in the state folder, its secrets in root's own hub/ ----------------------------------
c.JupyterHub.db_url = f"sqlite:///{private / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(private / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(private / "jupyterhub.pid")
# stopping the hub stops the proxy and every user's server (the defaults, written down: nothing is left running)
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# --- who may log in ---------------------------------------------------------------------------------------
c.JupyterHub.authenticator_class = "dummy"  # any password: see above for a public server
c.Authenticator.allowed_users = {instructor, *students}
c.Authenticator.admin_users = {instructor}
# students from the LMS (autograder.lms.lti.hub_login): on when the secret shared with the LTI tool is there
enable_if_configured(c, state / "lti-hub-secret", staff={instructor})  # never signs in the instructor


# --- each account's server: a process of its own system account, in its home -----------------------------
class CourseSpawner(LocalProcessSpawner):
    """JupyterHub's LocalProcessSpawner; a student's server starts inside its own control group (autograder.hub.limits:
    memory, processes and CPU for the server, its kernels and terminals together), joined as root before it becomes
    the student, so no process of theirs can leave it."""

    def make_preexec_fn(self, name):
        become = super().make_preexec_fn(name)
        if role_of(name) != "student":
            return become
        bounds = limits.SERVER
        groups = limits.server_groups(name, bounds)

        def preexec():
            limits.enter(groups, bounds.memory)
            become()

        return preexec


c.JupyterHub.spawner_class = CourseSpawner
SERVER = [str(bin_folder / "jupyterhub-singleuser")]  # each account's Jupyter server
c.Spawner.cmd = SERVER
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120


def role_of(name: str) -> str:
    """The folder of hub/ whose configuration the account's server reads."""
    return "instructor" if name == instructor else "student"


def home_of(spawner) -> Path:
    """The account's home, as LocalProcessSpawner starts the server in it."""
    return Path(pwd.getpwnam(spawner.user.name).pw_dir)


def student_sandbox(spawner, command: list) -> list:
    """A student's server (and the kernels it starts) in bubblewrap, built from nothing (autograder.sandbox): the
    system and Python read-only, the course library and its data read-only, hub/student/ and the bridge's one file,
    the exchange's released assignments and feedback read-only, its inbound writable, the student's home writable.
    A network of its own: the bridge carries the proxy's connections in to the server and the server's (and its
    kernels') to the proxy's public port out, through two Unix sockets in ~/.bridge/; nothing else on the machine's
    127.0.0.1 is there. Not there either: the repository (solutions, hidden checks, the grader), the instructor's
    course and gradebook, other students' homes. Without bubblewrap the server does not start, and says why."""
    import lib
    from autograder import sandbox

    home, exchange = home_of(spawner), state / "exchange" / course_id
    doors = home / ".bridge"
    inbound, outbound = doors / "in.sock", doors / "out.sock"
    library = Path(lib.__file__).resolve().parent
    readable = {folder: folder for folder in (library, lib.data_folder(), HERE / "student")} | {INNER_BRIDGE: BRIDGE}
    readable |= {exchange / "outbound": exchange / "outbound", exchange / "feedback": exchange / "feedback"}
    view = sandbox.Sandbox(writable=(home, exchange / "inbound"), readable=readable, cwd=home, network=False)
    port = spawner.port
    inside = [sys.executable, str(INNER_BRIDGE), "--forward", f"unix:{inbound}=tcp:{port}"]
    inside += ["--forward", f"tcp:{public_port}=unix:{outbound}", "--", *command]
    outside = [sys.executable, str(BRIDGE), "--forward", f"tcp:{port}=unix:{inbound}"]
    outside += ["--forward", f"unix:{outbound}=tcp:{public_port}", "--"]
    return outside + sandbox.command(inside, view)


def student_home(spawner) -> Path:
    """The folders the hub makes in a student's home before their server starts, handed to the student: the
    exchange as their sandbox sees it (a root of their own, nbgrader wants it writable, whose <course>/outbound,
    inbound and feedback lead to the course's), TMPDIR (the sandbox's /tmp is read-only) and the bridge's doors.
    Root makes them through folder descriptors (autograder.hub.folders): a link or a file the student left at one
    of these names is moved aside, never followed, so nothing outside the home is touched."""
    from autograder.hub import folders

    name, home = spawner.user.name, home_of(spawner)
    account = pwd.getpwnam(name)
    ids, moved = {"uid": account.pw_uid, "gid": account.pw_gid}, []
    opened = [folders.open_folder(home)]  # the home's parent is the hub's: the home itself is the account's folder
    try:
        for folder in (".tmp", ".bridge"):
            os.close(folders.made_for(opened[0], folder, **ids, moved=moved))
        opened.append(folders.made_for(opened[0], ".exchange", **ids, moved=moved))
        opened.append(folders.made_for(opened[1], course_id, **ids, moved=moved))
        for folder in ("outbound", "inbound", "feedback"):
            folders.linked(opened[2], folder, state / "exchange" / course_id / folder, **ids, moved=moved)
    finally:
        for handle in opened:
            os.close(handle)
    for was, now in moved:
        spawner.log.warning("%s's home: %s was not the hub's folder; moved aside to %s", name, was, now)
    return home / ".exchange"


def give_role(spawner) -> None:
    """Before a server starts: its role's configuration first on JUPYTER_CONFIG_PATH, the exchange, the course;
    a student's server in its sandbox, talking to the hub through the proxy."""
    from jupyterhub.utils import random_port

    role = role_of(spawner.user.name)
    home = home_of(spawner)
    environment = {
        "PATH": os.pathsep.join([str(bin_folder), os.environ.get("PATH", "")]),  # nbgrader runs alembic
        "JUPYTER_CONFIG_PATH": str(HERE / role),
        # nothing under ~ changes what the server serves: its configuration folder is the role's (read-only), not
        # ~/.jupyter; no user site-packages (~/.local/lib/python3.X, a .pth or usercustomize there) is imported;
        # JupyterLab's own preferences (user settings, workspaces) stay in the home, for that person's Lab only
        "JUPYTER_CONFIG_DIR": str(HERE / role),
        "PYTHONNOUSERSITE": "1",
        "JUPYTERLAB_SETTINGS_DIR": str(home / ".jupyter" / "lab" / "user-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / ".jupyter" / "lab" / "workspaces"),
        "ATTENTION_HUB_EXCHANGE": str(state / "exchange"),
        "ATTENTION_HUB_COURSE_ID": course_id,
    }
    if role == "instructor":
        environment["ATTENTION_HUB_COURSE"] = str(state / "home" / instructor / course_id)
    else:
        environment["ATTENTION_HUB_EXCHANGE"] = str(student_home(spawner))
        # the verdict in the student's JupyterLab (labextension/'s attention_checks): their server asks the grading
        # service through the proxy, as the student, with its own token (server_token_scopes below)
        environment["ATTENTION_HUB_CHECKS_URL"] = checks_url
        environment["ATTENTION_HUB_PROXY_URL"] = c.JupyterHub.bind_url
        environment["TMPDIR"] = str(home / ".tmp")
        spawner.port = spawner.port or random_port()  # the bridge listens on it, the server behind it
        spawner.hub_connect_url = c.JupyterHub.bind_url  # the hub's API through the proxy: the one door out
        spawner.cmd = student_sandbox(spawner, SERVER)
    spawner.environment = {**spawner.environment, **environment}  # a copy: the configured dict is shared


c.Spawner.pre_spawn_hook = give_role


# --- the grading service: each Submit checked within seconds (autograder.service.app) -------------------------
# A service the hub starts, as the instructor's account (it reads the exchange's inbound folder and writes its
# attempts into the course's database, beside nbgrader's gradebook), on 127.0.0.1 behind the proxy at
# /services/grading/. The hub's OAuth tells it who asks: a student sees their own attempts, the instructor all.
# It checks every assignment of the course's source/, each Submit by its own assignment's checks
# (autograder.service.checkers); an assignment whose own checks fail holds its Submits and stops no other.
course_folder = state / "home" / instructor / course_id
c.JupyterHub.services = [
    {
        "name": "grading",
        "display": True,  # in the hub's Services menu (File > Hub Control Panel in JupyterLab)
        "url": f"http://127.0.0.1:{service_port}",
        "user": instructor,
        "cwd": str(course_folder),
        "oauth_no_confirm": True,
        "command": [
            sys.executable,
            "-m",
            "autograder.service",
            *("--course", str(course_folder), "--exchange", str(state / "exchange" / course_id)),
            *("--instructors", instructor, "--students", ",".join(students), "--port", str(service_port)),
        ],
        "environment": {
            "PATH": os.pathsep.join([str(bin_folder), "/usr/local/bin", "/usr/bin", "/bin"]),
            "OPENBLAS_NUM_THREADS": "1",
            "ATTENTION_UNSANDBOXED": os.environ.get("ATTENTION_UNSANDBOXED", ""),
        },
    }
]
# every account may open the service (it decides what each one sees)
c.JupyterHub.load_roles = [{"name": "user", "scopes": ["self", "access:services!service=grading"]}]
# a server's own token (JUPYTERHUB_API_TOKEN) opens the service too, as its owner: the student's JupyterLab shows
# their newest verdict through their own server (labextension/attention_checks), never by a request across origins;
# the token can do nothing its owner cannot (JupyterHub keeps the scopes the owner holds) and names no one else
c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server", "access:services!service=grading"]
