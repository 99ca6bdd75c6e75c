"""The course library: the store, its tokenizer and its model, and the data they read; import submodules as needed.

lib is what students install (the student wheel): it holds no function of its own for any operation the course's
students write (their references live with the grader, source/<assignment>/reference.py).

``DATA_DIR`` is where lib reads the store's catalogue and the recorded model, decided once here: the ``data``
folder inside this package when lib was installed from the student wheel (the wheel carries the data there),
else the repository's ``data/`` beside ``lib/`` (a checkout, or ``pip install -e .``).
"""

from pathlib import Path


def data_folder(package: Path | None = None) -> Path:
    """The folder holding ``products.csv.gz`` and ``model/`` for the lib package at ``package`` (default: this one)."""
    package = Path(package) if package is not None else Path(__file__).resolve().parent
    installed = package / "data"
    return installed if installed.is_dir() else package.parent / "data"


DATA_DIR = data_folder()
