"""A tour of the store, its model and the head statistics: ``python -m lib.tour``."""

from __future__ import annotations

import argparse

import numpy as np

from lib import experiments, transformer
from lib.store import load_products


def reference_gap() -> float:
    """Largest |NumPy logit - recorded PyTorch logit| over the recorded validation texts."""
    with np.load(transformer.MODEL_DIR / "reference_logits.npz") as recorded:
        count = len([k for k in recorded.files if k.startswith("ids_")])
        return max(
            float(np.abs(transformer.forward(recorded[f"ids_{i}"]) - recorded[f"logits_{i}"]).max())
            for i in range(count)
        )


def table(rows: np.ndarray, fmt="{:.2f}") -> str:
    header = "          " + "  ".join(f"head {h + 1}" for h in range(rows.shape[1]))
    lines = [
        f"  layer {layer + 1}  " + "  ".join(fmt.format(v).rjust(6) for v in row) for layer, row in enumerate(rows)
    ]
    return "\n".join([header, *lines])


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(
        prog="python -m lib.tour",
        description="A tour of the store's catalogue, its recorded model and the model's head statistics, printed.",
    ).parse_args(argv)
    products = load_products("all")
    described = products[products["description"] != ""]
    print("The store's catalogue (stand-in, WANDS format)")
    classes = {c for joined in products["product_class"] for c in joined.split("|") if c}  # WANDS joins several with |
    print(f"  products {len(products):,}  classes {len(classes):,}  with a description {len(described):,}")
    for split in ("train", "validation"):
        part = products[products["split"] == split]
        print(f"  {split:<10} {len(part):,} products, {(part['description'] != '').sum():,} with a description")

    _, vocabulary, manifest = transformer.load()
    s = manifest["settings"]
    print("\nThe store's model")
    print(
        f"  layers {s['layers']}  heads {s['heads']} x {s['dimensions'] // s['heads']} numbers  "
        f"dimensions {s['dimensions']}  longest {s['longest']}  vocabulary {len(vocabulary):,}"
    )
    print(
        f"  trained on {manifest['tokens_seen']:,} tokens, seed {manifest['seed']}; "
        f"loss train {manifest['losses']['train']:.3f}, validation {manifest['losses']['validation']:.3f}"
    )
    print(f"  NumPy forward vs recorded PyTorch logits: largest difference {reference_gap():.1e} (must be < 1e-4)")

    print(f"\nWhat the model copies: `{experiments.CASE}`, at the description's second `furniture`")
    for label, p in experiments.copy_experiment().items():
        print(f"  {label:<20} P(cover) {p['cover']:.2f}   P(set) {p['set']:.2f}")
    followers = experiments.phrase_followers("train")
    print(
        f"  training descriptions with `{experiments.PHRASE}`: {len(followers)}, "
        f"followed by cover: {followers.count('cover')}, distinct next words: {len(set(followers))}"
    )

    stats = experiments.recorded_head_statistics()
    print(f"\nHead statistics over the first {stats['texts']} validation products")
    print("  average weight on the previous token:")
    print(table(stats["previous"]))
    print(
        f"  even spread: {stats['previous_even']:.3f}; strongest head {stats['previous'].max():.2f} ="
        f" {stats['previous'].max() / stats['previous_even']:.1f}x the even spread"
    )
    print(f"  description tokens measured: {stats['tokens']:,} in {stats['described']} described products")
    print(f"  weight 4 or more tokens back: {stats['far'].mean():.2f} (even spread {stats['far_even']:.2f})")
    print(f"  weight on <s> and <sep>:      {stats['markers'].mean():.2f} (even spread {stats['markers_even']:.2f})")


if __name__ == "__main__":
    main()
