"""Build the student package, ``attention-course-lib``: a wheel holding ``lib`` and the data it reads.

    python packaging/student_wheel.py            # -> dist/attention_course_lib-<version>-py3-none-any.whl
    make student-wheel                           # the same

Students install that one file (``pip install attention_course_lib-<version>-py3-none-any.whl``); numpy, pandas
and matplotlib come from their index as its dependencies. It holds:

- ``lib/*.py``, the course library, as in the repository;
- ``lib/data/``: the store's catalogue (``products.csv.gz``) and the recorded model (``model/``: weights,
  vocabulary, merges, manifest, the PyTorch reference logits and the recorded head statistics), copied from the
  repository's ``data/`` at build time. ``lib.data_folder`` reads them there once installed, and from the
  repository's ``data/`` in a checkout, so git holds the data once.

and nothing of the instructor's side: no ``source/``, ``autograder/``, ``tests/``, ``examples/``, no checks and no
solution. No answer key either: the graded functions' references live beside the hidden checks
(``source/<assignment>/reference.py``), and lib computes what students write only fused inside something bigger
(the model's rotary positions, scaling, mask and softmax inside one private step of its forward pass, whose
outputs are no graded function's, nor any part of one: tests/packaging/wheel_scan.py calls every function of the
installed wheel, private ones too, on the hidden checks' inputs and compares every item of what it returns).
The build refuses a file that holds a solution or hidden-test marker, and a module that defines, holds or is
named after one of a reference's functions (any assignment's ``reference.py``).

The wheel is written here with the standard library (a wheel is a zip with three metadata files, PEP 427), not
by setuptools: no build dependency, no network, and the same bytes on every build of the same tree (fixed file
times and order), so its sha256 identifies what students were given. The name, the version and the
dependencies' bounds are the repository's pyproject.toml's: one version for both packages.
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import re
import sys
import tomllib
import zipfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
NAME = "attention-course-lib"
SUMMARY = "The attention course's library (lib) with the store's catalogue and its recorded model"
DEPENDENCIES = ("numpy", "pandas", "matplotlib")  # lib and the notebook at run time; bounds from pyproject.toml
DATA = (  # what lib reads, relative to data/ (data/wands/, an instructor's download, is not shipped)
    "products.csv.gz",
    "model/weights.npz",
    "model/vocabulary.json",
    "model/merges.txt",
    "model/manifest.json",
    "model/reference_logits.npz",
    "model/head_statistics.json",  # lib.experiments.recorded_head_statistics: measured numbers, not how to compute them
)
FORBIDDEN = (b"BEGIN SOLUTION", b"END SOLUTION", b"BEGIN HIDDEN TESTS", b"import autograder", b"from autograder")
STAMP = (1980, 1, 1, 0, 0, 0)  # every member's time: the same tree gives the same bytes


def project() -> dict:
    return tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]


def version() -> str:
    return project()["version"]


def requirements() -> list[str]:
    """The root project's requirement lines for DEPENDENCIES, bounds included."""
    found = {re.match(r"[A-Za-z0-9_.-]+", line).group(0).lower(): line for line in project()["dependencies"]}
    return [found[name] for name in DEPENDENCIES]


def wheel_name(release: str | None = None) -> str:
    return f"{NAME.replace('-', '_')}-{release or version()}-py3-none-any.whl"


def members(repository: Path = REPOSITORY) -> list[tuple[str, Path]]:
    """(path in the wheel, file here) for lib's modules and its data, in a fixed order."""
    library = sorted((repository / "lib").glob("*.py"))
    data = [(f"lib/data/{name}", repository / "data" / name) for name in DATA]
    missing = [str(path) for _, path in data if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"the student wheel needs {', '.join(missing)}: run `make train` to record them")
    return [(f"lib/{path.name}", path) for path in library] + data


def reference_names(repository: Path = REPOSITORY) -> set[str]:
    """The public functions of every assignment's reference (source/*/reference.py): the graded functions and their
    helpers, which no module of the wheel may define or hold."""
    names = set()
    for path in sorted((repository / "source").glob("*/reference.py")):
        tree = ast.parse(path.read_bytes(), filename=str(path))
        names |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name[0] != "_"}
    return names


def names_bound(content: bytes) -> set[str]:
    """Every name a module binds anywhere in it: functions, classes, assignments, attributes set, imports."""
    names = set()
    for node in ast.walk(ast.parse(content)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[-1])
    return names


def record_line(name: str, content: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(content)}"


def metadata(release: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {release}",
        f"Summary: {SUMMARY}",
        "License: MIT",
        "Requires-Python: >=3.11",
        *(f"Requires-Dist: {requirement}" for requirement in requirements()),
    ]
    return "\n".join(lines) + "\n"


def build(dist: Path, repository: Path = REPOSITORY) -> Path:
    """Write the wheel into ``dist`` and return its path."""
    release = version()
    info = f"{NAME.replace('-', '_')}-{release}.dist-info"
    files = [(name, path.read_bytes()) for name, path in members(repository)]
    answers = reference_names(repository)
    for name, content in files:
        marker = next((m for m in FORBIDDEN if m in content), None)
        if marker is not None:
            raise ValueError(f"{name} holds {marker.decode()!r}: the student wheel ships no solution and no check")
        named = sorted((names_bound(content) | {Path(name).stem}) & answers) if name.endswith(".py") else []
        if named:
            raise ValueError(
                f"{name} defines or holds {', '.join(named)}, the name of a graded function's reference "
                "(source/<assignment>/reference.py): the student wheel ships no answer key. Keep the reference "
                "there, and compute the operation inside lib only where something bigger needs it"
            )
    files += [
        (f"{info}/METADATA", metadata(release).encode()),
        (
            f"{info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: packaging/student_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        ),
        (f"{info}/top_level.txt", b"lib\n"),
    ]
    record = "".join(record_line(name, content) + "\n" for name, content in files) + f"{info}/RECORD,,\n"
    files.append((f"{info}/RECORD", record.encode()))
    dist.mkdir(parents=True, exist_ok=True)
    target = dist / wheel_name(release)
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name, content in files:
            member = zipfile.ZipInfo(name, date_time=STAMP)
            member.external_attr = 0o644 << 16
            member.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(member, content)
    partial.replace(target)
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Build the student wheel (lib and its data).")
    parser.add_argument("--dist", type=Path, default=REPOSITORY / "dist", help="folder for the wheel (default: dist/)")
    target = build(parser.parse_args(argv).dist)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    print(f"{target} ({target.stat().st_size / 1e6:.1f} MB, sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
