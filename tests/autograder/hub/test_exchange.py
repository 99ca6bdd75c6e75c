"""nbgrader's exchange as the hub runs it, attacked with real system accounts: a student who races Collect, plants
links where root makes folders, forges names and times, buries the start in a deep tree or fills RAM-backed
folders; and what a hub start changes in the exchange (nothing).

Each test makes the hub's accounts (instructor, student1, student2) with autograder.hub.launch.prepare, as root;
without root or useradd each is skipped with the reason.
"""

from __future__ import annotations

import datetime
import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import accounts_or_skip
from hub_config import Spawner, hub_config, pre_spawn_hook

from autograder import REPOSITORY, sandbox
from autograder.exchange import snapshot
from autograder.hub import launch as hub
from autograder.hub import limits

STUDENTS = ["student1", "student2"]
SOURCE_NOTEBOOK = ("home", "instructor", "attention", "source", "attention", "attention.ipynb")
HOSTILE_NAMES = [  # inbound names nbgrader's own collect cannot parse (each stopped Collect for the whole class)
    b"student2+attention+\xff\xfe not utf-8+x",
    b"student2+attention+9999-12-31 23:59:59-01:00+x",
    b"student2+attention+" + b"9" * 200 + b"+x",
    b"student2+attention+ +x",
    "student2+attention+junk…+x".encode(),
    b"student2+attention+2026-13-45 99:99:99 UTC+x",
]
ODD_BUT_OWN = "2026-12-01 10:00:00.000000 UTC+a+b+c\n"  # extra + parts, a newline: still its owner's own Submit


@pytest.fixture(scope="module")
def state():
    """A hub's state folder prepared once for the module: the accounts, their homes, the exchange, the course."""
    accounts_or_skip()
    folder = Path(tempfile.mkdtemp(prefix="attention-exchange-"))
    folder.chmod(0o711)
    why = hub.why_unreachable(folder)
    if why is not None:
        shutil.rmtree(folder)
        pytest.skip(why)
    os.environ["PATH"] = os.pathsep.join([str(hub.runtime().parent), os.environ["PATH"]])
    hub.prepare(folder / "state", STUDENTS)
    yield folder / "state"
    remove(folder)
    limits.remove_groups()


def account(name: str) -> pwd.struct_passwd:
    return pwd.getpwnam(name)


def handed(path: Path, name: str) -> Path:
    """``path`` and everything in it given to the account ``name`` (root makes the tests' files)."""
    owner = account(name)
    for item in [path, *path.rglob("*")]:
        os.lchown(item, owner.pw_uid, owner.pw_gid)
    return path


def inbound_of(state: Path) -> Path:
    return state / "exchange" / "attention" / "inbound"


def submit(state: Path, student: str, stamp: str, body: bytes, extra: int = 0) -> Path:
    """A Submit as nbgrader's submit leaves it (its folder, the notebook, timestamp.txt), made by ``student``;
    ``extra`` small files beside the notebook (named to be copied before it)."""
    folder = inbound_of(state) / f"{student}+attention+{stamp}+{os.urandom(4).hex()}"
    folder.mkdir(mode=0o750)
    (folder / "attention.ipynb").write_bytes(body)
    (folder / "timestamp.txt").write_text(stamp)
    for number in range(extra):
        (folder / f"{number:04d}.txt").write_text(f"note {number}\n")
    return handed(folder, student)


def notebook(text: str) -> bytes:
    cell = {"cell_type": "markdown", "metadata": {}, "source": text, "id": "a1"}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def collect_as_instructor(state: Path, *options: str) -> subprocess.CompletedProcess:
    """nbgrader's collect as the instructor's server runs it (hub/instructor/'s configuration: OwnCollect)."""
    course = state / "home" / "instructor" / "attention"
    environment = {
        "PATH": os.pathsep.join([str(hub.runtime().parent), "/usr/sbin", "/usr/bin", "/sbin", "/bin"]),
        "HOME": account("instructor").pw_dir,
        "JUPYTER_CONFIG_PATH": str(REPOSITORY / "hub" / "instructor"),
        "JUPYTER_CONFIG_DIR": str(REPOSITORY / "hub" / "instructor"),
        "ATTENTION_HUB_COURSE": str(course),
        "ATTENTION_HUB_COURSE_ID": "attention",
        "ATTENTION_HUB_EXCHANGE": str(state / "exchange"),
        "PYTHONPATH": str(REPOSITORY),
    }
    command = ["runuser", "-u", "instructor", "--", str(hub.runtime()), "-m", "nbgrader", "collect", "attention"]
    return subprocess.run(
        [*command, *options], cwd=course, env=environment, capture_output=True, text=True, timeout=300
    )


def collected(state: Path, student: str) -> Path:
    return state / "home" / "instructor" / "attention" / "submitted" / student / "attention"


def remove(path: Path) -> None:
    """``path`` deleted however deep (Python's rmtree recurses past its limit on the deep trees made here)."""
    subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], check=True)


def clear_inbound(state: Path) -> None:
    for entry in os.listdir(os.fsencode(inbound_of(state))):
        remove(Path(os.fsdecode(os.path.join(os.fsencode(inbound_of(state)), entry))))
    remove(state / "home" / "instructor" / "attention" / "submitted")


# --- Collect: one reader of names, a hostile entry refused alone ------------------------------------------------


def test_hostile_inbound_names_are_refused_each_alone_and_collect_takes_the_rest(state):
    clear_inbound(state)
    honest = submit(state, "student1", "2026-12-01 10:00:00.000000 UTC", notebook("mine"))
    for raw in HOSTILE_NAMES:
        folder = os.path.join(os.fsencode(inbound_of(state)), raw)
        os.mkdir(folder)
        os.chown(folder, account("student2").pw_uid, account("student2").pw_gid)
    done = collect_as_instructor(state)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ParserError" not in done.stderr and "Traceback" not in done.stderr
    assert (collected(state, "student1") / "attention.ipynb").read_bytes() == (honest / "attention.ipynb").read_bytes()
    refusals = [line for line in done.stderr.splitlines() if "Not collected:" in line]
    assert len(refusals) == len(HOSTILE_NAMES), done.stderr[-3000:]
    reasons = ("not UTF-8", "time in its name is not one nbgrader writes")
    assert all(any(reason in line for reason in reasons) for line in refusals), refusals
    assert not collected(state, "student2").exists()
    odd = submit(state, "student2", "", notebook("odd"))
    odd.rename(inbound_of(state) / f"student2+attention+{ODD_BUT_OWN}")
    done = collect_as_instructor(state)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (collected(state, "student2") / "attention.ipynb").read_bytes() == notebook("odd")


def test_a_forged_name_a_link_and_a_deep_tree_are_refused_and_the_earlier_copy_is_kept(state):
    clear_inbound(state)
    first = submit(state, "student1", "2026-12-01 10:00:00.000000 UTC", notebook("first"))
    assert collect_as_instructor(state).returncode == 0
    kept = (collected(state, "student1") / "attention.ipynb").read_bytes()
    assert kept == (first / "attention.ipynb").read_bytes()
    later = submit(state, "student1", "2026-12-01 11:00:00.000000 UTC", notebook("later"))
    (later / "attention.ipynb").unlink()
    (later / "attention.ipynb").symlink_to(state.joinpath(*SOURCE_NOTEBOOK))
    handed(later, "student1")
    forged = submit(state, "student1", "2026-12-01 12:00:00.000000 UTC", notebook("forged by student2"))
    handed(forged, "student2")  # student2 made it in student1's name
    deep = submit(state, "student2", "2026-12-01 12:00:00.000000 UTC", notebook("deep"))
    nest(deep, 1100, "student2")
    done = collect_as_instructor(state, "--update")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "RecursionError" not in done.stderr
    assert "attention.ipynb is a symbolic link" in done.stderr
    assert "names student1 but was made by another account" in done.stderr
    assert "more than 32 folders deep" in done.stderr
    assert (collected(state, "student1") / "attention.ipynb").read_bytes() == kept  # the earlier one, untouched


def test_collect_before_the_due_date_takes_each_students_own_due_date(state):
    """An extension (autograder.course.term) moves the student's own due date: Collect --before-duedate takes their
    latest Submit before it, and a classmate's before the assignment's."""
    from nbgrader.api import Gradebook

    from autograder.term import Term

    clear_inbound(state)
    url = f"sqlite:///{state / 'home' / 'instructor' / 'attention' / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        gradebook.update_or_create_assignment("attention", duedate=datetime.datetime(2026, 12, 1, 11, 0))
    term = Term(url)
    term.extend(student="student1", assignment="attention", hours=2)  # hers: 13:00
    term.close()
    for student in STUDENTS:
        submit(state, student, "2026-12-01 10:00:00.000000 UTC", notebook(f"{student} on time"))
        submit(state, student, "2026-12-01 12:00:00.000000 UTC", notebook(f"{student} at noon"))
    try:
        done = collect_as_instructor(state, "--before-duedate")
    finally:
        term = Term(url)
        term.extend(student="student1", assignment="attention")
        term.close()
        with Gradebook(url) as gradebook:
            gradebook.update_or_create_assignment("attention", duedate=None)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (collected(state, "student1") / "attention.ipynb").read_bytes() == notebook("student1 at noon")
    assert (collected(state, "student2") / "attention.ipynb").read_bytes() == notebook("student2 on time")


def nest(folder: Path, depth: int, owner: str) -> Path:
    """``depth`` folders one inside the other in ``folder``, made by ``owner`` (with descriptors: the path grows past
    PATH_MAX)."""
    uid, gid = account(owner).pw_uid, account(owner).pw_gid
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=handle)
        os.chown("d", uid, gid, dir_fd=handle)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=handle)
        os.close(handle)
        handle = inner
    os.close(handle)
    return folder


# --- Collect: the race ----------------------------------------------------------------------------------------

RACER = r"""
import ctypes, os, struct, sys
folder, target = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL("libc.so.6", use_errno=True)
IN_OPEN = 0x20
watch = libc.inotify_init()
libc.inotify_add_watch(watch, folder.encode(), IN_OPEN)
print("watching", flush=True)
while True:  # the first file the copy opens: swap the notebook for a link to the instructor's source notebook
    data = os.read(watch, 4096)
    offset, started = 0, False
    while offset < len(data):
        _, mask, _, length = struct.unpack_from("iIII", data, offset)
        name = data[offset + 16 : offset + 16 + length].rstrip(b"\0")
        offset += 16 + length
        started = started or name.endswith(b".txt")
    if started:
        break
os.symlink(target, os.path.join(folder, ".swap"))
os.rename(os.path.join(folder, ".swap"), os.path.join(folder, "attention.ipynb"))
print("swapped", flush=True)
"""


def test_a_link_renamed_over_the_notebook_while_collect_copies_is_refused_never_read(state, tmp_path):
    """The attack of issue 38: a Submit of 9,000 small files; the student watches with inotify for the copy to
    start and renames a link to the course's source notebook over their notebook. The snapshot refuses it."""
    source = state.joinpath(*SOURCE_NOTEBOOK)
    solution = source.read_bytes()
    tries, refused = 0, []
    while tries < 3 and not refused:
        tries += 1
        clear_inbound(state)
        folder = submit(state, "student1", "2026-12-01 10:00:00.000000 UTC", notebook("honest"), extra=9000)
        racer = state / "home" / "student1" / "racer.py"
        racer.write_text(RACER)
        handed(racer, "student1")
        watcher = subprocess.Popen(
            ["runuser", "-u", "student1", "--", str(hub.runtime()), str(racer), str(folder), str(source)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert watcher.stdout.readline().strip() == "watching"
            done = collect_as_instructor(state)
            try:
                said = watcher.communicate(timeout=10)[0]
            except subprocess.TimeoutExpired:  # the copy never opened a file: nothing to race
                watcher.kill()
                said = watcher.communicate()[0]
        finally:
            if watcher.poll() is None:
                watcher.kill()
        assert done.returncode == 0, done.stderr[-3000:]
        assert "swapped" in said  # the link was in place before the copy reached the notebook
        copy = collected(state, "student1") / "attention.ipynb"
        assert not copy.exists() or copy.read_bytes() != solution
        refused += [line for line in done.stderr.splitlines() if "Not collected:" in line]
    assert refused, "the racer never swapped during a copy"
    assert any("attention.ipynb" in line for line in refused), refused
    assert not collected(state, "student1").exists()  # nothing of it: neither the link's target nor a half copy
    assert "Collecting submission: student1" not in done.stderr  # Formgrader's dialog counts only what was taken
    print(f"race: refused on try {tries}: {refused[0]}")


@pytest.mark.parametrize("swapped_for", ["a link", "another file", "a folder for a link"])
def test_a_file_swapped_between_listing_and_opening_is_refused(tmp_path, monkeypatch, swapped_for):
    """The narrowest window, made certain: the notebook is replaced just after the walk has listed and checked it
    and just before it opens it (by a link to the solution: O_NOFOLLOW; by another file, a hard link to the
    solution: fstat's inode is not the one listed); refused, and the solution is never copied."""
    secret = tmp_path / "secret.ipynb"
    secret.write_text("SOLUTION")
    submission = tmp_path / "inbound" / "student+attention+t+x"
    (submission / "work").mkdir(parents=True)
    (submission / "attention.ipynb").write_text("honest")
    (submission / "work" / "notes.txt").write_text("mine")
    real_open = os.open
    hidden = tmp_path / "hidden"  # a folder of the instructor's, holding the solution
    hidden.mkdir()
    (hidden / "notes.txt").write_text("SOLUTION")

    def swapping_open(path, flags, *args, dir_fd=None, **kwargs):
        if swapped_for == "a folder for a link" and path == "work" and dir_fd is not None:
            os.rename("work", "work.old", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            os.symlink(hidden, "work", dir_fd=dir_fd)
        elif swapped_for != "a folder for a link" and path == "attention.ipynb" and dir_fd is not None:
            os.unlink(path, dir_fd=dir_fd)
            if swapped_for == "a link":
                os.symlink(secret, path, dir_fd=dir_fd)
            else:
                os.link(secret, path, dst_dir_fd=dir_fd)
        return real_open(path, flags, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(snapshot.os, "open", swapping_open)
    swapped = "work" if swapped_for == "a folder for a link" else "attention.ipynb"
    with pytest.raises(snapshot.Refused, match=f"{swapped} was swapped for something else"):
        snapshot.copy(submission, tmp_path / "copy", owner=os.getuid())
    monkeypatch.undo()
    copied = [path.read_bytes() for path in (tmp_path / "copy").rglob("*") if path.is_file()]
    assert b"SOLUTION" not in copied


def test_the_snapshot_copies_files_and_times_and_refuses_what_is_over_its_limits(tmp_path):
    submission = tmp_path / "inbound" / "student+attention+t+x"
    (submission / "sub").mkdir(parents=True)
    (submission / "attention.ipynb").write_bytes(b"x" * 1000)
    (submission / "sub" / "notes.txt").write_text("notes")
    os.utime(submission / "attention.ipynb", (1_700_000_000, 1_700_000_000))
    copied = snapshot.copy(submission, tmp_path / "copy", owner=0)
    assert copied == 1005
    assert (tmp_path / "copy" / "attention.ipynb").read_bytes() == b"x" * 1000
    assert (tmp_path / "copy" / "attention.ipynb").stat().st_mtime == 1_700_000_000
    assert (tmp_path / "copy" / "sub" / "notes.txt").read_text() == "notes"
    with pytest.raises(snapshot.Refused, match="more than 2 files and folders"):
        snapshot.scan(submission, owner=0, limits=snapshot.Limits(entries=2))
    with pytest.raises(snapshot.Refused, match="holds more than 9.53674e-05 MB"):
        snapshot.scan(submission, owner=0, limits=snapshot.Limits(bytes=100))
    os.mkfifo(submission / "sub" / "pipe")
    with pytest.raises(snapshot.Refused, match="sub/pipe is not a plain file"):
        snapshot.scan(submission, owner=0)
    with pytest.raises(snapshot.Refused, match="was made by another account"):
        snapshot.scan(submission, owner=12345)


def test_a_file_the_instructor_cannot_read_is_refused_by_the_scan_as_the_instructor(state):
    """Run as a real account (root reads anything): a submission whose notebook its owner made unreadable."""
    folder = submit(state, "student1", "2026-12-01 10:00:00.000000 UTC", notebook("closed"))
    (folder / "attention.ipynb").chmod(0)
    scan = (
        "import sys; from pathlib import Path; from autograder.hub import collect; "
        "print(collect.refusal(Path(sys.argv[1]), 'student1'))"
    )
    ran = subprocess.run(
        ["runuser", "-u", "instructor", "--", str(hub.runtime()), "-c", scan, str(folder)],
        env={"PYTHONPATH": str(REPOSITORY), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.stdout.strip().endswith(
        "attention.ipynb cannot be read by the instructor (nbgrader's submit leaves it readable)"
    ), ran
    remove(folder)


# --- root's steps: the spawn hook and the start ---------------------------------------------------------------


def tree(folder: Path) -> dict:
    """Every entry under ``folder`` (links not followed): its owner, mode and modification time."""
    found = {}
    stack = [folder]
    while stack:
        current = stack.pop()
        for entry in os.scandir(current):
            status = entry.stat(follow_symlinks=False)
            found[os.path.relpath(entry.path, folder)] = (
                status.st_uid,
                status.st_gid,
                status.st_mode,
                status.st_mtime_ns,
            )
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    return found


def others(state: Path) -> dict:
    """Every entry of the instructor's home and the classmate's, with its owner, mode and time."""
    return {name: tree(state / "home" / name) for name in ("instructor", "student2")}


@pytest.mark.parametrize(
    "planted, aimed_at",
    [
        (".exchange", ("home", "instructor")),  # the issue's: root chowned the instructor's course to the student
        (".exchange/attention", ("home", "instructor", "attention")),
        (".tmp", ("home", "student2")),  # a classmate's home
        (".bridge", ("home", "instructor", "attention", "source")),
        (".exchange/attention/inbound", ("home", "instructor", "attention", "source", "attention")),
    ],
)
def test_links_planted_where_root_makes_a_students_folders_are_moved_aside_never_followed(
    state, monkeypatch, planted, aimed_at
):
    home, target = state / "home" / "student1", state.joinpath(*aimed_at)
    hook = pre_spawn_hook(state, monkeypatch)
    hook(Spawner("student1"))  # the home as a start leaves it
    link = home / planted
    remove(link)
    link.symlink_to(target, target_is_directory=True)  # then the student plants a link there
    os.lchown(link, account("student1").pw_uid, account("student1").pw_gid)
    before, top = others(state), os.lstat(target)
    hook(Spawner("student1"))
    assert others(state) == before  # nothing of the instructor's or the classmate's changed owner, mode or time
    assert (os.lstat(target).st_uid, os.lstat(target).st_mode) == (top.st_uid, top.st_mode)
    moved = [entry for entry in os.listdir(link.parent) if entry.startswith(f"{link.name}.moved-")]
    assert len(moved) == 1 and os.readlink(link.parent / moved[0]) == str(target)  # the student's link, kept aside
    for folder in (".exchange", ".exchange/attention", ".tmp", ".bridge"):
        assert os.lstat(home / folder).st_uid == account("student1").pw_uid and not (home / folder).is_symlink()
    for folder in ("outbound", "inbound", "feedback"):
        assert os.readlink(home / ".exchange" / "attention" / folder) == str(state / "exchange" / "attention" / folder)
    remove(link.parent / moved[0])


def test_a_restart_changes_no_owner_or_time_in_the_exchange_and_a_deep_home_does_not_stop_it(state):
    clear_inbound(state)
    submit(state, "student1", "2026-12-01 10:00:00.000000 UTC", notebook("mine"))
    submit(state, "student1", "2026-12-01 11:00:00.000000 UTC", notebook("forged"))
    forged = submit(state, "student1", "2026-12-01 12:00:00.000000 UTC", notebook("forged by student2"))
    handed(forged, "student2")  # a classmate's forgery keeps its true owner through every start
    nest(state / "home" / "student2", 1100, "student2")
    exchange_before, homes_before = tree(state / "exchange"), tree(state / "home" / "student1")
    for _ in range(2):  # two starts, as a restart and an upgrade run prepare again
        hub.prepare(state, STUDENTS)
    assert tree(state / "exchange") == exchange_before
    assert tree(state / "home" / "student1") == homes_before
    assert os.lstat(forged).st_uid == account("student2").pw_uid
    done = collect_as_instructor(state)
    assert done.returncode == 0 and "names student1 but was made by another account" in done.stderr
    assert (collected(state, "student1") / "attention.ipynb").read_bytes() == notebook("forged")
    remove(state / "home" / "student2" / "d")


def test_a_course_exchange_folder_made_by_a_student_before_the_hub_is_moved_aside_not_taken_over(tmp_path, capsys):
    accounts_or_skip()
    state = tmp_path / "state"
    planted = state / "exchange" / "attention"
    (planted / "inbound" / "student1+attention+2026-12-01 10:00:00 UTC+x").mkdir(parents=True)
    for path in [planted, *planted.rglob("*")]:
        os.chown(path, account("nobody").pw_uid, -1)
    hub.prepare_exchange(state, "attention", account("daemon"))
    (moved,) = [entry for entry in (state / "exchange").iterdir() if entry.name.startswith("attention.moved-")]
    assert os.lstat(moved).st_uid == account("nobody").pw_uid and (moved / "inbound").is_dir()  # kept, as it was
    fresh = state / "exchange" / "attention"
    assert os.lstat(fresh).st_uid == account("daemon").pw_uid and sorted(os.listdir(fresh / "inbound")) == []
    assert "moved aside" in capsys.readouterr().err


def test_a_plain_start_leaves_a_gradebook_nbgrader_and_the_service_both_open(state):
    from nbgrader.api import Gradebook

    from autograder.attempts import Attempts

    url = f"sqlite:///{state / 'home' / 'instructor' / 'attention' / 'gradebook.db'}"
    Attempts(url).close()  # the service's table beside nbgrader's
    with Gradebook(url) as gradebook:  # the README's class command opens it so: no "no such table: alembic_version"
        assert {assignment.name for assignment in gradebook.assignments} == {"attention", "positions"}


# --- each student's resources ---------------------------------------------------------------------------------

HOG = """
import os, sys, time
print(open("/proc/self/cgroup").read().strip().replace("\\n", " "), flush=True)
if os.fork() == 0:  # memory: a child that takes more than the whole server may
    blocks = [bytearray(2**20) for _ in range(int(sys.argv[1]))]
    os._exit(0)
_, status = os.wait()
print("memory", os.waitstatus_to_exitcode(status), flush=True)
children = []
try:  # processes: forking past the server's bound
    for _ in range(int(sys.argv[2])):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children.append(pid)
except BlockingIOError:
    pass
print("processes", len(children), flush=True)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
busy = [os.fork() for _ in range(2)]  # CPU: two busy processes for 1 s of the clock
if 0 in busy:
    end = time.monotonic() + 1
    while time.monotonic() < end:
        pass
    os._exit(0)
for pid in busy:
    os.waitpid(pid, 0)
print("cpu", round(os.times().children_user + os.times().children_system, 2), flush=True)
"""


def test_a_students_server_and_what_it_starts_share_memory_process_and_cpu_limits_they_cannot_leave(state, monkeypatch):
    found = limits.hierarchies()
    if "memory" not in found:
        pytest.skip(limits.why_unbounded())
    bounds = limits.ServerLimits(memory=128 * 2**20, processes=40, cpus=0.5)
    groups = limits.server_groups("student1", bounds)
    assert limits.memory_limit(groups) == 128 * 2**20
    spawner_class = hub_config(state, monkeypatch).JupyterHub.spawner_class
    monkeypatch.setattr(limits, "SERVER", bounds)  # what the course's spawner reads when the server starts
    preexec = spawner_class.make_preexec_fn(spawner_class.__new__(spawner_class), "student1")
    monkeypatch.undo()
    hog = state / "home" / "student1" / "hog.py"
    hog.write_text(HOG)
    ran = subprocess.run(
        [str(hub.runtime()), str(hog), "400", "100"], preexec_fn=preexec, cwd="/", capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    said = dict(line.split(" ", 1) for line in ran.stdout.splitlines()[1:])
    assert f"{limits.GROUPS}/student1" in ran.stdout.splitlines()[0]
    assert said["memory"] == str(-signal.SIGKILL), ran  # its child, past 128 MiB for the server: stopped by the kernel
    if "pids" in found:
        assert int(said["processes"]) < 40, ran  # the fork past the server's 40 refused
    if "cpu" in found:
        assert float(said["cpu"]) < 0.8, ran  # two busy processes, 1 s: half a core's worth between them
    escape = subprocess.run(
        [
            str(hub.runtime()),
            "-c",
            f"open('{groups[0].parent}/cgroup.procs', 'w').write(str(__import__('os').getpid()))",
        ],
        preexec_fn=preexec,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "PermissionError" in escape.stderr  # no leaving it for the hub's group
    limits.server_groups("student1")  # the course's own limits back for the hub tests after this one
    limits.remove_groups()


def test_dev_shm_is_bounded_and_the_rest_of_dev_read_only_in_every_sandbox(state):
    if sandbox.bubblewrap() is None:
        pytest.skip("bubblewrap is not available (apt-get install bubblewrap)")
    script = (
        "dd if=/dev/zero of=/dev/shm/fill bs=1M count=200 2>/dev/null; echo shm=$(stat -c %s /dev/shm/fill); "
        "echo planted > /dev/planted; echo dev=$?; echo fine > /dev/null; echo null=$?"
    )
    view = sandbox.Sandbox(writable=(), environment=False)
    student = account("student1")

    def become():
        os.setgid(student.pw_gid)
        os.setuid(student.pw_uid)

    ran = subprocess.run(
        sandbox.command(["/bin/sh", "-c", script], view), preexec_fn=become, capture_output=True, text=True, timeout=60
    )
    said = ran.stdout + ran.stderr
    assert f"shm={sandbox.SHARED_MEMORY}" in said, said  # 200 MB asked, 64 MiB there: the rest refused
    assert "Read-only file system" in said and "dev=2" in said and "null=0" in said, said
