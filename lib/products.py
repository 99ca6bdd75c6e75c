"""The store's products as the model reads them: ``<s> name <sep> description <end>``, as token ids."""

from __future__ import annotations

from lib import transformer
from lib.store import load_products


def product_texts(split: str, n: int | None = None, folder=transformer.MODEL_DIR) -> list[tuple[list[int], int]]:
    """The first ``n`` products of a split, in file order, as ``(ids, sep)``: token ids and the position of ``<sep>``.

    Each text is cut at the model's longest length (160 tokens); a product with no description is
    ``<s> name <sep> <end>``.
    """
    _, vocabulary, manifest = transformer.load(folder)
    index = {token: i for i, token in enumerate(vocabulary)}
    longest = manifest["settings"]["longest"]
    products = load_products(split)
    if n is not None:
        products = products.head(n)
    texts = []
    for name, description in zip(products["name"], products["description"]):
        ids = transformer.product_ids(name, description, index, longest, folder)
        texts.append((ids, ids.index(index[transformer.SEP])))
    return texts
