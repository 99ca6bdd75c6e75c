"""The store's catalogue: load it, split it, and fetch the real one.

Two catalogues share one format, Wayfair's WANDS ``dataset/product.csv`` (tab-separated, nine columns):

* ``"standin"`` (default): ``data/products.csv.gz``, the course's own catalogue, written by
  ``python recordings/catalogue.py``. The store's model was trained on it.
* ``"wands"``: ``data/wands/product.csv``, the real WANDS file, written by ``python -m lib.store download``
  for those with the internet.

``load_products(split, catalogue)`` returns a pandas DataFrame sorted by ``product_id`` with the columns
``product_id, name, product_class, category, description, features, rating_count, average_rating,
review_count, split``. Text columns hold ``""`` where the file has nothing; the rating columns stay float with
NaN. Each call returns a fresh copy, so changing it changes nothing for the next caller.

Files are looked up under the module-level ``DATA_DIR`` at call time; tests (or anyone with the data
elsewhere) can point it somewhere else: ``monkeypatch.setattr(lib.store, "DATA_DIR", tmp_path)``.

The split is one rule, ``split_of(product_id)``: ``"validation"`` when ``crc32(str(product_id)) % 10 == 0``,
else ``"train"`` (about 90/10, the same on every machine, for either catalogue).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import tempfile
import urllib.request
import zlib
from pathlib import Path

import pandas as pd

import lib

DATA_DIR = lib.DATA_DIR  # the one lookup rule: lib.data_folder

WANDS_URL = "https://raw.githubusercontent.com/wayfair/WANDS/main/dataset/product.csv"
WANDS_BLOB_ID = "a415f7295dc0d90b3163ef606da611a4e9ddeca8"

WANDS_COLUMNS = [
    "product_id",
    "product_name",
    "product_class",
    "category hierarchy",
    "product_description",
    "product_features",
    "rating_count",
    "average_rating",
    "review_count",
]
RENAMES = {
    "product_name": "name",
    "category hierarchy": "category",
    "product_description": "description",
    "product_features": "features",
}
TEXT_COLUMNS = ["name", "product_class", "category", "description", "features"]
RATING_COLUMNS = ["rating_count", "average_rating", "review_count"]

SPLITS = ("all", "train", "validation")
CATALOGUES = {
    "standin": ("products.csv.gz", "python recordings/catalogue.py"),
    "wands": ("wands/product.csv", "python -m lib.store download"),
}

urlopen = urllib.request.urlopen  # looked up at call time, so tests can replace it


class CatalogueMissingError(FileNotFoundError):
    """The catalogue file is not there; the message names the file and the command that makes it."""


class CatalogueFormatError(ValueError):
    """The file's header is not WANDS's nine columns."""


class UnknownChoiceError(ValueError):
    """An unknown split or catalogue name."""


class DownloadError(ValueError):
    """The downloaded file is not the expected WANDS product.csv; nothing was written."""


def split_of(product_id: int) -> str:
    """``"validation"`` for about one product in ten (crc32 of the decimal id, mod 10, is 0), else ``"train"``."""
    return "validation" if zlib.crc32(str(int(product_id)).encode()) % 10 == 0 else "train"


def catalogue_path(catalogue: str = "standin") -> Path:
    """Where a catalogue's file lives under ``DATA_DIR``."""
    _check_choice("catalogue", catalogue, tuple(CATALOGUES))
    return Path(DATA_DIR) / CATALOGUES[catalogue][0]


def load_products(split: str = "all", catalogue: str = "standin") -> pd.DataFrame:
    """The catalogue's products (all, or one split), sorted by product_id; a copy the caller may change."""
    _check_choice("split", split, SPLITS)
    path = catalogue_path(catalogue)
    if not path.is_file():
        raise CatalogueMissingError(
            f"The {catalogue} catalogue file {path} does not exist. "
            f"Make it with `{CATALOGUES[catalogue][1]}` from the repository root."
        )
    stat = path.stat()
    products = _read(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if split != "all":
        products = products[products["split"] == split]
    return products.reset_index(drop=True).copy()


def _check_choice(what: str, value: str, valid: tuple[str, ...]) -> None:
    if value not in valid:
        raise UnknownChoiceError(f"Unknown {what} {value!r}; use one of: {', '.join(repr(v) for v in valid)}.")


@functools.lru_cache(maxsize=4)
def _read(path: str, mtime_ns: int, size: int) -> pd.DataFrame:
    """Parse a WANDS-format file once per (path, modification time, size); callers get copies."""
    header = pd.read_csv(path, sep="\t", nrows=0).columns.tolist()
    missing = [c for c in WANDS_COLUMNS if c not in header]
    unexpected = [c for c in header if c not in WANDS_COLUMNS]
    if missing or unexpected:
        raise CatalogueFormatError(
            f"{path} does not have the WANDS product.csv columns. "
            f"Missing: {missing or 'none'}; unexpected: {unexpected or 'none'}. "
            f"Expected a tab-separated header: {' | '.join(WANDS_COLUMNS)}."
        )
    frame = pd.read_csv(
        path,
        sep="\t",
        dtype={c: str for c in WANDS_COLUMNS if c not in ("product_id", *RATING_COLUMNS)},
        keep_default_na=False,
        na_values={c: [""] for c in WANDS_COLUMNS},
    )
    frame = frame[WANDS_COLUMNS].rename(columns=RENAMES)
    frame["product_id"] = frame["product_id"].astype("int64")
    for column in TEXT_COLUMNS:
        frame[column] = frame[column].fillna("").astype(str)
    for column in RATING_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    frame["split"] = [split_of(i) for i in frame["product_id"]]
    return frame.sort_values("product_id", kind="stable").reset_index(drop=True)


def git_blob_id(content: bytes) -> str:
    """Git's object id for a file's bytes: sha1 of ``b"blob <length>\\0" + content`` (as ``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def download(url: str = WANDS_URL, expected: str = WANDS_BLOB_ID, opener=None, timeout: float = 120) -> Path:
    """Fetch WANDS's product.csv, check its git blob id, and write it to ``DATA_DIR/wands/product.csv``.

    The file is written to a temporary name beside the target and renamed into place, so a failed or
    mismatched download leaves nothing behind. ``opener`` defaults to ``urllib.request.urlopen``.
    """
    opener = opener or urlopen
    with opener(url, timeout=timeout) as response:
        content = response.read()
    found = git_blob_id(content)
    if found != expected:
        raise DownloadError(
            f"The file downloaded from {url} has git blob id {found}, not {expected} "
            f"({len(content):,} bytes); it was not saved. Check the URL, or whether WANDS has changed."
        )
    target = catalogue_path("wands")
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".product.csv.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    usage = "usage: python -m lib.store download   (fetches WANDS product.csv into data/wands/)"
    if argv in (["-h"], ["--help"]):
        print(usage)
        return 0
    if argv != ["download"]:
        print(usage, file=sys.stderr)
        return 2
    try:
        path = download()
    except (OSError, DownloadError) as error:
        print(f"download failed: {error}", file=sys.stderr)
        return 1
    print(f"wrote {path} (git blob id {WANDS_BLOB_ID})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
