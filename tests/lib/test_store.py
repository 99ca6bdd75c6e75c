"""lib.store (loading, split, errors, download) and the committed stand-in catalogue it reads."""

from __future__ import annotations

import gzip
import io
import re
import shutil
import subprocess
import zlib
from collections import Counter

import pandas as pd
import pytest

from lib import store
from recordings import catalogue

HEADER = "\t".join(store.WANDS_COLUMNS)
ROWS = [
    # deliberately out of id order; id 6 has an empty description and no ratings
    (
        "29\t20 piece dinnerware set\tDinnerware Sets\tKitchen & Tabletop / Tableware & Drinkware / Dinnerware Sets"
        "\tSet a beautiful table with this dinnerware set.\tpiececount:20|material:stoneware\t12.0\t4.5\t9.0"
    ),
    (
        "0\tsled coffee table\tCoffee Tables\tFurniture / Living Room Furniture / Coffee Tables & End Tables / Coffee"
        " Tables\tThis sled coffee table is built from solid"
        " oak.\toverallwidth-sidetoside:20.5|material:wood\t15.0\t4.5\t15.0"
    ),
    "6\tnull\tWall Art\tDécor & Pillows / Wall Art\t\t\t\t\t",
    (
        "1\tdouble chaise patio furniture cover\tPatio Furniture Covers\tOutdoor / Outdoor Furniture Covers"
        "\tProtect your outdoor patio furniture from harsh elements.\tmaterial:polyester\t3.0\t5.0\t2.0"
    ),
]
TEXT = HEADER + "\n" + "\n".join(ROWS) + "\n"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A data folder holding a tiny stand-in (gzip) and a tiny WANDS file (plain), both in WANDS format."""
    (tmp_path / "products.csv.gz").write_bytes(gzip.compress(TEXT.encode("utf-8")))
    (tmp_path / "wands").mkdir()
    (tmp_path / "wands" / "product.csv").write_text(TEXT, encoding="utf-8")
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    return tmp_path


# ----------------------------------------------------------------------------------------------- loading


@pytest.mark.parametrize("which", ["standin", "wands"])
def test_load_products_renames_sorts_and_fills(data_dir, which):
    products = store.load_products(catalogue=which)
    assert list(products.columns) == [
        "product_id",
        "name",
        "product_class",
        "category",
        "description",
        "features",
        "rating_count",
        "average_rating",
        "review_count",
        "split",
    ]
    assert products["product_id"].tolist() == [0, 1, 6, 29]
    assert products["product_id"].dtype == "int64"
    row = products.set_index("product_id").loc[6]
    assert row["name"] == "null"  # a word that pandas would read as missing stays text
    assert row["description"] == "" and row["features"] == ""
    assert pd.isna(row["rating_count"]) and pd.isna(row["average_rating"])
    first = products.set_index("product_id").loc[0]
    assert first["category"].startswith("Furniture / Living Room Furniture")
    assert first["features"] == "overallwidth-sidetoside:20.5|material:wood"
    assert first["average_rating"] == 4.5
    assert products["split"].tolist() == [store.split_of(i) for i in products["product_id"]]


def test_load_products_splits(data_dir):
    everything = store.load_products()
    train, validation = store.load_products("train"), store.load_products("validation")
    assert set(train["split"]) <= {"train"} and set(validation["split"]) <= {"validation"}
    assert sorted(train["product_id"].tolist() + validation["product_id"].tolist()) == everything["product_id"].tolist()
    assert validation["product_id"].tolist() == [6, 29]  # crc32("6") and crc32("29") are 0 mod 10
    assert validation.index.tolist() == [0, 1]


def test_load_products_returns_copies(data_dir):
    first = store.load_products()
    first.loc[0, "name"] = "changed"
    del first["features"]
    again = store.load_products()
    assert again.loc[0, "name"] == "sled coffee table"
    assert "features" in again.columns


def test_load_products_rereads_a_changed_file(data_dir):
    assert len(store.load_products()) == 4
    path = data_dir / "products.csv.gz"
    path.write_bytes(gzip.compress((HEADER + "\n" + ROWS[1] + "\n").encode("utf-8")))
    assert len(store.load_products()) == 1


# ----------------------------------------------------------------------------------------------- errors


def test_missing_standin_says_which_file_and_how_to_make_it(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    with pytest.raises(FileNotFoundError) as error:
        store.load_products()
    assert isinstance(error.value, store.CatalogueMissingError)
    assert str(tmp_path / "products.csv.gz") in str(error.value)
    assert "python recordings/catalogue.py" in str(error.value)


def test_missing_wands_says_how_to_download(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    with pytest.raises(store.CatalogueMissingError) as error:
        store.load_products(catalogue="wands")
    assert str(tmp_path / "wands" / "product.csv") in str(error.value)
    assert "python -m lib.store download" in str(error.value)


def test_wrong_columns_name_missing_and_unexpected(data_dir):
    bad = TEXT.replace("product_description", "description").replace("review_count", "reviews")
    (data_dir / "wands" / "product.csv").write_text(bad, encoding="utf-8")
    with pytest.raises(ValueError) as error:
        store.load_products(catalogue="wands")
    message = str(error.value)
    assert isinstance(error.value, store.CatalogueFormatError)
    assert "product_description" in message and "review_count" in message  # missing
    assert "'description'" in message and "'reviews'" in message  # unexpected
    assert " | ".join(store.WANDS_COLUMNS) in message  # the expected header


def test_comma_separated_file_is_a_format_error(data_dir):
    (data_dir / "wands" / "product.csv").write_text(TEXT.replace("\t", ","), encoding="utf-8")
    with pytest.raises(store.CatalogueFormatError, match="Missing"):
        store.load_products(catalogue="wands")


def test_unknown_split_lists_the_valid_ones(data_dir):
    with pytest.raises(ValueError) as error:
        store.load_products("test")
    for valid in ("'all'", "'train'", "'validation'"):
        assert valid in str(error.value)
    assert "'test'" in str(error.value)


def test_unknown_catalogue_lists_the_valid_ones(data_dir):
    with pytest.raises(ValueError) as error:
        store.load_products(catalogue="amazon")
    assert "'standin'" in str(error.value) and "'wands'" in str(error.value) and "'amazon'" in str(error.value)


# ----------------------------------------------------------------------------------------------- the split


def test_split_rule_is_crc32_mod_10_and_about_ninety_ten():
    splits = [store.split_of(i) for i in range(43_000)]
    assert splits == [store.split_of(i) for i in range(43_000)]  # deterministic
    assert all(s == ("validation" if zlib.crc32(str(i).encode()) % 10 == 0 else "train") for i, s in enumerate(splits))
    share = splits.count("validation") / len(splits)
    assert 0.09 < share < 0.11
    assert [i for i in range(40) if store.split_of(i) == "validation"] == [6, 29, 37]
    assert store.split_of(548) == "validation"


# ----------------------------------------------------------------------------------------------- download


def test_git_blob_id_matches_git_hash_object(tmp_path):
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    content = b"product_id\tproduct_name\n0\tsled coffee table\n\xc3\xa9\x00binary tail"
    path = tmp_path / "sample.bin"
    path.write_bytes(content)
    expected = subprocess.run(
        [git, "hash-object", str(path)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert store.git_blob_id(content) == expected
    assert store.git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob


class FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def fake_opener(content: bytes, calls: list):
    def opener(url, timeout=None):
        calls.append(url)
        return FakeResponse(content)

    return opener


def test_download_writes_the_file_when_the_blob_id_matches(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    content = TEXT.encode("utf-8")
    calls = []
    path = store.download(opener=fake_opener(content, calls), expected=store.git_blob_id(content))
    assert calls == [store.WANDS_URL]
    assert path == tmp_path / "wands" / "product.csv"
    assert path.read_bytes() == content
    assert [p.name for p in path.parent.iterdir()] == ["product.csv"]  # no temporary file left
    assert store.load_products(catalogue="wands")["product_id"].tolist() == [0, 1, 6, 29]


def test_download_with_wrong_bytes_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    calls = []
    monkeypatch.setattr(store, "urlopen", fake_opener(b"not the WANDS file", calls))
    with pytest.raises(store.DownloadError) as error:
        store.download()
    assert calls == [store.WANDS_URL]
    assert store.WANDS_BLOB_ID in str(error.value) and "not saved" in str(error.value)
    assert not (tmp_path / "wands").exists() or not any((tmp_path / "wands").iterdir())


def test_download_command_reports_a_mismatch(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    monkeypatch.setattr(store, "urlopen", fake_opener(b"something else", []))
    assert store.main(["download"]) == 1
    assert "download failed" in capsys.readouterr().err
    assert not (tmp_path / "wands" / "product.csv").exists()
    assert store.main([]) == 2


def test_expected_blob_id_is_the_one_in_the_design():
    assert store.WANDS_BLOB_ID == "a415f7295dc0d90b3163ef606da611a4e9ddeca8"
    assert store.WANDS_URL == "https://raw.githubusercontent.com/wayfair/WANDS/main/dataset/product.csv"


# ----------------------------------------------------------------------------------------------- the generator


def test_generate_is_wands_format_and_deterministic(tmp_path, monkeypatch):
    small = catalogue.generate(300, seed=5)
    assert list(small.columns) == store.WANDS_COLUMNS
    assert small["product_id"].tolist() == list(range(300))
    assert (small["product_name"] == small["product_name"].str.lower()).all()
    assert small["product_name"].str.split().str.len().between(2, 9).all()
    assert small.equals(catalogue.generate(300, seed=5))
    assert not small.equals(catalogue.generate(300, seed=6))
    data = catalogue.to_bytes(small)
    assert data == catalogue.to_bytes(catalogue.generate(300, seed=5))
    (tmp_path / "products.csv.gz").write_bytes(data)
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    loaded = store.load_products()
    assert loaded["name"].tolist() == small["product_name"].tolist()
    assert loaded["description"].tolist() == small["product_description"].fillna("").tolist()
    chapter = loaded[loaded["name"] == catalogue.CHAPTER_NAME]
    assert chapter["split"].tolist() == ["validation"]


# --------------------------------------------------------------------------------------- the committed catalogue


@pytest.fixture(scope="module")
def products():
    return store.load_products()


def test_catalogue_size_classes_and_empty_descriptions(products):
    assert len(products) >= 40_000
    assert products["product_id"].tolist() == list(range(len(products)))
    assert products["product_class"].str.split("|").str[0].nunique() >= 150
    empty = (products["description"] == "").mean()
    assert 0.09 <= empty <= 0.16
    assert (products["name"] == products["name"].str.lower()).all()
    assert products["name"].str.split().str.len().between(2, 9).all()
    validation = products[products["split"] == "validation"]
    assert (validation["description"] != "").sum() >= 300


def test_chapter_product_is_in_validation_with_its_phrase(products):
    chapter = products[products["name"] == "double chaise patio furniture cover"]
    assert len(chapter) == 1
    row = chapter.iloc[0]
    assert row["split"] == "validation"
    validation_ids = products.loc[products["split"] == "validation", "product_id"].tolist()
    assert validation_ids.index(row["product_id"]) < 300
    first = "Protect your outdoor patio furniture from harsh elements with this outdoor patio furniture cover."
    assert row["description"].startswith(first + " ")
    more = re.split(r"(?<=[.!?])\s+", row["description"][len(first) :].strip())
    assert 2 <= len(more) <= 5


def test_training_descriptions_continue_the_chapter_phrase_in_several_ways(products):
    phrase = "this outdoor patio furniture "
    after = [
        re.sub(r"[^\w-]", "", d.split(phrase, 1)[1].split()[0])
        for d in products.loc[products["split"] == "train", "description"]
        if phrase in d
    ]
    counts = Counter(after)
    assert 20 <= len(after) <= 120
    assert len(counts) >= 4
    assert counts["cover"] < len(after) / 2


def test_descriptions_repeat_runs_of_their_names(products):
    described = products[products["description"] != ""]
    word = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")
    repeats = 0
    for name, description in zip(described["name"], described["description"]):
        name_words = word.findall(name.lower())
        text = " " + " ".join(word.findall(description.lower())) + " "
        repeats += any(f" {a} {b} " in text for a, b in zip(name_words, name_words[1:]))
    assert repeats / len(described) >= 0.5
