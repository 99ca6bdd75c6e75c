"""The student package: a wheel of lib and its data, built from this repository, that works wherever it is installed."""

import base64
import csv
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import lib
from lib import store, transformer

ROOT = Path(__file__).resolve().parents[2]
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
    assert not [name for name in members if name.endswith(("checks.py", ".ipynb", "nbgrader_config.py"))]
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
    (fake / "lib" / "attention.py").write_text("def softmax(x):\n    ### BEGIN SOLUTION\n    return x\n")
    for name in student_wheel.DATA:
        (fake / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / "data" / name).write_bytes(b"{}")
    with pytest.raises(ValueError, match="BEGIN SOLUTION"):
        student_wheel.build(tmp_path / "dist", repository=fake)


def test_in_a_checkout_lib_reads_the_repository_data():
    assert lib.DATA_DIR == ROOT / "data" == store.DATA_DIR and transformer.MODEL_DIR == ROOT / "data" / "model"
    assert not (ROOT / "lib" / "data").exists()  # else a checkout would read that copy


def test_the_installed_wheel_runs_the_model_from_any_folder(wheel, tmp_path):
    """pip installs the wheel into a folder; from a folder outside the repository, that copy reads its own data."""
    target, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    ids = [int(i) for i in np.random.default_rng(11).integers(4, 400, size=12)]
    script = (
        "import json, sys; import numpy as np; import lib, lib.transformer as t, lib.store as s\n"
        "logits = t.forward(json.loads(sys.argv[1]))\n"
        "print(json.dumps({'lib': lib.__file__, 'data': str(t.MODEL_DIR), 'logits': logits[-1, :50].tolist(),\n"
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
    assert seen["validation"] == len(store.load_products("validation"))


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
