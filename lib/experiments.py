"""The chapter's experiments on the store's model, written once for the tour, the tests and the notebooks."""

from __future__ import annotations

import json

import numpy as np

from lib import transformer
from lib.store import load_products

CASE = "double chaise patio furniture cover"
NAMES = {  # label -> the name the description is paired with
    "name as sold": CASE,
    "name without cover": "double chaise patio furniture",
    "name ending in set": "double chaise patio furniture set",
}
PHRASE = "this outdoor patio furniture"


def case_product():
    """The validation product the chapter follows, as a row of the catalogue."""
    products = load_products("validation")
    found = products[products["name"] == CASE]
    if found.empty:
        raise LookupError(f"the validation split has no product named {CASE!r}: regenerate data/ with recordings/")
    return found.iloc[0]


def copy_position(ids, index) -> int:
    """The description's second `furniture`: where the next token is the one the name decides."""
    sep = ids.index(index[transformer.SEP])
    furniture = [i for i in range(sep + 1, len(ids)) if ids[i] == index["furniture</w>"]]
    if len(furniture) < 2:
        raise LookupError("the description mentions `furniture` fewer than twice")
    return furniture[1]


def copy_experiment() -> dict:
    """P(cover) and P(set) after the description's second `furniture`, for each name in NAMES."""
    _, vocabulary, manifest = transformer.load()
    index = {t: i for i, t in enumerate(vocabulary)}
    description = case_product()["description"]
    results = {}
    for label, name in NAMES.items():
        ids = transformer.product_ids(name, description, index, manifest["settings"]["longest"])
        logits = transformer.forward(ids)[copy_position(ids, index)]  # (V,) the next token's scores
        exps = np.exp(logits - logits.max())
        results[label] = {word: float(exps[index[f"{word}</w>"]] / exps.sum()) for word in ("cover", "set")}
    return results


def phrase_followers(split: str = "train", phrase: str = PHRASE) -> list[str]:
    """The word right after each occurrence-per-description of ``phrase`` (the first one in each description)."""
    followers = []
    for description in load_products(split)["description"]:
        head, found, tail = description.lower().partition(phrase + " ")
        if found and tail.split():
            followers.append(tail.split()[0].strip(".,;:!"))
    return followers


def recorded_head_statistics() -> dict:
    """The head statistics recorded with the model (the grader's definitions over the first 300 validation
    products, recordings/transformer.py), as they were measured: numbers, not a way to compute them."""
    record = json.loads((transformer.MODEL_DIR / "head_statistics.json").read_text())
    return {k: np.asarray(v) if isinstance(v, list) else v for k, v in record.items()}
