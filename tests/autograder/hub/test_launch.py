"""The course on JupyterHub (autograder.hub.launch, hub/jupyterhub_config.py), and the whole nbgrader round trip
driven in Debian's Chromium through Playwright, on a course of two assignments (attention and positions): release
both in Formgrader; three students fetch, validate and submit attention (complete, a typical mistake, blank), and one
of them positions too, each Submit checked by its own assignment's checks in the grading service; collect; grade
with autograder.course.classroom on what nbgrader collected; hand-grade in Formgrader; regenerate and release
feedback; each student fetches it and reads their verdicts; then the course's term and a review (term_and_appeals):
student2's extension and late days set on the instructor's page, shown in student2's Lab and checks page and spent
there, a review asked, graded again and decided on the hub's pages, and student3 refused on each of student2's.

The browser test needs chromium, Playwright, JupyterHub and configurable-http-proxy (CI installs them: .ci/run);
without one it is skipped with the reason. Screenshots are saved under the test's temporary folder
(screenshots/NN-what.png) and their names printed.
"""

from __future__ import annotations

import csv
import datetime
import grp
import json
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CHROMIUM, accounts_or_skip, playwright_or_skip
from hub_config import Spawner, pre_spawn_hook

from autograder import REPOSITORY, sandbox
from autograder.hub import launch as hub

SUBMISSIONS = REPOSITORY / "examples" / "submissions"
# what each student hands in: the example submissions' notebooks, as if each had written them in JupyterLab
HANDED_IN = {"student1": "full_solution", "student2": "mask_after_softmax", "student3": "blank_release"}
WRITTEN = ["answer_scaling_prediction", "answer_read_a_head", "answer_copy_prediction", "answer_mask_after_softmax"]
LATE_DAYS = 2  # the course's late days for the term (c.LateDays.tokens): what student1 and student3 have
HAND_SCORES = {"answer_scaling_prediction": 1, "answer_read_a_head": 1, "answer_copy_prediction": 0.5,
               "answer_mask_after_softmax": 1}  # fmt: skip


def test_role_configurations_give_students_no_instructor_tools():
    student = json.loads((REPOSITORY / "hub/student/jupyter_server_config.json").read_text())["ServerApp"]
    assert student["jpserver_extensions"]["nbgrader.server_extensions.formgrader"] is False
    assert student["jpserver_extensions"]["nbgrader.server_extensions.course_list"] is False
    assert student["jpserver_extensions"]["nbgrader.server_extensions.assignment_list"] is True
    disabled = json.loads((REPOSITORY / "hub/student/labconfig/page_config.json").read_text())["disabledExtensions"]
    for plugin in ("formgrader", "create-assignment", "course-list"):
        assert disabled[f"@jupyter/nbgrader:{plugin}"] is True
    instructor = json.loads((REPOSITORY / "hub/instructor/jupyter_server_config.json").read_text())["ServerApp"]
    assert instructor["jpserver_extensions"]["nbgrader.server_extensions.formgrader"] is True
    # the verdict in JupyterLab (labextension/): a student's server asks the service for them; an instructor's not,
    # and the instructor's Lab leaves the verdict's plugin out (the feedback and Validate plugins stay); the
    # instructor's server states Generate's and Collect's result first (attention_checks.formgrader)
    assert student["jpserver_extensions"]["attention_checks"] is True
    assert "attention_checks" not in instructor["jpserver_extensions"]
    assert instructor["jpserver_extensions"]["attention_checks.formgrader"] is True
    assert "attention_checks.formgrader" not in student["jpserver_extensions"]
    teacher_page = json.loads((REPOSITORY / "hub/instructor/labconfig/page_config.json").read_text())
    assert teacher_page["disabledExtensions"]["@attention-course/checks:verdict"] is True
    assert not any(name.startswith("@attention-course/") for name, off in disabled.items() if off)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def owner(path: Path) -> str:
    return pwd.getpwuid(path.lstat().st_uid).pw_name


def test_prepare_makes_accounts_private_homes_the_exchange_and_the_course(open_state, monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    due = datetime.datetime(2026, 12, 14, 17, 0)
    course = hub.prepare(open_state, hub.student_names(2), due)
    homes = open_state / "home"
    assert sorted(p.name for p in homes.iterdir()) == ["instructor", "student1", "student2"]
    for name in ("instructor", "student1", "student2"):
        account = pwd.getpwnam(name)
        assert account.pw_dir == str(homes / name) and account.pw_gecos == hub.ACCOUNT_NOTE
        assert owner(homes / name) == name and mode(homes / name) == 0o700, name
    assert mode(open_state / "hub") == 0o700 and owner(open_state / "hub") == "root"
    for name in ("student1", "student2"):  # the instructor's collect reads submissions through the student's group
        assert grp.getgrnam(name).gr_mem == ["instructor"], name
    exchange = open_state / "exchange"
    assert mode(exchange) == 0o1777
    assert {folder: mode(exchange / "attention" / folder) for folder in ("outbound", "inbound", "feedback")} == {
        "outbound": 0o755, "inbound": 0o3733, "feedback": 0o711
    }  # fmt: skip
    assert owner(exchange / "attention" / "inbound") == "instructor"
    assert course == homes / "instructor" / "attention"
    assert owner(course) == "instructor" and mode(course) == 0o700
    assert {owner(path) for path in course.rglob("*")} == {"instructor"}
    assert (course / "source" / "attention" / "attention.ipynb").is_file()
    assert (course / "source" / "attention" / "checks" / "__init__.py").is_file()  # the instructor's side: graded here
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert gradebook.find_assignment("attention").duedate == due
    hub.prepare(open_state, hub.student_names(2), None)  # a second start keeps the course and its gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert gradebook.find_assignment("attention").duedate == due


def test_the_hub_serves_every_assignment_of_the_courses_source_folder(open_state, tmp_path):
    source = tmp_path / "source"
    for name in ("week1", "week2"):
        shutil.copytree(REPOSITORY / "source" / "attention", source / name)
    (source / "notes").mkdir()  # a folder without a notebook and checks.py is not an assignment
    course = hub.prepare(open_state, ["student1"], source=source, course_id="ml101")
    assert course == open_state / "home" / "instructor" / "ml101"
    assert sorted(p.name for p in (course / "source").iterdir()) == ["week1", "week2"]
    assert (open_state / "exchange" / "ml101" / "inbound").is_dir()
    with pytest.raises(hub.HubError, match="holds no assignment"):
        hub.prepare(open_state, ["student1"], source=source / "notes")


def test_a_package_of_checks_without_its_init_is_named_not_silently_left_out(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(REPOSITORY / "source" / "attention", source / "week1", ignore=shutil.ignore_patterns("__*"))
    assert not (source / "week1" / "checks" / "__init__.py").exists()
    with pytest.raises(hub.HubError, match=r"week1/checks/ has no __init__\.py"):
        hub.course_assignments(source)
    shutil.copy(REPOSITORY / "source" / "attention" / "checks" / "__init__.py", source / "week1" / "checks")
    assert hub.course_assignments(source) == ["week1"]


def test_an_account_the_hub_did_not_make_is_never_taken_over(open_state):
    name = "attnforeign"
    subprocess.run(["useradd", "--no-create-home", "--comment", "someone", name], check=True)
    try:
        with pytest.raises(hub.HubError, match=f"an account '{name}' already exists .* \\(userdel {name}\\)"):
            hub.ensure_account(name, open_state / "home" / name)
        assert pwd.getpwnam(name).pw_gecos == "someone"
    finally:
        subprocess.run(["userdel", name], check=True)


def test_without_root_the_hub_says_to_run_it_as_root(monkeypatch):
    monkeypatch.setattr(hub.os, "geteuid", lambda: 1000)
    assert "run it as root (sudo make hub" in hub.why_no_accounts()
    monkeypatch.setattr(hub.os, "geteuid", lambda: 0)
    monkeypatch.setattr(hub.shutil, "which", lambda name: None)
    assert hub.why_no_accounts() == "useradd is missing: install it (apt-get install passwd), then start the hub again"


def test_a_folder_closed_to_other_accounts_is_named_with_what_to_do(tmp_path):
    closed = tmp_path / "closed"
    (closed / "state").mkdir(parents=True)
    closed.chmod(0o700)
    assert hub.why_unreachable(closed / "state").startswith(f"{closed} is closed to other accounts (mode 700)")


def test_a_missing_proxy_is_named_with_the_command_that_installs_it(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_HUB_PROXY", str(tmp_path / "nothing"))
    monkeypatch.setattr(hub, "LOCAL_PROXY", tmp_path / "nothing")
    monkeypatch.setattr(hub.shutil, "which", lambda name: None)
    with pytest.raises(hub.HubError, match=r"npm install --prefix \.hub/node configurable-http-proxy"):
        hub.proxy_program()


def test_a_students_server_starts_in_its_sandbox_with_its_own_network_and_the_instructors_does_not(
    open_state, monkeypatch
):
    if sandbox.bubblewrap() is None:
        pytest.skip("bubblewrap is not available (apt-get install bubblewrap)")
    if hub.why_unavailable() is not None:
        pytest.skip(hub.why_unavailable())
    monkeypatch.delenv(sandbox.UNSANDBOXED, raising=False)
    hub.prepare(open_state, ["student1"])
    hook = pre_spawn_hook(open_state, monkeypatch)
    student = Spawner("student1")
    hook(student)
    home = open_state / "home" / "student1"
    bwrap = student.cmd.index(sandbox.bubblewrap())
    outside, inside = student.cmd[:bwrap], student.cmd[bwrap:]
    assert outside[1].endswith("autograder/hub/bridge.py") and student.cmd[-1].endswith("/bin/jupyterhub-singleuser")
    port, public = student.port, os.environ["ATTENTION_HUB_PORT"]
    assert (
        f"tcp:{port}=unix:{home}/.bridge/in.sock" in outside and f"unix:{home}/.bridge/out.sock=tcp:{public}" in outside
    )
    assert (
        f"unix:{home}/.bridge/in.sock=tcp:{port}" in inside and f"tcp:{public}=unix:{home}/.bridge/out.sock" in inside
    )
    assert "--share-net" not in inside and "--unshare-all" in inside  # a network of its own
    assert inside[inside.index("--") + 2] == "/opt/attention/bridge.py"  # the bridge alone, not the repository
    assert student.hub_connect_url == f"http://127.0.0.1:{public}"  # the hub's API through the proxy
    shown = {inside[i + 2] for i, part in enumerate(inside) if part in ("--bind", "--ro-bind")}
    assert str(home) in shown and str(REPOSITORY / "lib") in shown
    assert not {str(REPOSITORY), str(REPOSITORY / "source"), str(open_state / "home" / "instructor")} & shown
    assert not {str(open_state / "hub"), str(open_state / "exchange")} & shown  # the hub's secrets, the whole exchange
    assert student.environment["ATTENTION_HUB_EXCHANGE"] == str(home / ".exchange")
    assert {owner(home / folder) for folder in (".exchange", ".exchange/attention", ".bridge", ".tmp")} == {"student1"}
    assert student.environment["JUPYTER_CONFIG_PATH"] == str(REPOSITORY / "hub" / "student")
    # nothing in the home configures the server: the role's folder is its configuration folder, no user site
    assert student.environment["JUPYTER_CONFIG_DIR"] == str(REPOSITORY / "hub" / "student")
    assert student.environment["PYTHONNOUSERSITE"] == "1"
    # the verdict in the student's JupyterLab: their server asks the service through the proxy (the one door out)
    assert student.environment["ATTENTION_HUB_PROXY_URL"] == f"http://127.0.0.1:{public}"
    assert student.environment["ATTENTION_HUB_CHECKS_URL"] == (
        f"http://grading--service.localhost:{public}/services/grading/"
    )
    teacher = Spawner("instructor")
    hook(teacher)
    assert teacher.cmd == ["jupyterhub-singleuser"] and teacher.hub_connect_url is None
    assert teacher.environment["ATTENTION_HUB_COURSE"] == str(open_state / "home" / "instructor" / "attention")


def test_every_account_the_service_and_the_hub_are_origins_of_their_own(open_state, monkeypatch):
    """JupyterHub's subdomain_host: the hub at http://localhost:PORT, each account's server at
    http://<account>.localhost:PORT, the grading service at http://grading--service.localhost:PORT; each server's and
    the hub's pages keep popups and other origins' frames out; no server reads configuration from its home."""
    if hub.why_unavailable() is not None:
        pytest.skip(hub.why_unavailable())
    from traitlets.config.loader import PyFileConfigLoader

    course_hub = hub.Hub(open_state, ["student1"], port=8123)
    assert course_hub.url == "http://localhost:8123"
    assert course_hub.user_url("student1") == "http://student1.localhost:8123/user/student1/"
    assert course_hub.service_url() == "http://grading--service.localhost:8123/services/grading/"
    assert hub.Hub(open_state, [], public_url="https://hub.school.edu/").user_url("ada") == (
        "https://ada.hub.school.edu/user/ada/"
    )
    for name, value in course_hub.environment().items():
        if name.startswith("ATTENTION_HUB_"):
            monkeypatch.setenv(name, value)
    config = PyFileConfigLoader(hub.CONFIG.name, path=str(hub.CONFIG.parent)).load_config()
    assert config.JupyterHub.subdomain_host == "http://localhost:8123"
    assert config.JupyterHub.bind_url == "http://127.0.0.1:8123"  # it listens on the loopback only
    assert config.JupyterHub.tornado_settings["headers"] == {"Cross-Origin-Opener-Policy": "same-origin"}
    assert config.Spawner.disable_user_config is True
    # a server's own token opens the grading service as its owner (the verdict in their Lab), and nothing more
    assert config.Spawner.server_token_scopes == [
        "users:activity!user",
        "access:servers!server",
        "access:services!service=grading",
    ]
    for role in ("instructor", "student"):
        settings = json.loads((REPOSITORY / "hub" / role / "jupyter_server_config.json").read_text())
        assert settings["ServerApp"]["tornado_settings"]["headers"] == {
            "Content-Security-Policy": "frame-ancestors 'self'",  # Formgrader in the instructor's own Lab only
            "Cross-Origin-Opener-Policy": "same-origin",
        }, role
        # jupyter_core's marker, which a server cannot write: it never copies ~/.ipython's configuration in here
        assert (REPOSITORY / "hub" / role / "migrated").is_file(), role


def test_without_bubblewrap_a_students_server_does_not_start_and_says_why(open_state, monkeypatch):
    if hub.why_unavailable() is not None:
        pytest.skip(hub.why_unavailable())
    monkeypatch.delenv(sandbox.UNSANDBOXED, raising=False)
    monkeypatch.setattr(sandbox, "bubblewrap", lambda: None)
    hub.prepare(open_state, ["student1"])
    hook = pre_spawn_hook(open_state, monkeypatch)
    with pytest.raises(sandbox.SandboxUnavailable, match="bubblewrap"):
        hook(Spawner("student1"))
    hook(Spawner("instructor"))  # the instructor's own server is not sandboxed


def test_a_due_date_is_kept_in_utc_as_nbgrader_keeps_it():
    assert hub.parse_due("2026-12-14 17:00") == datetime.datetime(2026, 12, 14, 17, 0)
    assert hub.parse_due("2026-12-14T17:00+01:00") == datetime.datetime(2026, 12, 14, 16, 0)
    with pytest.raises(Exception, match="is not a date and time such as 2026-12-14 17:00"):
        hub.parse_due("next friday")


def test_a_taken_port_is_refused_with_what_to_do(tmp_path):
    if hub.why_unavailable() is not None:
        pytest.skip(hub.why_unavailable())
    accounts_or_skip()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(hub.HubError, match=rf"port {port} on 127.0.0.1 is taken: choose another with --port"):
            hub.Hub(tmp_path, ["student1"], port).start()
    assert hub.processes_in(tmp_path.resolve()) == []


def test_the_command_refuses_a_class_without_students(capsys):
    with pytest.raises(SystemExit) as stopped:
        hub.main(["--students", "0"])
    assert stopped.value.code == 2 and "--students must be at least 1" in capsys.readouterr().err


def test_a_state_folder_that_is_a_file_or_holds_another_course_is_refused(tmp_path, capsys):
    tmp_path.chmod(0o711)  # passed through by the accounts (pytest's own folder above it is not)
    afile = tmp_path / "state"
    afile.write_text("not a folder")
    assert hub.main(["--state", str(afile)]) == 1
    assert f"FAILED: cannot use the state folder {afile}" in capsys.readouterr().err
    other = tmp_path / "other" / "home" / "instructor" / "attention"
    other.mkdir(parents=True)
    (other / "notes.txt").write_text("someone's files")
    assert hub.main(["--state", str(tmp_path / "other")]) == 1
    assert "is not a course folder made by autograder.course.classroom" in capsys.readouterr().err
    assert (other / "notes.txt").read_text() == "someone's files"


# --- the round trip in a browser --------------------------------------------------------------------------------


def browser_or_skip():
    playwright = playwright_or_skip()
    why = hub.why_unavailable()
    if why is not None:
        pytest.skip(why)
    return playwright


class Shots:
    """Screenshots under the test's folder, numbered in the order taken."""

    def __init__(self, folder: Path):
        self.folder, self.names, self.phases, self.since = folder, [], [], time.monotonic()
        folder.mkdir(parents=True, exist_ok=True)

    def phase(self, what: str) -> None:
        """The time since the last phase ended, for the test's report."""
        now = time.monotonic()
        self.phases.append(f"{what} {now - self.since:.0f} s")
        self.since = now

    def __call__(self, page, what: str, **options) -> None:
        name = f"{len(self.names) + 1:02d}-{what}.png"
        page.screenshot(path=str(self.folder / name), **options)
        self.names.append(name)


def start_login(browser, hub_url: str, name: str):
    """A new browser session that has asked to log in as ``name`` (the hub then starts its server)."""
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.set_default_timeout(120_000)
    listen(page)
    page.goto(f"{hub_url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", "any password")
    page.click("#login_submit", no_wait_after=True)
    return page


def listen(page) -> None:
    """What ``page`` hears, kept in ``page.heard`` with the time since it opened: where it went, its console (the
    hub's spawn page logs each progress event it receives), the answers to its requests to the hub (the progress
    event stream among them) and its requests that failed. Saved beside the screenshots when the test fails."""
    page.heard, opened = [], time.monotonic()

    def note(what: str) -> None:
        page.heard.append(f"{time.monotonic() - opened:7.1f} s  {what}")

    page.on("framenavigated", lambda frame: note(f"at {frame.url}") if frame == page.main_frame else None)
    page.on("console", lambda message: note(f"console {message.type}: {message.text[:300]}"))
    page.on("requestfailed", lambda request: note(f"failed {request.method} {request.url}: {request.failure}"))

    def answered(answer) -> None:
        if "/hub/" in answer.url and "/static/" not in answer.url:
            note(f"{answer.status} {answer.request.method} {answer.url}")

    page.on("response", answered)


def keep_evidence(browser, course_hub: hub.Hub, shots: Shots) -> None:
    """What the test saw when it failed, beside the screenshots: each page's screenshot, what it heard (listen) and
    the hub's REST view of its account (/hub/api/user, with that page's own login: pending, ready, progress_url),
    and the hub's whole log (each server's output is in it: LocalProcessSpawner's servers write to the hub's
    stdout); the log's last 80 lines and each account's server state are printed."""
    from playwright.sync_api import Error as Unanswered  # here: Playwright is optional (the test skips without it)

    for number, page in enumerate(p for context in browser.contexts for p in context.pages):
        shots(page, f"failed-page-{number}")  # what each page showed when the test stopped
        try:
            answer = page.context.request.get(f"{course_hub.url}/hub/api/user", timeout=20_000)
            view = answer.json() if answer.ok else {"status": answer.status, "body": answer.text()[:500]}
        except Unanswered as error:  # the hub did not answer: said as the view
            view = {"unanswered": str(error)[:500]}
        servers = {name: {key: server.get(key) for key in ("pending", "ready", "started", "progress_url")}
                   for name, server in (view.get("servers") or {}).items()}  # fmt: skip
        print(f"page {number} at {page.url}: {view.get('name')} pending={view.get('pending')} servers={servers}")
        heard = getattr(page, "heard", [])
        lines = [f"url: {page.url}", f"/hub/api/user: {json.dumps(view, indent=1)}", "heard:", *heard]
        (shots.folder / f"failed-page-{number}.txt").write_text("\n".join(lines) + "\n")
    said = course_hub.log.read_text(errors="replace")
    (shots.folder / "jupyterhub.log").write_text(said)
    print(f"the hub's log ({shots.folder / 'jupyterhub.log'}), its last 80 lines:", *said.splitlines()[-80:], sep="\n")


def on_lab(page, name: str):
    """``page`` once ``name``'s JupyterLab has loaded."""
    page.wait_for_url(f"**/user/{name}/lab**")
    page.wait_for_selector(".jp-LabShell")
    return page


def log_in(browser, hub_url: str, name: str):
    return on_lab(start_login(browser, hub_url, name), name)


INSTRUCTOR_TOOLS = {f"@jupyter/nbgrader:{plugin}" for plugin in ("formgrader", "create-assignment", "course-list")}


def disabled_plugins(page) -> set:
    """The JupyterLab plugins the server told this page to leave out (its page configuration)."""
    config = json.loads(page.locator("#jupyter-config-data").text_content())
    disabled = config.get("disabledExtensions", [])
    return set(disabled if isinstance(disabled, list) else [name for name, off in disabled.items() if off])


def open_assignment_list(page):
    page.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    items = [label for label in page.locator(".lm-Menu-content .lm-Menu-itemLabel").all_inner_texts() if label]
    page.click(".lm-Menu-content .lm-Menu-itemLabel:text-is('Assignment List')")
    page.wait_for_selector("#released_assignments_list")
    return items


def server_of(course_hub: hub.Hub, account: str) -> int:
    """The process of ``account``'s Jupyter server (inside its sandbox, for a student)."""
    for pid in sandbox.descendants(course_hub.process.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            environment = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(part.endswith(b"bridge.py") for part in command[:2]) or command[0].endswith(b"bwrap"):
            continue  # the bridge's two halves and the sandbox around the server
        if f"JUPYTERHUB_USER={account}".encode() in environment:
            if any(part.endswith(b"jupyterhub-singleuser") for part in command):
                return pid
    raise AssertionError(f"no server of {account} among the hub's processes")


def what_a_server_sees(pid: int, path: Path) -> bool:
    """Whether ``path`` exists in the files the process ``pid`` sees (its sandbox's view)."""
    return (Path(f"/proc/{pid}/root") / Path(path).relative_to("/")).exists()


def server_port(pid: int) -> int:
    """The port the server ``pid`` listens on (inside its own network, for a student's)."""
    environment = dict(
        line.split("=", 1) for line in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in line
    )
    return int(environment["JUPYTERHUB_SERVICE_URL"].split(":")[2].split("/")[0])


def in_terminal(page, base: str, command: str, timeout_ms: int = 60_000) -> str:
    """What ``command`` prints in a new terminal of the server at ``base`` (JupyterLab's terminal API, from the
    student's own logged-in page); the output ends when the shell prints END-OF-2."""
    return page.evaluate(
        """async ([base, command, timeout]) => {
            const xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || "";
            const made = await fetch(base + "api/terminals", {method: "POST", headers: {"X-XSRFToken": xsrf}});
            const {name} = await made.json();
            const socket = new WebSocket(base.replace(/^http/, "ws") + "terminals/websocket/" + name);
            let out = "";
            return await new Promise((resolve) => {
                setTimeout(() => resolve(out + "\\n(timed out)"), timeout);
                socket.onmessage = (event) => {
                    const [kind, text] = JSON.parse(event.data);
                    if (kind !== "stdout") return;
                    out += text;
                    if (out.includes("END-OF-2")) { socket.close(); resolve(out); }
                };
                socket.onopen = () => socket.send(JSON.stringify(["stdin", command + "\\r"]));
            });
        }""",
        [base, command, timeout_ms],
    )


ATTACK = """
import json, os, socket, sys
inbound, other, checks, secret, ports, public, own = sys.argv[1:8]
tried = {}
def attempt(what, action):
    try:
        action()
        tried[what] = "done"
    except OSError as error:
        tried[what] = type(error).__name__
attempt("list inbound", lambda: os.listdir(inbound))
attempt("read another's submission", lambda: open(os.path.join(inbound, other, "timestamp.txt")).read())
attempt("write into another's submission", lambda: open(os.path.join(inbound, other, "attention.ipynb"), "w"))
attempt("delete another's submission", lambda: os.rename(os.path.join(inbound, other), os.path.join(inbound, "x")))
attempt("read checks.py", lambda: open(checks).read())
attempt("read the cookie secret", lambda: open(secret).read())
later = "2099-01-01 00:00:00.000000 UTC"
def forge():
    folder = os.path.join(inbound, "student1+attention+" + later + "+forged")
    os.mkdir(folder)
    open(os.path.join(folder, "attention.ipynb"), "w").write(open(own).read())
    open(os.path.join(folder, "timestamp.txt"), "w").write(later)
attempt("submit in student1's name", forge)
def plant():
    folder = os.path.join(inbound, "student3+attention+" + later + "+planted")
    os.mkdir(folder)
    os.symlink(checks, os.path.join(folder, "attention.ipynb"))
    os.symlink(secret, os.path.join(folder, "cookie.txt"))
    open(os.path.join(folder, "timestamp.txt"), "w").write(later)
attempt("plant links", plant)
for port in [*ports.split(","), public]:
    attempt(f"connect {port}", lambda: socket.create_connection(("127.0.0.1", int(port)), timeout=5).close())
print("ATTACK " + json.dumps(tried))
"""


def attack_from_a_terminal(
    page, course_hub: hub.Hub, course: Path, student: str, victim: str
) -> tuple[dict, list[int]]:
    """``student`` runs ATTACK in a terminal of their own server (in its sandbox): what each attempt came to."""
    home = course_hub.state / "home" / student
    script = home / "attack.py"
    script.write_text(ATTACK)
    account = pwd.getpwnam(student)
    os.chown(script, account.pw_uid, account.pw_gid)
    inbound = course_hub.state / "exchange" / "attention" / "inbound"
    other = max(entry.name for entry in inbound.iterdir() if entry.name.startswith(f"{victim}+attention+"))
    ports = [course_hub.api_port, course_hub.proxy_api_port]
    ports += [server_port(server_of(course_hub, "instructor")), server_port(server_of(course_hub, victim))]
    arguments = [inbound, other, course / "source" / "attention" / "checks" / "__init__.py"]
    arguments += [course_hub.state / "hub" / "jupyterhub_cookie_secret", ",".join(map(str, ports)), course_hub.port]
    arguments += [home / "attention" / "attention.ipynb"]
    command = (
        f"{hub.runtime()} {script} " + " ".join(f"'{argument}'" for argument in arguments) + "; echo END-OF-$((1+1))"
    )
    said = in_terminal(page, course_hub.user_url(student), command)
    found = [line for line in said.splitlines() if line.startswith("ATTACK {")]
    assert len(found) == 1, f"the terminal said: {said!r}"
    (line,) = found
    return json.loads(line.removeprefix("ATTACK ")), ports


def files_of(folder: Path) -> dict:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def as_instructor(*options: str) -> subprocess.CompletedProcess:
    """``python -m autograder.course`` as the instructor's account, as the README says to grade on the hub: the
    course is theirs alone, and Formgrader (the instructor's server) goes on writing its gradebook."""
    from autograder.grading.forward import FORWARD_CACHE_HOME

    unsandboxed = [] if sandbox.bubblewrap() is not None else ["--unsandboxed"]
    command = ["runuser", "-u", hub.INSTRUCTOR, "--", str(hub.runtime()), "-m", "autograder.course", *options]
    home = pwd.getpwnam(hub.INSTRUCTOR).pw_dir  # the instructor's own caches (the suite's is root's alone)
    environment = {name: value for name, value in os.environ.items() if name != FORWARD_CACHE_HOME} | {"HOME": home}
    return subprocess.run(
        [*command, *unsandboxed], cwd=REPOSITORY, env=environment, capture_output=True, text=True, timeout=900
    )


# the page's transitions that end (a spinner's never does) once they have ended
FADED_IN = """() => Promise.all(document.getAnimations()
    .filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity).map((a) => a.finished))"""


def formgrader_row(page, assignment: str):
    """``assignment``'s row in Formgrader's Manage Assignments table."""
    return page.locator(f"#main-table tr:has(td.name a:text-is({assignment!r}))")


def formgrader_action(page, column: str, success: str, shot=None, assignment: str = "attention") -> str:
    """Click ``assignment``'s ``column`` action in Manage Assignments; the dialog's text once it says ``success``
    (``shot``, when given, is called with nothing before the dialog is closed: a screenshot of it)."""
    formgrader_row(page, assignment).locator(f"td.{column} a").click()
    page.wait_for_selector(f".modal-body:has-text({success!r})")
    text = page.inner_text(".modal-body")
    if shot is not None:  # once the dialog has faded in whole (Bootstrap's transitions)
        page.wait_for_selector(".modal.in")
        page.evaluate(FADED_IN)
        shot()
    page.locator(".modal-footer button").first.click()
    page.wait_for_selector(".modal-body", state="detached")
    return text


def test_the_round_trip_in_a_browser(tmp_path, open_state):
    playwright = browser_or_skip()
    if sandbox.bubblewrap() is None:
        pytest.skip("bubblewrap is not available (apt-get install bubblewrap): a student's server starts only in it")
    state, shots = open_state, Shots(tmp_path / "screenshots")
    students = list(HANDED_IN)
    due = datetime.datetime.now() - datetime.timedelta(days=1)  # every submission is late: the columns are filled
    source = tmp_path / "source"  # the course's two assignments: Formgrader's table has a row for each
    for assignment in ("attention", "positions"):
        shutil.copytree(
            REPOSITORY / "source" / assignment, source / assignment, ignore=shutil.ignore_patterns("__pycache__")
        )
    course = hub.prepare(state, students, due, source=source)
    with open(course / "nbgrader_config.py", "a") as config:  # the instant checks' policy (autograder.service.instant)
        config.write(
            "\nc.InstantChecks.attempts = 2  # per hour: student1's third Submit waits\n"
            "c.InstantChecks.check_after_due = True  # every Submit here is late (see due above)\n"
            "c.InstantChecks.after_due = 'verdicts'\n"
            f"c.LateDays.tokens = {LATE_DAYS}  # each student's for the term (student2 is granted their own)\n"
        )
    started = time.monotonic()
    course_hub = hub.Hub(state, students, port=hub.free_port())
    course_hub.start()
    shots.phase("hub started")
    try:
        with playwright.sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            try:
                round_trip(browser, course_hub, course, shots)
            except Exception:
                keep_evidence(browser, course_hub, shots)
                listing = subprocess.run(["ls", "-lanR", state / "exchange"], capture_output=True, text=True).stdout
                print("the exchange:", listing[-6000:])
                raise
            finally:
                browser.close()
    finally:
        course_hub.stop()
        print(f"round trip: {time.monotonic() - started:.0f} s ({'; '.join(shots.phases)})")
        print(f"screenshots in {shots.folder}: {', '.join(shots.names)}")
    assert course_hub.left_behind == [], "the hub left processes running that Hub.stop had to stop"
    assert hub.processes_in(state) == [], "a process of the hub is still running"
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", course_hub.port)) != 0, "the hub's port still answers"


def save_score(page, grade_id: str, score: float, tries: int = 3) -> bool:
    """Type a hand score into Formgrader's box and leave it (Formgrader saves on change), as often as a person
    would until the save (its PUT) succeeds; on a busy machine the page's scripts may bind the box late."""
    from playwright.sync_api import TimeoutError as NoAnswer

    box = page.locator(f"input.score#{grade_id}")
    for attempt in range(tries):
        if attempt:  # not saved: the page again, as a person would reload it
            page.reload(wait_until="networkidle")
        try:
            with page.expect_response(lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT") as put:
                box.fill(str(score))
                box.press("Tab")
        except NoAnswer:
            continue
        if put.value.ok:
            return True
    return False


def notebook_of(student: str) -> Path:
    return Path(pwd.getpwnam(student).pw_dir) / "attention" / "attention.ipynb"


# a fetch as JupyterLab's own: with the page's cookies and its XSRF token (JupyterHub refuses cookie-authenticated API
# requests without it)
AS_LAB = "{headers: {'X-XSRFToken': (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || ''}}"


def fetched_status(page, url: str) -> int:
    """The status of ``url`` fetched by ``page`` itself (its origin, its cookies: what the person's browser gets)."""
    return page.evaluate(f"async (url) => (await fetch(url, {AS_LAB})).status", url)


def fetched_headers(page, url: str) -> dict:
    """The headers of ``url`` fetched by ``page`` itself, names in lower case."""
    return page.evaluate(f"async (url) => Object.fromEntries((await fetch(url, {AS_LAB})).headers)", url)


def fetched_json(page, url: str, tries: int = 3):
    """``url`` fetched by ``page`` itself, as JSON; its own origin's reads only (never an attack's outcome), so a
    network error of a busy machine ("Failed to fetch") is tried again, twice, 2 s apart."""
    for attempt in range(tries):
        try:
            return page.evaluate(f"async (url) => (await fetch(url, {AS_LAB})).json()", url)
        except Exception as error:  # playwright's Error (re-raised): only a network error is tried again
            if "Failed to fetch" not in str(error) or attempt == tries - 1:
                raise
            time.sleep(2)


# A page of the attacking student's (student3's origin). Whatever student3's server serves is in student3's hands (it
# is their own process: a config of theirs, a patched module, a debugger on it), so the test lets the browser get
# this page as if student3's server had served it, with no security header at all, and checks that the pages of
# other origins keep it out. attackFrame: the victim's JupyterLab framed, then read; a file of the victim's read and a
# terminal opened with the victim's cookies. attackPopup: the button opens the victim's JupyterLab in a popup ("show
# the plot"), then the page reaches into it.
EVIL = """<!doctype html><title>the plot</title><h1>the plot</h1><button id="show">show the plot</button>
<pre id="tried"></pre>
<script>
window.tried = {};
async function attempt(what, action) {
  try { window.tried[what] = "done: " + String(await action()).slice(0, 300); }
  catch (error) { window.tried[what] = error.name || String(error); }
  document.getElementById("tried").textContent = "what this page tried: " + JSON.stringify(window.tried, null, 1);
}
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
window.attackFrame = async (lab, file, terminals) => {
  const frame = document.createElement("iframe");
  frame.width = 1000; frame.height = 500; frame.src = lab;
  document.body.append(frame);
  await pause(8000);
  await attempt("read the framed Lab", () => frame.contentWindow.document.body.innerText);
  await attempt("read a file", async () => (await fetch(file, {credentials: "include"})).text());
  await attempt("open a terminal", async () =>
    (await fetch(terminals, {method: "POST", credentials: "include"})).status);
  return window.tried;
};
document.getElementById("show").onclick = () => { window.opened = window.open(window.target, "plot"); };
window.attackPopup = async (file) => {
  await pause(3000);
  await attempt("reach into the popup", () => window.opened.document.body.innerText);
  await attempt("popup still held", () => String(!window.opened.closed));
  await attempt("read a file", async () => (await fetch(file, {credentials: "include"})).text());
  return window.tried;
};
</script>"""


def serve_as(context, url: str, body: str) -> None:
    """``context``'s browser gets ``body`` at ``url`` with no header but its type (as the origin's owner could)."""
    context.route(url, lambda route: route.fulfill(status=200, content_type="text/html", body=body))


def plant_home_config(home: Path, account: str) -> dict:
    """What student3 puts in their home before their server starts to change what it serves: a Jupyter server
    configuration in ~/.jupyter and in the user base's etc/jupyter, and a usercustomize in the user site-packages
    (it would leave a file behind when imported). Returns the marker file's path."""
    headers = {"X-Planted": "home config", "Content-Security-Policy": "frame-ancestors *"}
    planted = {"ServerApp": {"tornado_settings": {"headers": headers}}}
    version = subprocess.run(
        [str(hub.runtime()), "-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    marker = home / "usercustomize-ran"
    files = {
        home / ".jupyter" / "jupyter_server_config.json": json.dumps(planted),
        home / ".local" / "etc" / "jupyter" / "jupyter_server_config.json": json.dumps(planted),
        home / ".local" / "lib" / f"python{version}" / "site-packages" / "usercustomize.py": (
            f"open({str(marker)!r}, 'w').write('imported')\n"
        ),
    }
    account_entry = pwd.getpwnam(account)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for made in [path, *path.relative_to(home).parents]:
            os.chown(home / made, account_entry.pw_uid, account_entry.pw_gid)
    return {"marker": marker}


def attacks_across_origins(course_hub: hub.Hub, teacher, pages: dict, course: Path, shots: Shots) -> dict:
    """student3's page against the instructor's JupyterLab (framed) and against student1's (a popup), each in the
    victim's own logged-in browser; the same page on the instructor's origin shows what the origin boundary stops."""
    evil = f"{course_hub.user_url('student3')}evil"
    checks_file = f"{course_hub.user_url('instructor')}api/contents/attention/source/attention/checks/__init__.py"
    terminals = f"{course_hub.user_url('instructor')}api/terminals"
    outcomes = {}
    # the instructor opens the link a student sent: the Lab framed, checks.py read, a terminal opened?
    serve_as(teacher.context, evil, EVIL)
    attacker = teacher.context.new_page()
    attacker.goto(evil)
    lab = f"{course_hub.user_url('instructor')}lab"
    outcomes["instructor"] = attacker.evaluate("([l, f, t]) => attackFrame(l, f, t)", [lab, checks_file, terminals])
    framed = [frame for frame in attacker.frames if frame != attacker.main_frame]
    outcomes["instructor"]["the Lab shown in the frame"] = (
        "done" if framed and framed[0].locator(".jp-LabShell").count() else "refused"
    )
    shots(attacker, "attacker-frames-the-instructors-lab")
    attacker.close()
    # the control: the same page served from the instructor's own origin reads checks.py (the code works; only the
    # origin stops it)
    control = f"{course_hub.user_url('instructor')}same-origin-control"
    serve_as(teacher.context, control, EVIL)
    same_origin = teacher.context.new_page()
    same_origin.goto(control)
    read = f"async () => 'holds CHECKS: ' + (await (await fetch(f, {AS_LAB})).json()).content.includes('CHECKS')"
    outcomes["control"] = same_origin.evaluate(
        f"async (f) => {{ await attempt('read a file', {read}); return tried; }}", checks_file
    )
    same_origin.close()
    # no terminal was opened in the instructor's name
    outcomes["instructor's terminals"] = len(fetched_json(teacher, terminals))
    # student1 clicks "show the plot" on student3's page: their own Lab opens in a popup; can student3's page reach it?
    victim = pages["student1"]
    serve_as(victim.context, evil, EVIL)
    attacker = victim.context.new_page()
    attacker.goto(evil)
    attacker.evaluate("(url) => { window.target = url; }", f"{course_hub.user_url('student1')}lab")
    with victim.context.expect_page() as opened:
        attacker.click("#show")
    popup = opened.value
    popup.wait_for_selector(".jp-LabShell")  # student1's own JupyterLab, logged in, in the popup
    shots(popup, "a-classmates-lab-in-the-popup")
    notebook = f"{course_hub.user_url('student1')}api/contents/attention/attention.ipynb"
    outcomes["student1"] = attacker.evaluate("(f) => attackPopup(f)", notebook)
    shots(attacker, "attacker-popup-of-a-classmates-lab")
    popup.close()
    attacker.close()
    return outcomes


def listed(page, listing: str, assignment: str):
    """``assignment``'s row in the Assignment List's ``listing`` ('released', 'fetched' or 'submitted'), the row its
    name heads (nbgrader's rows: div.list_item, the name in its .item_name; a fetched assignment's name is the link
    that unfolds its notebooks, each a row of its own named by the notebook, often the assignment's name too)."""
    name = "a.assignment-notebooks-link" if listing == "fetched" else ".item_name > span"
    name = page.locator(f"#{listing}_assignments_list {name}:text-is({assignment!r})")
    return name.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' list_item ')][1]")


def submit(page, assignment: str = "attention") -> None:
    """Press ``assignment``'s Submit in the assignment list and wait for the new submission to be listed."""
    listed_before = page.locator("#submitted_assignments_list .list_item").count()
    listed(page, "fetched", assignment).locator("button:has-text('Submit')").click()
    page.wait_for_function(
        f"document.querySelectorAll('#submitted_assignments_list .list_item').length > {listed_before}",
        timeout=60_000,
    )


def shown_within(page, url: str, words: str, seconds: float = 120) -> float:
    """Seconds until the grading service's page at ``url`` shows ``words`` (reloaded each second)."""
    started = time.monotonic()
    page.goto(url)
    while words not in page.inner_text("body"):
        assert time.monotonic() - started < seconds, f"{words!r} not shown in {seconds} s: {page.inner_text('body')}"
        time.sleep(1)
        page.reload()
    return time.monotonic() - started


def lab_notification(page, words: str, seconds: float = 120):
    """The notification in ``page``'s JupyterLab that says ``words`` (labextension/: the verdict of the newest Submit),
    once it is shown."""
    toast = page.locator(f".Toastify__toast:has-text({words!r})").last
    toast.wait_for(timeout=seconds * 1000)
    toast.evaluate("(t) => Promise.all(t.getAnimations({subtree: true}).map((a) => a.finished))")  # slid in whole
    return toast


def fetch_outcome(page, url: str) -> str:
    """What ``page`` gets when its own script fetches ``url`` with its cookies: 'read: <body>' or the error's name."""
    return page.evaluate(
        """async (url) => {
            try { return 'read: ' + await (await fetch(url, {credentials: 'include'})).text(); }
            catch (error) { return error.name; }
        }""",
        url,
    )


def verdicts_in_the_lab_are_each_students_own(pages: dict, course_hub: hub.Hub) -> None:
    """student2's JupyterLab reads its own newest verdict through its own server; it cannot read student1's, neither
    from student1's server nor from the service's JSON (other origins, no CORS header)."""
    own = f"{course_hub.user_url('student2')}attention-checks/latest"
    mine = fetched_json(pages["student2"], own)
    assert mine["student"] == "student2" and mine["page"] == course_hub.service_url(), mine
    theirs = f"{course_hub.user_url('student1')}attention-checks/latest"
    assert fetch_outcome(pages["student2"], theirs) == "TypeError"
    assert fetch_outcome(pages["student2"], f"{course_hub.service_url()}api/latest") == "TypeError"


def instant_checks(pages: dict, course_hub: hub.Hub, shots: Shots) -> None:
    """The grading service (autograder.service.app, an origin of its own): student1's wrong attention, then the fix,
    each verdict within seconds of the Submit, first in student1's JupyterLab (a notification, labextension/) with a
    link to the service's page; a third Submit in the hour waits (queued, saying when it is checked); student2
    cannot open student1's attempts, in the Lab or on the service."""
    service, lab = course_hub.service_url(), pages["student1"]
    began = time.monotonic()
    toast = lab_notification(lab, "Lost points:")
    in_lab = [time.monotonic() - began]
    message = toast.inner_text()
    assert "checked," in message and "attention 4.4 of 8" in message, message  # its two checks: 2 and 2.4 of 4
    shots(lab, "student1-lab-verdict")
    with lab.context.expect_page() as opened:
        toast.locator("button:has-text('See what failed')").click()
    checks = opened.value
    checks.wait_for_load_state()
    assert checks.url.startswith(service), checks.url
    waited = [shown_within(checks, service, "attention: 2.4 of 4")]
    text = checks.inner_text("#verdicts")
    assert "attention: 2 of 4" in text and "sqrt" in text, text  # what failed, in words
    assert "Up to 2 Submits are checked per 1 hour" in checks.inner_text("body")
    shots(checks, "student1-checks-wrong-attention")
    shutil.copyfile(SUBMISSIONS / "full_solution" / "attention" / "attention.ipynb", notebook_of("student1"))
    began = time.monotonic()
    submit(lab)
    lab_notification(lab, "every function passes")
    in_lab.append(time.monotonic() - began)
    shots(lab, "student1-lab-fixed")
    waited.append(shown_within(checks, service, "Your latest checked Submit: 29 / 29 points"))
    assert "attention: 4 of 4" in checks.inner_text("#verdicts")
    assert "2.4 of 4" not in checks.inner_text("#verdicts")
    shots(checks, "student1-checks-fixed")
    submit(lab)
    queued = lab_notification(lab, "queued: checked when your window reopens, at").inner_text()
    assert re.search(r"at \d\d:\d\d UTC", queued), queued
    shots(lab, "student1-lab-queued")
    shown_within(checks, service, "queued: checked when your window reopens")
    shots(checks, "student1-checks-queued")
    print(
        f"instant checks: in the Lab {', '.join(f'{s:.0f} s' for s in in_lab)} after Submit; on the page "
        f"{', '.join(f'{s:.0f} s' for s in waited)} later"
    )
    other = pages["student2"].context.new_page()
    answer = other.goto(f"{service}students/student1")
    assert answer.status == 403, answer.status
    assert "2.4 of 4" not in other.inner_text("body")
    other.close()
    verdicts_in_the_lab_are_each_students_own(pages, course_hub)
    shots.phase("instant checks")


def positions_beside_attention(pages: dict, teacher, course_hub: hub.Hub, course: Path, shots: Shots) -> None:
    """The course's second assignment: student1 fetches positions in the Assignment List, writes it (the example's
    solution saved in place), and Submits; the notification in their Lab names positions and its points, and the
    service's page shows positions' section beside attention's, each with its own Submits and points. student2's
    answers from the service are their own (no positions Submit), and the instructor's page lists both assignments."""
    service, lab = course_hub.service_url(), pages["student1"]
    open_assignment_list(lab)
    listed(lab, "released", "positions").locator("button:has-text('fetch')").click()
    listed(lab, "fetched", "positions").wait_for()
    fetched = course_hub.state / "home" / "student1" / "positions" / "positions.ipynb"
    assert fetched.is_file(), "fetch put no positions notebook in student1's home"
    shutil.copyfile(SUBMISSIONS / "full_solution" / "positions" / "positions.ipynb", fetched)
    shots(lab, "student1-positions-fetched")
    began = time.monotonic()
    submit(lab, "positions")
    toast = lab_notification(lab, "checked, 5 / 5 points, every function passes")
    message = toast.locator(".jp-toast-message").inner_text()
    in_lab = time.monotonic() - began
    assert message.startswith("positions, your Submit of"), message
    due = gradebook_due(course, "positions")  # student1's own: the class's, and the course's late days
    assert message.endswith(f"Due {due:%Y-%m-%d %H:%M} UTC, {LATE_DAYS} late days left."), message
    shots(lab, "student1-lab-positions-verdict")
    checks = lab.context.new_page()
    waited = shown_within(checks, service, "Your latest checked Submit: 5 / 5 points")
    sections = checks.locator("section.assignment").evaluate_all("(all) => all.map((s) => s.id)")
    assert sections == ["assignment-positions", "assignment-attention"], sections  # the newest Submit's first
    mine = checks.inner_text("#assignment-positions")
    assert "Your latest checked Submit: 5 / 5 points" in mine and "29 / 29" not in mine, mine
    for function in ("rotation_angles", "rotate", "rotated_score"):
        assert f"{function}: " in checks.inner_text("#assignment-positions table.verdicts"), function
    assert "Your latest checked Submit: 29 / 29 points" in checks.inner_text("#assignment-attention")
    shots(checks, "student1-checks-positions-beside-attention")
    checks.close()
    print(f"positions: in the Lab {in_lab:.0f} s after Submit; on the page {waited:.0f} s later")
    # student2 asks the service for positions: their own answer (no Submit yet), never student1's
    other = pages["student2"].context.new_page()
    answer = other.goto(f"{service}api/latest?assignment=positions")
    assert answer.status == 200, answer.status
    theirs = answer.json()
    assert theirs["student"] == "student2" and theirs["assignment"] == "positions", theirs
    assert theirs["newest"] is None, theirs
    other.goto(service)
    assert "No Submit yet of positions" in other.inner_text("#assignment-positions")
    assert "5 / 5" not in other.inner_text("body")
    for page in ("students/student1", "students/student1/feedback/positions"):
        assert other.goto(f"{service}{page}").status == 403, page
    other.close()
    # the instructor's page: both assignments, each with its own students and scores
    page = teacher.context.new_page()
    page.goto(service)
    assert page.locator("section.assignment").evaluate_all("(all) => all.map((s) => s.id)") == [
        "assignment-attention",
        "assignment-positions",
    ]
    rows = page.locator("#assignment-positions table.students tr").all_inner_texts()
    assert [row.split("\t") for row in rows[1:]] == [["student1", "1", "1", "5"]], rows
    students = page.locator("#assignment-attention table.students td:first-child").all_inner_texts()
    assert students == sorted(HANDED_IN), students
    shots(page, "instructor-checks-of-both-assignments", full_page=True)
    page.close()
    shots.phase("positions beside attention")


def gradebook_due(course: Path, assignment: str) -> datetime.datetime | None:
    """``assignment``'s due date in the course's gradebook (naive UTC, as nbgrader keeps it)."""
    import sqlalchemy as sa

    with sa.create_engine(read_only(course)).connect() as connection:
        found = connection.exec_driver_sql("SELECT duedate FROM assignment WHERE name = ?", (assignment,)).scalar()
    return None if found is None else datetime.datetime.fromisoformat(str(found))


def read_only(course: Path) -> str:
    """The course database's URL, opened read only: the test (root) reads it, and every file of it stays the
    instructor's (a write as root would leave a journal the service cannot write)."""
    return f"sqlite:///file:{course / 'gradebook.db'}?mode=ro&uri=true"


def cell_grade(course: Path, student: str, check: str) -> tuple[float | None, float | None]:
    """(automatic score, manual score) of ``student``'s check cell ``check`` of attention in nbgrader's gradebook."""
    import sqlalchemy as sa

    query = """SELECT grade.auto_score, grade.manual_score FROM grade
        JOIN submitted_notebook ON submitted_notebook.id = grade.notebook_id
        JOIN submitted_assignment ON submitted_assignment.id = submitted_notebook.assignment_id
        JOIN assignment ON assignment.id = submitted_assignment.assignment_id
        JOIN base_cell ON base_cell.id = grade.cell_id
        WHERE submitted_assignment.student_id = ? AND assignment.name = 'attention' AND base_cell.name = ?"""
    with sa.create_engine(read_only(course)).connect() as connection:
        (row,) = connection.exec_driver_sql(query, (student, check)).all()
    return tuple(row)


def feedback_score(text: str) -> float:
    """The score a feedback page states in its header ("Score: 25.8 / 33; 25.8 of 29 automatic, 4 to grade")."""
    return float(re.search(r"Score: ([\d.]+) / 33; ", text)[1])


def tried_in_windows(page, asks: dict) -> dict:
    """What each of ``asks`` ({what: (url, fields)}) comes to when ``page`` posts it as a form of its own, all at once,
    each into a window of its own (with the page's session and XSRF cookie, as the person's browser sends them; a
    script of the service's page may not fetch, by its CSP): {what: (status, the refusal's sentence)}."""
    opened, names = len(page.context.pages), {f"try-{number}": what for number, what in enumerate(asks)}
    page.evaluate(
        """(asks) => asks.forEach(([name, url, fields]) => {
            const form = document.createElement('form');
            form.method = 'post'; form.action = url; form.target = name;
            for (const [key, value] of Object.entries(fields)) {
                const field = document.createElement('input');
                field.type = 'hidden'; field.name = key; field.value = value; form.append(field);
            }
            document.body.append(form); form.submit();
        })""",
        [[name, *asks[what]] for name, what in names.items()],
    )
    deadline = time.monotonic() + 60
    while len(page.context.pages) < opened + len(asks):
        assert time.monotonic() < deadline, f"{len(page.context.pages) - opened} of {len(asks)} windows opened"
        page.wait_for_timeout(100)
    outcomes = {}
    for window in page.context.pages[opened:]:
        window.wait_for_selector("p.check")
        what = names[window.evaluate("() => window.name")]
        status = re.fullmatch(r"\((\d{3})\)", window.locator("p.check").last.inner_text())
        reason = window.locator("#reason")
        outcomes[what] = (int(status[1]) if status else 200, reason.inner_text() if reason.count() else "")
        window.close()
    return {what: outcomes[what] for what in asks}


def read_refused(page, url: str) -> tuple[int, str]:
    """(status, the refusal's sentence) of ``url`` opened in a new window of ``page``'s browser."""
    window = page.context.new_page()
    answer = window.goto(url)
    reason = window.locator("#reason")
    said = (answer.status, reason.inner_text() if reason.count() else "")
    window.close()
    return said


# what student2 writes when asking for a review: markup and script, which every page must show as text
HOSTILE = 'My mask is right <img src=x onerror="window.pwned=1"><script>window.pwned=2</script> & so "is" this'
EXTENSION_HOURS, GRANTED = 72, 3  # what the instructor gives student2


def term_and_appeals(pages: dict, teacher, course_hub: hub.Hub, course: Path, shots: Shots) -> None:
    """The course's term and appeals on the hub, on the grading service's pages as the hub serves them (its OAuth, its
    XSRF cookies, its origin): the instructor gives student2 an extension and late days on their page; student2's
    notification (after a new Submit) and checks page show student2's own due date and late days, student1's the
    class's; student2 spends a late day from two windows at once (one is spent); student2 asks for a review of a
    verdict line with a hostile sentence; student3 tries student2's late days, review and extension with student3's
    own session and XSRF token (each refused, nothing of student2's changed); the instructor's queue shows the
    sentence as text, grades it again in one click and shows the difference check by check, decides with points and
    a comment; student2 reads the decision, and the changed score reaches the gradebook and the feedback page (made
    again at once, released again in Formgrader). Each step of the review is timed and printed."""
    from autograder.attempts import Attempts
    from autograder.service.appeals import Appeals, cell_scale
    from autograder.term import LateDays, Term

    service, db = course_hub.service_url(), read_only(course)
    term, appeals, store = Term(db, rule=LateDays(tokens=LATE_DAYS)), Appeals(db), Attempts(db, "attention")
    base = gradebook_due(course, "attention")
    own = base + datetime.timedelta(hours=EXTENSION_HOURS)  # student2's due date once extended
    # --- the instructor: student2's extension and late days, on the instructor's page ----------------------------
    page = teacher.context.new_page()
    page.goto(service)
    extend = page.locator("#assignment-attention form.extend")
    extend.locator("[name=student]").fill("student2")
    extend.locator("[name=hours]").fill(str(EXTENSION_HOURS))
    extend.locator("button").click()
    page.wait_for_selector("#notice:has-text('student2: an extension on attention is set.')")
    page.fill("form.grant [name=student]", "student2")
    page.fill("form.grant [name=tokens]", str(GRANTED))
    page.click("form.grant button")
    page.wait_for_selector(f"#notice:has-text('student2: {GRANTED} late days for the term.')")
    assert page.locator("#grants tr").all_inner_texts()[1:] == [f"student2\t{GRANTED}"]
    rows = [row.split("\t") for row in page.locator("#term-attention tr").all_inner_texts()[1:]]
    assert rows == [["student2", f"{own:%Y-%m-%d %H:%M} UTC", "an extension", f"{GRANTED} of {GRANTED}"]], rows
    shots(page, "instructor-extension-and-late-days-set", full_page=True)
    page.close()
    standing = term.standing(student="student2", assignment="attention", base=base)
    assert (standing.due, standing.granted, standing.spent) == (own, GRANTED, 0), standing
    # --- student2 Submits again: the notification tells their own due date and late days -------------------------
    lab = pages["student2"]
    lab.goto(f"{course_hub.user_url('student2')}lab")
    on_lab(lab, "student2")
    open_assignment_list(lab)
    began = time.monotonic()
    submit(lab)
    told = lab_notification(lab, "Lost points:").locator(".jp-toast-message").inner_text()
    in_lab = time.monotonic() - began
    assert told.startswith("attention, your Submit of"), told
    # (the year is left out where the toast's 140 characters need it: labextension/lib/logic.js)
    assert re.search(rf"Due (\d{{4}}-)?{own:%m-%d %H:%M} UTC, {GRANTED} late days left\.$", told), told
    shots(lab, "student2-lab-own-due-date-and-late-days")
    # student1's page: the class's due date and the course's late days (student1's notification said them too)
    mine = pages["student1"]
    mine.goto(service)
    said = mine.inner_text("#assignment-attention .term")
    assert f"Your due date: {base:%Y-%m-%d %H:%M} UTC." in said and "(an extension)" not in said, said
    assert f"Late days: {LATE_DAYS} of {LATE_DAYS} left for the term (0 spent on attention)" in said, said
    # --- student2's checks page: their own due date and late days; a late day spent from two windows at once ------
    checks = lab.context.new_page()
    shown_within(checks, service, f"Your due date: {own:%Y-%m-%d %H:%M} UTC (an extension).")
    said = checks.inner_text("#assignment-attention .term")
    assert f"Late days: {GRANTED} of {GRANTED} left for the term (0 spent on attention)" in said, said
    shots(checks, "student2-checks-own-due-date-and-late-days", full_page=True)
    opened = len(checks.context.pages)
    checks.evaluate(
        """() => { const form = document.querySelector('#assignment-attention form[id^=late-day]');
            for (const name of ['spend-1', 'spend-2']) { form.target = name; form.submit(); } }"""
    )
    deadline = time.monotonic() + 60
    while len(checks.context.pages) < opened + 2:
        assert time.monotonic() < deadline, "the two windows of the late-day form did not open"
        checks.wait_for_timeout(100)
    windows = checks.context.pages[opened:]
    for window in windows:
        window.wait_for_selector("#notice")
    notices = sorted(window.inner_text("#notice") for window in windows)
    moved = own + datetime.timedelta(hours=LateDays().hours)
    assert notices == [
        "No late day spent on attention: already done: 1 late days are spent on attention.",
        f"One late day spent on attention: your due date is now {moved:%Y-%m-%d %H:%M} UTC.",
    ], notices
    shots(windows[0], "student2-late-day-spent-from-two-windows", full_page=True)
    for window in windows:
        window.close()
    standing = term.standing(student="student2", assignment="attention", base=base)
    assert (standing.due, standing.spent, standing.left) == (moved, 1, GRANTED - 1), standing
    checks.goto(service)
    said = checks.inner_text("#assignment-attention .term")
    assert f"Your due date: {moved:%Y-%m-%d %H:%M} UTC (an extension and 1 late day)." in said, said
    assert f"Late days: {GRANTED - 1} of {GRANTED} left for the term (1 spent on attention)" in said, said
    shots.phase("extension and late days")
    # --- student2 asks for a review of a verdict line, with a hostile sentence -------------------------------------
    timings = {}
    line = checks.locator("#assignment-attention table.verdicts tr.lost").first
    check = line.locator(".check").inner_text().strip()
    line.locator("details.appeal summary").click()
    line.locator("textarea").fill(HOSTILE)
    began = time.monotonic()
    line.locator("form.appeal button").click()
    checks.wait_for_selector(f"#notice:has-text('Your review of {check} is asked')")
    timings["asked"] = time.monotonic() - began
    asked = checks.locator("#assignment-attention ul.appeals li").first
    assert "open: waiting for the instructor" in asked.inner_text() and HOSTILE in asked.inner_text()
    assert asked.locator("img, script").count() == 0 and checks.evaluate("typeof window.pwned") == "undefined"
    shots(checks, "student2-review-asked", full_page=True)
    (appeal,) = appeals.select(student="student2")
    attempts = store.select(student="student2")
    assert (appeal.check, appeal.text, appeal.status, appeal.attempt) == (check, HOSTILE, "open", attempts[-1].id)
    # --- student3 tries student2's late days, review and extension, with student3's own session and token -------
    attacker = pages["student3"]
    attacker.goto(service)
    token = attacker.locator("#assignment-attention form[id^=late-day] [name=_xsrf]").get_attribute("value")
    before = (term.standing(student="student2", assignment="attention", base=base), appeals.get(appeal.id))
    before += (term.standing(student="student3", assignment="attention", base=base), len(attempts), term.grants())
    theirs = f"{service}students/student2/"
    asks = {
        "spend student2's late day": (f"{theirs}late-days/attention", {"seen": "1"}),
        "ask a review in student2's name": (
            f"{theirs}appeals/attention",
            {"attempt": str(appeal.attempt), "check": check, "text": "mine now"},
        ),
        "ask a review of student2's Submit": (
            f"{service}students/student3/appeals/attention",
            {"attempt": str(appeal.attempt), "check": check, "text": "x"},
        ),
        "extend student2": (f"{service}term/attention", {"student": "student2", "hours": "500"}),
        "extend themselves": (f"{service}term/attention", {"student": "student3", "hours": "500"}),
        "grant themselves late days": (f"{service}term", {"student": "student3", "tokens": "100"}),
        "grade student2's review again": (f"{service}appeals/{appeal.id}/rerun", {}),
        "decide student2's review": (f"{service}appeals/{appeal.id}/decide", {"points": "0", "comment": "no"}),
    }
    outcomes = tried_in_windows(attacker, {what: (url, {"_xsrf": token, **form}) for what, (url, form) in asks.items()})
    reads = {"read student2's checks": theirs.rstrip("/"), "read student2's feedback": f"{theirs}feedback/attention"}
    for what, url in (reads | {"read the queue": f"{service}appeals"}).items():
        outcomes[what] = read_refused(attacker, url)
    print(f"student3's tries: {json.dumps(outcomes)}")
    sentences = {
        "spend student2's late day": "A student spends only their own late days.",
        "ask a review in student2's name": "A student asks for reviews of their own verdicts only.",
        "ask a review of student2's Submit": "A student asks for reviews of their own submits only.",
        "extend student2": "Only an instructor gives extensions.",
        "extend themselves": "Only an instructor gives extensions.",
        "grant themselves late days": "Only an instructor grants late days.",
        "grade student2's review again": "Only an instructor re-runs or decides an appeal.",
        "decide student2's review": "Only an instructor re-runs or decides an appeal.",
        "read student2's checks": "A student sees only their own attempts.",
        "read student2's feedback": "A student sees only their own feedback.",
        "read the queue": "The appeals' queue is the instructors'.",
    }
    assert outcomes == {what: (403, sentence) for what, sentence in sentences.items()}, outcomes
    # and in the browser: student3 points their own late-day form at student2's
    attacker.evaluate(
        """(target) => { const form = document.querySelector('#assignment-attention form[id^=late-day]');
            form.action = target; form.submit(); }""",
        f"{theirs}late-days/attention",
    )
    attacker.wait_for_selector("#error")
    assert attacker.inner_text("#reason") == "A student spends only their own late days."
    shots(attacker, "student3-refused-student2s-late-day")
    after = (term.standing(student="student2", assignment="attention", base=base), appeals.get(appeal.id))
    after += (term.standing(student="student3", assignment="attention", base=base),)
    after += (len(store.select(student="student2")), term.grants())
    assert after == before, (before, after)  # nothing of student2's (nor student3's own term) changed
    shots.phase("student3 tried student2's")
    # --- the instructor: the queue, the grade again, the decision ------------------------------------------------
    queue = teacher.context.new_page()
    began = time.monotonic()
    queue.goto(service)
    queue.click("#reviews a")
    section = queue.locator(f"#appeal-{appeal.id}")
    section.wait_for()
    timings["in the queue"] = time.monotonic() - began
    assert f"student2, attention, {check}: open: waiting for the instructor" in section.locator("h2").inner_text()
    assert section.locator("q.text").inner_text() == HOSTILE and section.locator("q.text *").count() == 0
    assert queue.evaluate("typeof window.pwned") == "undefined"
    shots(queue, "instructor-review-queue", full_page=True)
    began = time.monotonic()
    section.locator("form.rerun button").click()
    queue.wait_for_selector(f"#appeal-{appeal.id} table.differences", timeout=600_000)
    timings["graded again"] = time.monotonic() - began
    assert re.search(rf"Appeal {appeal.id} graded again in \d+\.\d s$", queue.inner_text("#notice"))
    section = queue.locator(f"#appeal-{appeal.id}")
    table = [row.split("\t") for row in section.locator("table.differences tr").all_inner_texts()[1:]]
    marks = section.locator("table.differences tr").evaluate_all("(rows) => rows.slice(1).map((r) => r.className)")
    checks_before = [v.check for v in attempts[-1].verdicts]
    assert [row[0] for row in table] == checks_before, table  # check by check, in the Submit's order
    assert all(mark.startswith("full") for mark in marks), (marks, table)  # the same notebook, the same seed
    assert marks[checks_before.index(check)] == "full appealed", marks
    shots(queue, "instructor-review-graded-again", full_page=True)
    worth = cell_scale(course / "source" / "attention")[check]
    automatic, _ = cell_grade(course, "student2", check)
    feedback = course / "feedback" / "student2" / "attention" / "attention.html"
    was = feedback_score(feedback.read_text())
    section.locator("form.decide [name=points]").fill(f"{worth:g}")
    section.locator("form.decide [name=comment]").fill("Agreed <b>in part</b>: full points")
    began = time.monotonic()
    section.locator("form.decide button").click()
    queue.wait_for_selector(f"#appeal-{appeal.id} p.decision")
    timings["decided"] = time.monotonic() - began
    notice = queue.inner_text("#notice")
    assert f"decided: {check} of student2 is now {worth:g} / {worth:g} in the gradebook" in notice, notice
    assert "feedback page of student2 made again" in notice, notice
    shots(queue, "instructor-review-decided", full_page=True)
    queue.close()
    # --- student2 reads the decision; the gradebook and the feedback page have the new score --------------------
    began = time.monotonic()
    shown_within(checks, service, f"decided: {check} is now worth {worth:g} points")
    timings["shown to the student"] = time.monotonic() - began
    said = checks.inner_text("#assignment-attention ul.appeals")
    assert "The instructor: " in said and "Agreed <b>in part</b>: full points" in said, said
    assert checks.locator("#assignment-attention ul.appeals b").count() == 0
    shots(checks, "student2-review-decided", full_page=True)
    assert cell_grade(course, "student2", check) == (automatic, worth)
    now = feedback_score(feedback.read_text())
    assert now == pytest.approx(was + worth - automatic), (was, now, "the feedback page was not made again")
    teacher.goto(f"{course_hub.user_url('instructor')}formgrader/manage_assignments")
    sent = formgrader_action(teacher, "release-feedback", "Successfully released feedback")
    assert "student2" in sent, sent
    checks.goto(service)
    checks.click("#assignment-attention [id^='feedback'] a")
    checks.wait_for_load_state()
    assert feedback_score(checks.inner_text("body")) == pytest.approx(now)  # as released again
    shots(checks, "student2-feedback-after-the-review")
    checks.close()
    total = sum(timings.values())
    print(
        f"appeal round trip on the hub: {'; '.join(f'{what} {s:.1f} s' for what, s in timings.items())}; "
        f"{total:.1f} s in all; student2's Submit told in the Lab {in_lab:.0f} s after it"
    )
    for closing in (term, appeals, store):
        closing.close()
    shots.phase("reviewed")


def round_trip(browser, course_hub: hub.Hub, course: Path, shots: Shots) -> None:
    url = course_hub.url
    # student3 first tries to configure their own server from their home (it must change nothing)
    planted = plant_home_config(course_hub.state / "home" / "student3", "student3")
    # --- everyone logs in at once (the hub starts four servers); the instructor releases in Formgrader -------
    teacher = start_login(browser, url, "instructor")
    pages = {student: start_login(browser, url, student) for student in HANDED_IN}
    teacher = on_lab(teacher, "instructor")
    teacher.click(".lm-MenuBar-itemLabel:text-is('Nbgrader')")
    assert {"Formgrader", "Assignment List", "Course List"} <= set(
        teacher.locator(".lm-Menu-content .lm-Menu-itemLabel").all_inner_texts()
    )
    teacher.click(".lm-Menu-content .lm-Menu-itemLabel:text-is('Formgrader')")
    assert not disabled_plugins(teacher) & INSTRUCTOR_TOOLS
    # Formgrader opens as a tab of JupyterLab (an iframe the server's frame-ancestors 'self' lets it show)
    formgrader = teacher.wait_for_selector("iframe[src*='formgrader']").content_frame()
    formgrader.wait_for_selector("#main-table td.assign a")
    manage = f"{course_hub.user_url('instructor')}formgrader/manage_assignments"
    made = "The student version of 'attention' is made: 1 notebook, attention.ipynb."
    generated = formgrader_action(formgrader, "assign", made, lambda: shots(teacher, "formgrader-generate-result"))
    assert generated.index(made) < generated.index("[INFO]"), generated  # the result, then nbgrader's log
    assert "[DEBUG]" not in generated and "DEBUG lines left out" in generated, generated
    formgrader.wait_for_selector("#main-table td.release a")
    released = formgrader_action(formgrader, "release", "Successfully released")
    assert "Released as: attention attention" in released
    made = "The student version of 'positions' is made: 1 notebook, positions.ipynb."
    formgrader_action(formgrader, "assign", made, assignment="positions")
    formgrader_row(formgrader, "positions").locator("td.release a").wait_for()
    released = formgrader_action(formgrader, "release", "Successfully released", assignment="positions")
    assert "Released as: attention positions" in released
    for assignment in ("attention", "positions"):
        assert formgrader_row(formgrader, assignment).locator("td.status").inner_text() == "released", assignment
    shots(teacher, "formgrader-released")
    shots.phase("released")

    # --- each student fetches, writes (here: the example's notebook saved in place), validates -------------
    for student, example in HANDED_IN.items():
        page = on_lab(pages[student], student)
        assert open_assignment_list(page) == ["Assignment List"], "a student sees an instructor's tool"
        assert disabled_plugins(page) >= INSTRUCTOR_TOOLS, "the page a student gets holds an instructor's tool"
        answer = fetched_status(page, f"{course_hub.user_url(student)}formgrader/manage_assignments")
        assert answer == 404, f"Formgrader answers a student ({answer})"
        listed(page, "released", "attention").locator("button:has-text('fetch')").click()
        page.wait_for_selector("#fetched_assignments_list .assignment-notebooks-link")
        fetched = course_hub.state / "home" / student / "attention" / "attention.ipynb"
        assert fetched.is_file(), "fetch put no notebook in the student's home"
        shutil.copyfile(SUBMISSIONS / example / "attention" / "attention.ipynb", fetched)
        page.locator("#fetched_assignments_list .assignment-notebooks-link").click()
        page.locator("#fetched_assignments_list button:has-text('Validate')").click()
    shots.phase("students fetched")
    # --- one origin per person: each server on its own, with headers that keep other pages out -----------------
    for account, page in [("instructor", teacher), *pages.items()]:
        assert page.url.startswith(course_hub.user_url(account)), (account, page.url)  # its own origin
        headers = fetched_headers(page, f"{course_hub.user_url(account)}api/status")
        policy = headers.get("content-security-policy", "").split("; ")
        assert policy[0] == "frame-ancestors 'self'" and "frame-ancestors *" not in policy, (account, headers)
        assert headers.get("cross-origin-opener-policy") == "same-origin", (account, headers)
        assert "x-planted" not in headers, (account, headers)  # student3's ~/.jupyter and ~/.local were not read
    assert not planted["marker"].exists(), "the server (or a kernel) imported student3's usercustomize"
    outcomes = attacks_across_origins(course_hub, teacher, pages, course, shots)
    print(f"attacks across origins: {json.dumps(outcomes)}")
    assert outcomes["control"]["read a file"] == "done: holds CHECKS: true", outcomes  # same origin: it reads it
    assert outcomes["instructor"]["read the framed Lab"] == "SecurityError", outcomes
    assert outcomes["instructor"]["the Lab shown in the frame"] == "refused", outcomes  # frame-ancestors 'self'
    assert outcomes["instructor"]["read a file"] == "TypeError", outcomes  # fetch refused: another origin
    assert outcomes["instructor"]["open a terminal"] == "TypeError", outcomes
    assert outcomes["instructor's terminals"] == 0, outcomes  # and none was opened on the server either
    assert outcomes["student1"]["reach into the popup"] == "SecurityError", outcomes
    assert outcomes["student1"]["popup still held"] == "done: false", outcomes  # COOP: the opener lost its handle
    assert outcomes["student1"]["read a file"] == "TypeError", outcomes
    shots.phase("attacks across origins")
    # a student's server, and the kernels it starts, see their home, the course library and nothing of the course
    # (without bubblewrap the suite runs the hub with ATTENTION_UNSANDBOXED=1: nothing to look at then)
    if sandbox.bubblewrap() is not None:
        import lib

        student1 = server_of(course_hub, "student1")
        for path in (course_hub.state / "home" / "student1" / "attention", Path(lib.__file__), lib.data_folder()):
            assert what_a_server_sees(student1, path), f"student1's sandbox lacks {path}"
        for path in (course, course_hub.state / "home" / "student2", REPOSITORY / "source", REPOSITORY / "autograder"):
            assert not what_a_server_sees(student1, path), f"student1's sandbox shows {path}"
        assert what_a_server_sees(server_of(course_hub, "instructor"), course)
    for student, page in pages.items():  # the three validations run at once, as a class would
        page.wait_for_selector(".jp-Dialog-header:has-text('Validation Results')", timeout=300_000)
        message = page.inner_text(".jp-Dialog-body")
        if student == "student1":
            assert "Success! Your notebook passes all the tests." in message
        else:  # labextension/'s validate plugin: the sentences first, each cell's code and traceback folded below
            sentences = page.locator(".attention-validate-why").all_inner_texts()
            assert message.startswith(("One cell does not pass yet", f"{len(sentences)} cells do not pass yet"))
            assert message.split("\n", 1)[1].lstrip().startswith(sentences[0].strip()), message  # then the first
            words = "apply the mask to the scores before softmax" if student == "student2" else "is not written yet"
            assert words in sentences[0], sentences
            assert "def _check" not in message, message  # the code is folded until asked for
            assert not any(line.startswith("AssertionError") for line in sentences), sentences
        shots(page, f"{student}-validated")
        if student == "student2":  # the fold opens on the cell and its traceback, whose lines wrap in the dialog
            page.locator(".jp-Dialog-body details summary").first.click()
            boxes = page.locator(".jp-Dialog-body details pre")
            overflowing = boxes.evaluate_all("(bs) => bs.filter(b => b.scrollWidth > b.clientWidth + 1).length")
            assert boxes.count() >= 2 and overflowing == 0, "a line of the failed cell runs past the dialog"
            shots(page, f"{student}-validated-cell-unfolded")
        page.click(".jp-Dialog-footer button:has-text('Ok')")
        if student == "student1":  # first a typical mistake: attention without the scaling by sqrt(d)
            shutil.copyfile(SUBMISSIONS / "no_sqrt_scaling" / "attention" / "attention.ipynb", notebook_of(student))
        submit(page)
    shots.phase("validated and submitted")
    instant_checks(pages, course_hub, shots)
    positions_beside_attention(pages, teacher, course_hub, course, shots)
    # --- student3 attacks from a terminal of their own server: the other submissions, the course, the network ----
    inbound = course_hub.state / "exchange" / "attention" / "inbound"
    # student1's last Submit of attention
    genuine = max(entry for entry in inbound.iterdir() if entry.name.startswith("student1+attention+"))
    before = files_of(genuine)
    tried, ports = attack_from_a_terminal(pages["student3"], course_hub, course, "student3", "student1")
    print(f"the attacker's attempts: {tried}")
    for what in ("list inbound", "read another's submission", "write into another's submission"):
        assert tried[what] == "PermissionError", (what, tried)
    assert tried["delete another's submission"] == "PermissionError", tried
    assert tried["read checks.py"] == tried["read the cookie secret"] == "FileNotFoundError", tried
    assert tried["submit in student1's name"] == tried["plant links"] == "done", tried  # planted: collect must refuse
    for port in ports:  # the hub's API, the proxy's API, the instructor's and student1's servers
        assert tried[f"connect {port}"] == "ConnectionRefusedError", (port, tried)
    assert tried[f"connect {course_hub.port}"] == "done", tried  # the proxy's public port: the one way out
    assert files_of(genuine) == before, "student1's submission changed"
    shots.phase("attacked")
    # --- the instructor collects, and grades what nbgrader collected ---------------------------------------
    teacher.goto(manage)
    collected = formgrader_action(
        teacher, "collect", "Successfully collected", lambda: shots(teacher, "formgrader-collect-result")
    )
    result = f"Collected 3 submissions of 'attention': {', '.join(sorted(HANDED_IN))}."
    assert collected.split("Log Output")[1].strip().startswith(result), collected  # the result, then the rest
    first_error = collected.find("[ERROR]")
    assert first_error == -1 or collected.index(result) < collected.index("Not collected, ") < first_error, collected
    for student in HANDED_IN:
        assert f"Collecting submission: {student} attention" in collected, collected
    assert "cheating attempt" not in collected, collected  # each submission is its own student's account's
    assert (course / "submitted" / "student1" / "attention" / "attention.ipynb").read_bytes() == before[
        "attention.ipynb"
    ], "the forged submission was collected as student1's"
    planted = course / "submitted" / "student3" / "attention"
    assert not any(path.is_symlink() for path in planted.rglob("*")) and not (planted / "cookie.txt").exists()
    assert b"CHECKS" not in (planted / "attention.ipynb").read_bytes(), "checks.py was collected through a link"
    collected = formgrader_action(teacher, "collect", "Successfully collected", assignment="positions")
    assert "Collected 1 submission of 'positions': student1." in collected, collected
    teacher.reload()
    teacher.wait_for_selector("#main-table td.num-submissions a:text-is('3')")
    assert formgrader_row(teacher, "positions").locator("td.num-submissions").inner_text().strip() == "1"
    shots(teacher, "formgrader-collected")
    for student in HANDED_IN:
        assert (course / "submitted" / student / "attention" / "timestamp.txt").is_file()
    shots.phase("collected")
    # both assignments, each one the submissions hold in turn (attention's three, positions' one)
    graded = as_instructor("--course", str(course), "--submissions", str(course / "submitted"))
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    print("the class run:", "; ".join(line for line in graded.stdout.splitlines() if line.startswith(("===", "done"))))
    with open(course / "grades.csv") as grades_file:
        rows = list(csv.DictReader(grades_file))
    grades = {row["student_id"]: row for row in rows if row["assignment"] == "attention"}
    positions = {row["student_id"]: row for row in rows if row["assignment"] == "positions"}
    assert float(positions["student1"]["raw_score"]) == 5 and float(positions["student1"]["max_score"]) == 5
    assert positions["student1"]["timestamp"], positions  # its Submit, collected
    assert not any(positions.get(student, {}).get("timestamp") for student in ("student2", "student3")), positions
    said = f"{grades}\n{graded.stdout[-4000:]}\n{graded.stderr[-4000:]}"  # the class run's own words, on failure
    assert float(grades["student1"]["raw_score"]) == 29 and float(grades["student3"]["raw_score"]) == 0, said
    assert 0 < float(grades["student2"]["raw_score"]) < 29, said
    for row in grades.values():  # nbgrader's timestamps kept: the due date and lateness are known
        assert row["duedate"] and row["timestamp"] and row["late_submission_penalty"] != "", row

    shots.phase("graded by autograder.course.classroom")
    # --- hand grading of student1's four written answers in Formgrader --------------------------------------
    formgrader_url = f"{course_hub.user_url('instructor')}formgrader/"
    answer = fetched_json(teacher, f"{formgrader_url}api/submitted_notebooks/attention/attention")
    submissions = {item["student"]: item["id"] for item in answer}
    # the page's grades load after the page itself: its scripts bind the boxes once the network is quiet
    teacher.goto(f"{formgrader_url}submissions/{submissions['student1']}/", wait_until="networkidle")
    for grade_id, score in HAND_SCORES.items():
        assert save_score(teacher, grade_id, score), f"Formgrader did not save {grade_id} (three tries)"
    shots(teacher, "formgrader-hand-graded", full_page=False)
    teacher.goto(f"{formgrader_url}submissions/{submissions['student2']}/")
    verdicts = teacher.locator("pre:has-text('FAIL')")
    verdicts.first.scroll_into_view_if_needed()
    overflowing = verdicts.evaluate_all("(boxes) => boxes.filter(b => b.scrollWidth > b.clientWidth + 1).length")
    assert verdicts.count() > 0 and overflowing == 0, "a verdict line runs past its box in Formgrader"
    shots(teacher, "formgrader-verdicts-wrap")

    shots.phase("hand-graded")
    refreshed = as_instructor("--course", str(course), "--feedback-only")
    assert refreshed.returncode == 0, refreshed.stderr
    assert "feedback regenerated for 1 students (hand grades changed): student1" in refreshed.stdout, refreshed.stdout
    teacher.goto(manage)
    sent = formgrader_action(teacher, "release-feedback", "Successfully released feedback")
    for student in HANDED_IN:
        assert student in sent, sent

    shots.phase("feedback regenerated and released")
    # --- each student fetches the feedback and reads it ------------------------------------------------------
    from autograder.notebook.feedback import points

    expected = {
        "student1": ["Score: 32.5 / 33", "29 of 29 automatic, 3.5 of 4 by hand"],
        "student2": [f"{points(grades['student2']['raw_score'])} of 29 automatic", "BEFORE softmax"],
        "student3": ["Score: 0 / 33", "is not written yet"],
    }
    for student, page in pages.items():
        open_assignment_list(page)
        listed(page, "submitted", "attention").locator("button:has-text('Fetch Feedback')").click()
        page.wait_for_selector("#submitted_assignments_list a:has-text('view feedback')")
        found = sorted((course_hub.state / "home" / student / "attention" / "feedback").glob("*/attention.html"))
        assert len(found) == 1, found  # nbgrader's fetch_feedback brought the page into the student's home
        # one click on "(view feedback)" opens the page in a new tab, from the student's own server (labextension/)
        with page.context.expect_page() as opened:
            page.locator("#submitted_assignments_list a:has-text('view feedback')").first.click()
        tab = opened.value
        tab.wait_for_load_state()
        assert tab.url.startswith(f"{course_hub.user_url(student)}files/attention/feedback/"), tab.url
        assert tab.url.endswith("/attention.html"), tab.url
        for words in expected[student]:
            assert words in tab.inner_text("body"), f"{student}'s feedback from the list does not say {words!r}"
        if student == "student1":
            shots(tab, f"{student}-feedback-from-the-assignment-list")
            mine = tab.url
        else:  # a classmate's feedback page, by its address: the hub refuses student2 and student3
            refused = page.context.new_page()
            answer = refused.goto(mine)
            assert answer.status == 403, (student, answer.status, refused.url)
            assert expected["student1"][1] not in refused.inner_text("body")
            if student == "student2":
                shots(refused, f"{student}-refused-a-classmates-feedback")
            refused.close()
        tab.close()
        page.goto(course_hub.service_url())  # and from the student's checks, one click opens it
        page.click("#assignment-attention [id^='feedback'] a")
        page.wait_for_load_state()
        text = page.inner_text("body")
        for words in expected[student]:
            assert words in text, f"{student}'s feedback does not say {words!r}"
        if student != "student1":  # the first failed verdict; student1's page is shown from its totals
            page.locator("pre:has-text('FAIL')").first.scroll_into_view_if_needed()
        shots(page, f"{student}-feedback")
    shots.phase("feedback read")
    term_and_appeals(pages, teacher, course_hub, course, shots)


def test_make_hub_starts_the_course_and_ctrl_c_leaves_nothing_running(open_state):
    """The command `make hub` runs: it prints the address and the accounts, serves the hub's login page on
    127.0.0.1, and Ctrl-C (SIGINT) stops the hub, its proxy and everything else it started."""
    why = hub.why_unavailable()
    if why is not None:
        pytest.skip(why)
    import signal
    import urllib.request

    port, state = hub.free_port(), open_state
    command = [sys.executable, "-m", "autograder.hub", "--state", str(state), "--port", str(port), "--students", "2"]
    process = subprocess.Popen(command, cwd=REPOSITORY, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    shell = None
    try:
        said = []
        for line in process.stdout:
            said.append(line)
            if line.startswith("Ctrl-C stops it"):
                break
        said = "".join(said)
        assert f"http://localhost:{port} (any password)" in said, said
        assert f"instructor: instructor at http://instructor.localhost:{port}" in said, said
        assert "students:   student1, student2" in said and "assignments: attention" in said, said
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/hub/login", timeout=10) as page:
            assert page.status == 200 and b"username_input" in page.read()
        assert hub.processes_in(state.resolve()), "nothing of the hub runs in its state folder"
        # the instructor's own shell in the course folder is not the hub's: stopping the hub leaves it alone
        shell = subprocess.Popen(["sleep", "120"], cwd=state / "home" / "instructor" / "attention")
    finally:
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    assert shell is not None, rest
    try:
        assert process.returncode == 0 and "stopped: nothing of the hub is running" in rest, rest
        assert shell.poll() is None, "stopping the hub stopped a process it had not started"
        assert hub.processes_in(state.resolve()) == [shell.pid]
    finally:
        shell.kill()
        shell.wait()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, "the hub's port still answers"
