"""The student package: a wheel of lib and its data, built from this repository, that works wherever it is installed,
and holds no answer key: no graded function's name, no function that computes one (the references live beside the
hidden checks, source/<assignment>/reference.py, which no release holds either)."""

import ast
import base64
import csv
import hashlib
import importlib.util
import inspect
import io
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import lib
from autograder import assignments
from autograder.checks import Mapped
from autograder.course.run import release_notebook
from lib import experiments, store, transformer

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "source"  # the course's assignments, each with its checks.py and its reference.py
SOURCE = COURSE / "attention"
SCAN = Path(__file__).resolve().parent / "wheel_scan.py"
_spec = importlib.util.spec_from_file_location("student_wheel", ROOT / "packaging" / "student_wheel.py")
student_wheel = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(student_wheel)

DATA = [
    "lib/data/products.csv.gz",
    "lib/data/model/weights.npz",
    "lib/data/model/vocabulary.json",
    "lib/data/model/merges.txt",
    "lib/data/model/manifest.json",
    "lib/data/model/reference_logits.npz",
    "lib/data/model/head_statistics.json",
]


def install(wheel: Path, target: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(target), wheel],
        check=True,
        capture_output=True,
    )
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return student_wheel.build(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def members(wheel):
    with zipfile.ZipFile(wheel) as opened:
        return {name: opened.read(name) for name in opened.namelist()}


def test_the_wheel_is_named_and_versioned(wheel, members):
    version = student_wheel.version()
    assert wheel.name == f"attention_course_lib-{version}-py3-none-any.whl"
    fields = [
        line.split(": ", 1)
        for line in members[f"attention_course_lib-{version}.dist-info/METADATA"].decode().splitlines()
    ]
    assert ("Name", "attention-course-lib") in [tuple(f) for f in fields]
    assert ("Version", version) in [tuple(f) for f in fields]
    required = sorted(value.split(">")[0] for key, value in fields if key == "Requires-Dist")
    assert required == ["matplotlib", "numpy", "pandas"]


def test_the_wheel_holds_lib_and_its_data_and_nothing_of_the_instructor(members):
    modules = sorted(f"lib/{path.name}" for path in (ROOT / "lib").glob("*.py"))
    info = [name for name in members if name.split("/")[0].endswith(".dist-info")]
    assert sorted(members) == sorted(modules + DATA + info)
    assert sorted(name.split("/")[1] for name in info) == ["METADATA", "RECORD", "WHEEL", "top_level.txt"]
    for name in modules:
        assert members[name] == (ROOT / name).read_bytes(), f"{name} differs from the repository's"
    for name in DATA:
        assert members[name] == (ROOT / "data" / name.removeprefix("lib/data/")).read_bytes()
    for folder in ("source/", "autograder/", "tests/", "examples/", "release/", "recordings/", "data/wands/"):
        assert not [name for name in members if name.startswith(folder) or f"/{folder}" in name]
    assert not [
        name for name in members if name.endswith(("checks.py", "reference.py", ".ipynb", "nbgrader_config.py"))
    ]
    for marker in (b"BEGIN SOLUTION", b"BEGIN HIDDEN TESTS", b"autograder"):
        assert not [name for name, content in members.items() if marker in content], marker


def test_the_record_lists_every_file_with_its_hash(members):
    (record,) = [name for name in members if name.endswith(".dist-info/RECORD")]
    rows = {row[0]: row[1:] for row in csv.reader(io.StringIO(members[record].decode()))}
    assert sorted(rows) == sorted(members) and rows[record] == ["", ""]
    for name, (digest, size) in rows.items():
        if name != record:
            expected = base64.urlsafe_b64encode(hashlib.sha256(members[name]).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == (f"sha256={expected}", len(members[name])), name


def test_two_builds_give_the_same_bytes(wheel, tmp_path):
    assert student_wheel.build(tmp_path).read_bytes() == wheel.read_bytes()


def test_the_build_refuses_a_solution(tmp_path):
    fake = tmp_path / "repository"
    (fake / "lib").mkdir(parents=True)
    (fake / "lib" / "ops.py").write_text("def scores(x):\n    ### BEGIN SOLUTION\n    return x\n")
    for name in student_wheel.DATA:
        (fake / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / "data" / name).write_bytes(b"{}")
    with pytest.raises(ValueError, match="BEGIN SOLUTION"):
        student_wheel.build(tmp_path / "dist", repository=fake)


def test_in_a_checkout_lib_reads_the_repository_data():
    assert lib.DATA_DIR == ROOT / "data" == store.DATA_DIR and transformer.MODEL_DIR == ROOT / "data" / "model"
    assert not (ROOT / "lib" / "data").exists()  # else a checkout would read that copy


def test_the_installed_wheel_runs_the_model_from_any_folder(wheel, tmp_path):
    """pip installs the wheel into a folder; from a folder outside the repository, that copy reads its own data,
    runs the model with its own attention and with a student's (an attention written here, as a student would),
    and runs the chapter's experiments and the texts the notebook measures."""
    target, elsewhere = install(wheel, tmp_path / "site"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    ids = [int(i) for i in np.random.default_rng(11).integers(4, 400, size=12)]
    script = (
        "import json, sys; import numpy as np; import lib, lib.transformer as t, lib.store as s\n"
        "from lib import experiments, products\n"
        "def mine(q, k, v, mask):\n"
        "    scores = np.where(mask, q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), -np.inf)\n"
        "    w = np.exp(scores - scores.max(-1, keepdims=True))\n"
        "    w = w / w.sum(-1, keepdims=True)\n"
        "    return w, w @ v\n"
        "ids = json.loads(sys.argv[1])\n"
        "logits = t.forward(ids)\n"
        "print(json.dumps({'lib': lib.__file__, 'data': str(t.MODEL_DIR), 'logits': logits[-1, :50].tolist(),\n"
        "                  'driven': float(np.abs(t.forward(ids, attention=mine) - logits).max()),\n"
        "                  'copied': experiments.copy_experiment(),\n"
        "                  'texts': len(products.product_texts('validation', 5)),\n"
        "                  'validation': len(s.load_products('validation'))}))\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(target), "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(ids)], cwd=elsewhere, env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["lib"] == str(target / "lib" / "__init__.py")
    assert seen["data"] == str(target / "lib" / "data" / "model")
    np.testing.assert_array_equal(seen["logits"], transformer.forward(ids)[-1, :50])
    assert seen["driven"] < 1e-9  # a student's attention drives the installed model
    assert seen["copied"] == experiments.copy_experiment() and seen["texts"] == 5
    assert seen["validation"] == len(store.load_products("validation"))


def test_the_installed_wheel_checks_a_function_on_the_release_s_numbers_from_the_notebook_s_folder(
    wheel, members, tmp_path
):
    """The visible checks' side of lib (lib.check) ships in the wheel and, with only the release's folder beside it,
    names a student's mistake and passes a right answer, with no file of the repository in reach."""
    assert "lib/check.py" in members
    target, folder = install(wheel, tmp_path / "site"), tmp_path / "positions"
    folder.mkdir()
    shutil.copy(ROOT / "release" / "positions" / "visible_checks.json", folder)
    script = (
        "import numpy as np\n"
        "from lib.check import check, CheckFailed\n"
        "def rotation_angles(positions, size, base=10000.0):\n"
        "    return np.arange(positions)[:, None] * base ** (-np.arange(0, size, 2) / size)\n"
        "check('rotation_angles', rotation_angles)\n"
        "def rotation_angles(positions, size, base=10000.0):\n"
        "    return np.arange(positions)[:, None] * 10000.0 ** (-np.arange(0, size, 2) / size)\n"
        "try:\n"
        "    check('rotation_angles', rotation_angles)\n"
        "except CheckFailed as failed:\n"
        "    print(failed)\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run([sys.executable, "-c", script], cwd=folder, env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith("✓ rotation_angles: 2 properties hold on the public inputs"), first
    assert second.startswith("rotation_angles(") and second.endswith(": ignores base: use the base given"), second


def test_the_installed_wheel_runs_the_tour(wheel, tmp_path):
    target, elsewhere = install(wheel, tmp_path / "site"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    environment = {**os.environ, "PYTHONPATH": str(target), "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "lib.tour"], cwd=elsewhere, env=environment, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    gap = float(re.search(r"largest difference (\S+) \(must be < 1e-4\)", done.stdout).group(1))
    assert gap < 1e-4
    assert "Head statistics over the first 300 validation products" in done.stdout


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_graders_sandboxed_kernel_imports_the_course_lib(tmp_path):
    """Graded, the notebook's plain `import lib` finds the course folder's lib (the grader's, bound read-only) and
    its data, though the sandbox holds neither the repository nor the editable install's paths."""
    import nbformat
    from nbclient import NotebookClient

    from autograder.notebook.kernel import SandboxedKernelManager

    (tmp_path / "lib").symlink_to(ROOT / "lib", target_is_directory=True)  # a course folder, as graded
    folder = tmp_path / "submitted" / "ada" / "attention"
    folder.mkdir(parents=True)
    probe = "import lib, lib.transformer\nprint(lib.__file__, lib.transformer.load()[2]['settings']['layers'])"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(probe)])
    NotebookClient(
        notebook, timeout=60, kernel_manager_class=SandboxedKernelManager, resources={"metadata": {"path": str(folder)}}
    ).execute()
    assert notebook.cells[0].outputs[0]["text"].split() == [str(tmp_path / "lib" / "__init__.py"), "4"]


# --- no answer key --------------------------------------------------------------------------------------------


def graded_cases(checks, seeds=range(3)) -> list:
    """(graded function, args, kwargs, the reference's result) for every plain call the hidden checks make on
    ``seeds`` (a call the grader drives, or one reading the model's patterns from a file, is left out)."""
    own = getattr(inspect.getmodule(checks.stand_in), "reference", None)  # checks.py's: graded function -> reference
    key = assignments.reference(checks.folder)
    yardstick = own or (lambda function: getattr(key, function))  # else reference.py's function of the same name
    cases = []
    for seed in seeds:
        for check in checks.checks.values():
            for call in check.calls(np.random.default_rng(seed)):
                given = [*call.args, *call.kwargs.values()]
                if call.drive is not None or call.files or any(isinstance(value, Mapped) for value in given):
                    continue
                expected = yardstick(call.function)(*call.args, **call.kwargs)
                cases.append((call.function, call.args, call.kwargs, expected))
    return cases


def scan(site: Path, cases: list, tmp_path: Path) -> dict:
    """wheel_scan.py run on the lib installed in ``site``, from a folder outside the repository."""
    cases_file, out, elsewhere = tmp_path / "cases.pickle", tmp_path / "scan.json", tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    cases_file.write_bytes(pickle.dumps(cases))
    environment = {**os.environ, "PYTHONPATH": str(site), "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(SCAN), str(cases_file), str(out)],
        cwd=elsewhere,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["lib"] == str(site / "lib" / "__init__.py")  # the installed copy, not the repository's
    return report


@pytest.fixture(scope="module", params=assignments.names(COURSE))
def checks(request):
    """Each assignment of the course, in turn: attention, and positions (whose rotate the store's model computes)."""
    return assignments.load(COURSE / request.param)


def test_no_module_of_the_wheel_defines_or_holds_a_graded_function_s_name(wheel, members, tmp_path):
    """Every graded function's name, of every assignment of the course, looked for in the source of each module
    (a def, a class, an assignment, an attribute set, an import) and among the names each installed module holds;
    none is found."""
    graded = {name for course in assignments.names(COURSE) for name in assignments.load(COURSE / course).graded}
    assert len(graded) >= 18 and {"softmax", "attention", "safe_softmax", "rotate", "rotation_angles"} <= graded
    modules = {name: content for name, content in members.items() if name.endswith(".py")}
    assert "lib/transformer.py" in modules and "lib/attention.py" not in modules and "lib/heads.py" not in modules
    for name, content in modules.items():
        found = (student_wheel.names_bound(content) | {Path(name).stem}) & graded
        assert not found, f"{name} defines or holds {sorted(found)}: the wheel ships no graded function"
    report = scan(install(wheel, tmp_path / "site"), [], tmp_path)
    assert sorted(report["names"]) == sorted(
        ["lib"] + [f"lib.{Path(name).stem}" for name in modules if not name.endswith("__init__.py")]
    )
    for module, names in report["names"].items():
        assert not set(names) & graded, f"{module} holds {sorted(set(names) & graded)}"


def test_the_name_search_finds_a_graded_name_wherever_it_is_bound():
    """The source search of the test above, on the ways a module can hold a name."""
    for source in (
        "def softmax(x):\n    return x\n",
        "class T:\n    def attention(self):\n        pass\n",
        "causal_mask = None\n",
        "import numpy\nnumpy.join_heads = len\n",
        "from math import exp as safe_softmax\n",
        "def forward():\n    def split_heads(x):\n        return x\n",
    ):
        assert student_wheel.names_bound(source.encode()) & {
            "softmax",
            "attention",
            "causal_mask",
            "join_heads",
            "safe_softmax",
            "split_heads",
        }, source


def test_the_build_refuses_a_module_holding_a_reference_s_name(tmp_path):
    fake = tmp_path / "repository"
    (fake / "lib").mkdir(parents=True)
    (fake / "source" / "course").mkdir(parents=True)
    (fake / "source" / "course" / "reference.py").write_text(
        "def layer_norm(x):\n    return x\n\n\ndef _h():\n    pass\n"
    )
    (fake / "lib" / "model.py").write_text("import numpy as np\n\nlayer_norm = np.tanh\n")
    (fake / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    for name in student_wheel.DATA:
        (fake / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / "data" / name).write_bytes(b"{}")
    with pytest.raises(ValueError, match=r"lib/model.py defines or holds layer_norm, the name of a graded function"):
        student_wheel.build(tmp_path / "dist", repository=fake)
    (fake / "lib" / "model.py").write_text("import numpy as np\n\nnorm = np.tanh\n")
    assert student_wheel.build(tmp_path / "dist", repository=fake).is_file()


def test_no_function_of_the_wheel_computes_a_graded_function(wheel, checks, tmp_path):
    """Every callable of every module of the installed wheel, public or private, is called with each graded
    function's inputs from the assignment's hidden checks (where its signature takes them, or with the missing
    arguments filled in): none gives the reference's results, nor any part of them (an item of what it returns, as
    it is or as a mask; the result's cos or sin). The same search, with the reference planted in the installed lib,
    finds every graded function (it looks at what a function computes, not at its name)."""
    cases = graded_cases(checks)
    assert {case[0] for case in cases} == set(checks.graded)
    site = install(wheel, tmp_path / "site")
    report = scan(site, cases, tmp_path)
    assert report["equal"] == [], f"the wheel computes graded functions: {report['how']}"
    assert len(report["callables"]) >= 30  # lib's functions were looked at...
    assert "lib.transformer._attention_layer" in report["callables"]
    assert sum(report["called"].values()) >= len(checks.graded)  # ...and called with the checks' inputs where they fit

    (site / "lib" / "_tools.py").write_bytes((checks.folder / "reference.py").read_bytes())  # an answer key, planted
    (tmp_path / "planted").mkdir()
    found = scan(site, cases, tmp_path / "planted")["equal"]
    assert {graded for where, graded in found if where.startswith("lib._tools.")} == set(checks.graded)


# lib.transformer's tables as they were before issue 35: each returned a graded answer in part, under a private name
OLD_TABLES = """
import functools
import numpy as np


@functools.lru_cache(maxsize=1024)
def _angles(positions: int, size: int, base: float):
    frequencies = base ** (-np.arange(0, size, 2) / size)
    angles = np.arange(positions)[:, None] * frequencies[None, :]
    return np.cos(angles), np.sin(angles)


@functools.lru_cache(maxsize=1024)
def _fast_tables(positions: int, size: int, base: float):
    cos, sin = _angles(positions, size, base)
    hidden = np.triu(np.full((positions, positions), -np.inf, dtype=np.float32), k=1)
    return cos.astype(np.float32), sin.astype(np.float32), hidden
"""


def test_the_search_finds_a_graded_answer_returned_in_part(wheel, tmp_path):
    """The private tables lib.transformer had before issue 35, planted in the installed lib: the search finds that
    one returns rotation_angles' cos and sin and the other, with a head's size and a base filled in, a mask to add
    whose zeros are causal_mask's, though neither returns a graded answer whole."""
    cases = graded_cases(assignments.load(COURSE / "positions")) + graded_cases(assignments.load(COURSE / "attention"))
    site = install(wheel, tmp_path / "site")
    (site / "lib" / "_old_tables.py").write_text(OLD_TABLES)
    report = scan(site, cases, tmp_path)
    found = {tuple(pair) for pair in report["equal"]}
    assert found == {
        ("lib._old_tables._angles", "rotation_angles"),
        ("lib._old_tables._fast_tables", "rotation_angles"),
        ("lib._old_tables._fast_tables", "causal_mask"),
    }, report["how"]
    how = " | ".join(report["how"])
    assert "lib._old_tables._angles: its result[0] is cos of the result; its result[1] is sin of the result" in how
    assert (
        "lib._old_tables._fast_tables: its result[2] == 0 is the result; its result[2] finite is the result; "
        "called with arguments filled in from FILLERS, of causal_mask"
    ) in how


def test_no_release_holds_the_reference(checks, tmp_path):
    """nbgrader's generate_assignment, run as the class command runs it, releases the notebook and the visible
    checks' numbers (visible_checks.json) alone: not the reference beside them, nor the checks; and neither released
    file holds the reference's code."""
    name, (notebook,) = checks.name, assignments.notebooks(checks.folder)
    release_notebook(checks.folder, tmp_path)
    released = sorted(path.relative_to(tmp_path / "release") for path in (tmp_path / "release").rglob("*"))
    assert released == [Path(name), Path(name) / f"{notebook}.ipynb", Path(name) / "visible_checks.json"]
    assert (checks.folder / "reference.py").is_file() and (tmp_path / "source" / name / "reference.py").is_file()
    text = (tmp_path / "release" / name / f"{notebook}.ipynb").read_text()
    text += (tmp_path / "release" / name / "visible_checks.json").read_text()
    tree = ast.parse((checks.folder / "reference.py").read_text())
    bodies = [ast.unparse(node.body[-1]) for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert len(bodies) >= len(checks.graded) - 1  # safe_softmax's reference is softmax
    assert not [body for body in bodies if json.dumps(body)[1:-1] in text]
