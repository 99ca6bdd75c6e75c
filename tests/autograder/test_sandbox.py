"""autograder.sandbox and the sandboxed kernel, on their own (the whole pipeline is in test_hostile.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import sandbox
from autograder.notebook.kernel import SandboxedKernelManager

REPOSITORY = Path(__file__).resolve().parents[2]
needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None, reason=f"bubblewrap is not available ({sandbox.INSTALL})"
)


def test_without_bubblewrap_nothing_runs_unless_the_instructor_allowed_it(monkeypatch, capsys):
    """Fail closed: no bwrap, no student code, with what to do; --unsandboxed (the variable) runs it unwrapped,
    saying once which protections are missing."""
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    monkeypatch.delenv(sandbox.UNSANDBOXED, raising=False)
    sandbox.bubblewrap.cache_clear()
    sandbox.warn_once.cache_clear()
    try:
        message = sandbox.why_unprotected()
        assert "bubblewrap is not installed (apt-get install bubblewrap)" in message
        assert "network" in message and "limits would still apply" in message
        inner = [sys.executable, "-c", "print(1)"]
        with pytest.raises(sandbox.SandboxUnavailable, match="Nothing was graded.*--unsandboxed"):
            sandbox.command(inner, sandbox.Sandbox(writable=()))
        monkeypatch.setenv(sandbox.UNSANDBOXED, "1")
        assert sandbox.command(inner, sandbox.Sandbox(writable=())) is inner
        sandbox.command(inner, sandbox.Sandbox(writable=()))
        assert capsys.readouterr().err.count("WARNING: bubblewrap is not installed") == 1
    finally:
        sandbox.bubblewrap.cache_clear()
        sandbox.warn_once.cache_clear()


def test_the_hidden_checks_refuse_to_run_answers_without_the_sandbox(monkeypatch):
    from autograder import assignments
    from autograder.answers.grading import grade_answers

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    monkeypatch.delenv(sandbox.UNSANDBOXED, raising=False)
    sandbox.bubblewrap.cache_clear()
    try:
        with pytest.raises(sandbox.SandboxUnavailable):
            grade_answers(
                assignments.load(REPOSITORY / "source" / "attention"),
                ["def softmax(scores):\n    return scores\n"],
                seed=1,
                checks=["check_softmax"],
            )
    finally:
        sandbox.bubblewrap.cache_clear()


def test_limits_are_set_before_the_command_starts():
    import subprocess

    command = sandbox.limited(
        [
            sys.executable,
            "-c",
            "import resource as r; print(r.getrlimit(r.RLIMIT_AS)[0], "
            "r.getrlimit(r.RLIMIT_FSIZE)[0], r.getrlimit(r.RLIMIT_CPU)[0])",
        ],
        2**31,
        2**20,
        10,
        cpu_seconds=7,
    )
    assert subprocess.run(command, capture_output=True, text=True, check=True).stdout.split() == [
        str(2**31),
        str(2**20),
        "7",
    ]


PROBE = f"""
import json, os, socket
seen = {{}}
for path in [{str(REPOSITORY / "autograder" / "checks.py")!r}, {str(REPOSITORY / "source")!r}, "/etc/shadow",
             {str(Path.home() / ".bashrc")!r}, {str(REPOSITORY / ".git")!r}, "/home"]:
    try:
        os.listdir(path) if os.path.isdir(path) else open(path, "rb").read(1)
        seen[path] = "read"
    except OSError as error:
        seen[path] = type(error).__name__
try:
    socket.create_connection(("127.0.0.1", 22), timeout=2)
    seen["network"] = "connected"
except OSError as error:
    seen["network"] = type(error).__name__
for path in ["mine.txt", "/tmp/outside.txt", {str(REPOSITORY / "dropped.txt")!r}]:
    try:
        open(path, "w").write("x")
        seen["write " + path] = "wrote"
    except OSError as error:
        seen["write " + path] = type(error).__name__
import sys
sys.path.insert(0, os.path.abspath("../../.."))   # the course folder, as the notebook's setup cell finds it
import lib.transformer
seen["lib"] = lib.transformer.load()[2]["settings"]["layers"]
print(json.dumps(seen))
"""


def run_in_a_graded_kernel(course: Path, code: str) -> tuple[dict, Path]:
    """(the JSON ``code`` printed, the kernel's folder) of one cell run by the grader's sandboxed kernel, in
    ``course`` laid out as graded: lib linked in, the notebook in autograded/ada/attention/."""
    (course / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
    folder = course / "autograded" / "ada" / "attention"
    folder.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(
        notebook, timeout=60, kernel_manager_class=SandboxedKernelManager, resources={"metadata": {"path": str(folder)}}
    ).execute()
    return json.loads(notebook.cells[0].outputs[0]["text"]), folder


@needs_bubblewrap
def test_the_kernel_sees_its_folder_lib_and_data_and_nothing_else(tmp_path):
    seen, folder = run_in_a_graded_kernel(tmp_path, PROBE)
    refused = {key: value for key, value in seen.items() if value in ("read", "connected", "wrote")}
    assert refused == {"write mine.txt": "wrote"}, seen  # only its own folder
    assert not Path("/tmp/outside.txt").exists()
    assert seen["lib"] == 4
    assert (folder / "mine.txt").read_text() == "x"
    assert not (REPOSITORY / "dropped.txt").exists()


@needs_bubblewrap
@pytest.mark.parametrize("given_by", ["configuration", "environment"])
def test_the_kernel_reads_the_class_forward_cache_and_cannot_change_it(tmp_path, monkeypatch, given_by):
    from traitlets.config import Config

    from autograder.grading import forward, recorded
    from autograder.notebook import kernel
    from lib.products import product_texts

    assert kernel.FORWARD_CACHE == recorded.FORWARD_CACHE

    (tmp_path / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
    (tmp_path / "data").symlink_to(REPOSITORY / "data", target_is_directory=True)
    folder = tmp_path / "autograded" / "ada" / "attention"
    folder.mkdir(parents=True)
    ids = product_texts("validation", 1)[0][0]
    case = [(list(map(int, ids[:5])), int(ids[5]))]  # one ablation query: P(ids[5]) after ids[:5], head (1, 2) zeroed
    cache = forward.write_forward_cache(tmp_path / "forward", [ids], queries=[(case, {(1, 2)})])
    before = {path.name: path.read_bytes() for path in cache.iterdir()}
    config = Config()
    if given_by == "configuration":  # what grade_submission writes into its private folder's nbgrader_config.py
        config.SandboxedKernelManager.forward_cache = str(cache)
        monkeypatch.delenv(recorded.FORWARD_CACHE, raising=False)
    else:  # an instructor's own setting, for nbgrader run the usual way
        monkeypatch.setenv(recorded.FORWARD_CACHE, str(cache))
    probe = f"""
import json, os, sys
sys.path.insert(0, {str(tmp_path)!r})
from lib import transformer
cached = transformer.recorded is not None and transformer.recorded({list(map(int, ids))}, transformer.MODEL_DIR)
cached = cached is not None and cached is not False
answers = transformer.recorded_probabilities
asked = answers and answers({case}, {{1: (2,)}}, transformer.MODEL_DIR)
queried = asked is not None and asked is not False and len(asked) == 1
left = sorted(name for name in globals() if "attention_recorded" in name)  # the start file leaves no name
logits = transformer.forward({list(map(int, ids))})
logits[:] = 0.0                                   # its own copy
try:
    open(os.path.join(os.environ["ATTENTION_FORWARD_CACHE"], "logits.npy"), "r+b").write(b"x")
    wrote = "wrote"
except OSError:
    wrote = "refused"
where = os.environ["ATTENTION_FORWARD_CACHE"]
print(json.dumps({{"where": where, "cached": cached, "queried": queried, "write": wrote, "left": left}}))
"""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(probe)])
    NotebookClient(
        notebook,
        timeout=60,
        kernel_manager_class=SandboxedKernelManager,
        config=config,
        resources={"metadata": {"path": str(folder)}},
    ).execute()
    seen = json.loads(notebook.cells[0].outputs[0]["text"])
    assert seen == {"where": "/run/attention/forward", "cached": True, "queried": True, "write": "refused", "left": []}
    assert {path.name: path.read_bytes() for path in cache.iterdir()} == before


ENVIRONMENT_PROBE = """
import json, os
import numpy as np
print(json.dumps({"environ": dict(os.environ), "sum": float(np.ones(3).sum())}))
"""


@needs_bubblewrap
def test_the_kernel_gets_an_allow_listed_environment_not_the_graders(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_SECRET_TOKEN", "s3cret-marker")
    monkeypatch.setenv("DATABASE_URL", "postgresql://grader:pw@db/course")
    monkeypatch.setenv("PYTHONPATH", "/grader/private/path")
    seen, _ = run_in_a_graded_kernel(tmp_path, ENVIRONMENT_PROBE)
    environ = seen["environ"]
    assert seen["sum"] == 3.0  # the kernel works: NumPy imports and computes
    assert "s3cret-marker" not in json.dumps(environ)
    assert "ATTENTION_SECRET_TOKEN" not in environ and "DATABASE_URL" not in environ
    assert environ["PYTHONPATH"] == str(tmp_path)  # the course folder only, not the grader's PYTHONPATH
    assert environ["OPENBLAS_NUM_THREADS"] == "1" and environ["LANG"] == "C.UTF-8"
    allowed = {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONPATH", "MPLCONFIGDIR", "JPY_PARENT_PID"}
    allowed |= set(sandbox.SINGLE_THREAD)
    # set inside the sandbox by the kernel itself (ipykernel, IPython) and by the shell-less launch (PWD)
    kernel_adds = {"PYDEVD_USE_FRAME_EVAL", "TERM", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "PAGER", "GIT_PAGER"}
    kernel_adds |= {"MPLBACKEND", "PWD"}
    assert set(environ) - allowed - kernel_adds == set(), sorted(environ)


def test_a_student_environment_is_built_from_the_allow_list_only(tmp_path, monkeypatch):
    from autograder.notebook.kernel import kernel_environment

    monkeypatch.setenv("ATTENTION_SECRET_TOKEN", "s3cret-marker")
    view = sandbox.Sandbox(writable=(tmp_path,))
    built = kernel_environment(tmp_path, tmp_path / "course", view, None, {"SPEC_SETTING": "kept"})
    assert "ATTENTION_SECRET_TOKEN" not in built
    assert built["HOME"] == built["TMPDIR"] == str(tmp_path)
    assert built["PYTHONPATH"] == str(tmp_path / "course")
    assert built["SPEC_SETTING"] == "kept"  # the kernel spec's env is the instructor's configuration
    assert built["PATH"].split(":")[0] == str(Path(sys.executable).parent)


@needs_bubblewrap
def test_the_answers_runner_does_not_see_the_graders_environment_either(monkeypatch):
    from autograder import assignments
    from autograder.answers.grading import grade_answers

    monkeypatch.setenv("ATTENTION_SECRET_TOKEN", "s3cret-marker")
    leaked = (
        "import os\n\n"
        "def softmax(scores):\n"
        "    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))\n"
        "    weights = exps / exps.sum(axis=-1, keepdims=True)\n"
        "    seen = 's3cret-marker' in repr(dict(os.environ))\n"
        "    return weights * 2 if seen else weights  # a leak would cost the values\n"
    )
    attention = assignments.load(REPOSITORY / "source" / "attention")
    verdict = grade_answers(attention, [leaked], seed=3, checks=["check_softmax"])["check_softmax"]
    assert verdict.points == verdict.max_points, verdict.feedback


@needs_bubblewrap
def test_a_cell_cut_by_the_time_limit_says_so_with_the_limit(tmp_path):
    from autograder.notebook.kernel import SurvivingExecute

    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("import time\ntime.sleep(60)"),
            nbformat.v4.new_code_cell("print('next')"),
        ]
    )
    SurvivingExecute(timeout=2).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    errors = [output for output in notebook.cells[0].outputs if output.get("output_type") == "error"]
    said = [output["evalue"] for output in errors if output["ename"] == "CellTimeoutError"]
    assert said and "ran past its limit of 2 s (wall clock)" in said[0], errors
    assert notebook.cells[1].outputs[0]["text"] == "next\n"  # the cells after it still ran


def test_the_process_limit_counts_every_thread_of_the_user_as_the_kernel_does():
    """RLIMIT_NPROC counts tasks, threads included: the room a sandbox gets is counted the same way, so a user whose
    processes run many threads (a hub's servers, kernels, the service's workers) can still start the sandbox."""
    import threading

    release = threading.Event()
    before = sandbox.user_processes()
    waiting = [threading.Thread(target=release.wait) for _ in range(200)]
    for thread in waiting:
        thread.start()
    try:
        assert sandbox.user_processes() - before >= 150  # the 200 threads, whatever else ends meanwhile
    finally:
        release.set()
        for thread in waiting:
            thread.join()
