"""The chapter's experiments on the store's model, written once for the tour, the tests and the notebooks.

``next_token_probability`` first asks ``lib.transformer.recorded_probabilities``, when set, for probabilities this
same function computed earlier (see lib.transformer's docstring), and computes only when it answers None.
"""

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


# --- zeroing heads: which heads the model's copying needs ------------------------------------------------------

COPY_PRODUCTS = 100  # the first validation products searched for a copy case (the notebook's section 6)
BATCH = 6  # cases run together, sorted by length: section 6's table in 1.5 s of CPU, 2.5 s one case at a time


def copy_cases(texts, vocabulary) -> list[tuple[list[int], int]]:
    """Where each text's description repeats a step of its name: (ids up to and including the position, the next
    token's id), one per text at most.

    The position is the description's first whole word (a token ending in ``</w>``) that, with the token after it,
    repeats two neighbouring tokens of the name; the next token is then the one the name decides. Texts with no
    such position are left out. ``texts`` are ``(ids, sep)`` pairs (lib.products.product_texts)."""
    cases = []
    for ids, sep in texts:
        steps = {(ids[k], ids[k + 1]) for k in range(1, sep - 1)}  # neighbouring tokens of the name
        for i in range(sep + 1, len(ids) - 1):
            if vocabulary[ids[i]].endswith("</w>") and (ids[i], ids[i + 1]) in steps:
                cases.append((list(ids[: i + 1]), ids[i + 1]))
                break
    return cases


def next_token_probability(cases, ablate=None) -> np.ndarray:
    """(cases,): the model's probability of each case's next token at its last position, with the heads in
    ``ablate`` zeroed (lib.transformer.forward's ablate). The fast float32 path, every case in one batch, each
    padded at its end (positions never see later ones): within 1e-5 of one forward(ids) per case."""
    if not cases:
        return np.zeros(0)
    dropped = transformer._ablated(ablate, transformer.MODEL_DIR)
    if transformer.recorded_probabilities is not None:
        found = transformer.recorded_probabilities(cases, dropped, transformer.MODEL_DIR)
        if found is not None:
            return found
    lengths = np.array([len(ids) for ids, _ in cases])
    found = np.zeros(len(cases))
    order = np.argsort(lengths, kind="stable")  # batches of similar lengths: little padding
    for batch_rows in np.array_split(order, max(1, len(cases) // BATCH)):
        batch = np.zeros((len(batch_rows), lengths[batch_rows].max()), dtype=np.int64)
        for row, case in enumerate(batch_rows):
            batch[row, : lengths[case]] = transformer._checked_ids(cases[case][0], transformer.MODEL_DIR)
        logits = transformer._fast_forward(
            batch, False, str(transformer.MODEL_DIR), dropped, rows=lengths[batch_rows] - 1
        )
        logits = logits.astype(np.float64)  # (batch, V)
        exps = np.exp(logits - logits.max(-1, keepdims=True))
        following = np.array([cases[case][1] for case in batch_rows])
        found[batch_rows] = exps[np.arange(len(batch_rows)), following] / exps.sum(-1)
    return found


def head_ablations(cases, layers: int, heads: int) -> dict:
    """Mean P(next token) over ``cases``: "whole" with every head, "heads" (layers, heads) with that one head
    zeroed, "layers" (layers,) with all of a layer's heads zeroed."""
    return {
        "whole": float(next_token_probability(cases).mean()),
        "heads": np.array(
            [
                [next_token_probability(cases, {(layer, head)}).mean() for head in range(heads)]
                for layer in range(layers)
            ]
        ),
        "layers": np.array(
            [next_token_probability(cases, {(layer, head) for head in range(heads)}).mean() for layer in range(layers)]
        ),
    }


# --- the stand-in catalogue is templated: how much of validation training already holds ------------------------


def sentences(description: str) -> list[str]:
    """A description's sentences, lower case, each without its closing mark."""
    found = [part.strip(" .!?") for part in description.lower().replace("!", ".").replace("?", ".").split(". ")]
    return [part for part in found if part]


def validation_sentences_in_training() -> dict:
    """How many validation sentences appear word for word in some training description: "sentences", "seen",
    "share"; and "case": the training products (their row in the training split) holding the followed product's
    first sentence."""
    training = load_products("train")["description"].fillna("").tolist()
    known = {sentence for description in training for sentence in sentences(description)}
    validation = [s for d in load_products("validation")["description"].fillna("") for s in sentences(d)]
    seen = sum(sentence in known for sentence in validation)
    first = sentences(case_product()["description"])[0]
    holders = [row for row, description in enumerate(training) if first in sentences(description)]
    return {"sentences": len(validation), "seen": seen, "share": seen / len(validation), "case": holders}
