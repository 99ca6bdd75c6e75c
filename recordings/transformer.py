"""Train the store's model once, with PyTorch, and record it in data/model/ for lib to recompute in NumPy.

    pip install -e '.[train]'            # torch==2.13.0, the CPU build
    python recordings/transformer.py     # about half an hour on 2 cores

What it writes (``data/model/``): weights.npz (float32, the ``x @ W`` convention lib reads), the tokenizer's
vocabulary.json and merges.txt, manifest.json (settings, seed, catalogue checksum, tokens seen, losses),
reference_logits.npz (PyTorch float64 logits of a few validation texts, which lib must match within 1e-4)
and head_statistics.json (the head statistics of source/attention/reference.py, the grader's one definition of
each, over the first 300 validation products).

The architecture is lib.transformer's, written again here in PyTorch: pre-norm, rotary positions inside
every head, causal scaled attention, a 4x MLP with tanh GELU, the embedding tied to the output.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from tqdm import tqdm  # noqa: E402

from lib import tokenizer  # noqa: E402

SETTINGS = {
    "layers": 4,
    "heads": 4,
    "dimensions": 128,
    "longest": 160,
    "mlp": 512,
    "rotary_base": 10000.0,
    "norm_eps": 1e-5,
    "merges": 1500,
}


def rotary(x, base):
    """x: (batch, heads, T, size) -> the same, each half-pair rotated by a position-dependent angle."""
    size, positions = x.shape[-1], x.shape[-2]
    frequencies = base ** (-torch.arange(0, size, 2, dtype=torch.float64) / size)
    angles = torch.arange(positions, dtype=torch.float64)[:, None] * frequencies[None, :]  # (T, size/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    first, second = x[..., : size // 2], x[..., size // 2 :]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


class Model(torch.nn.Module):
    """Parameters named as lib.transformer reads them, matrices stored (in, out)."""

    def __init__(self, vocabulary: int, settings: dict, seed: int):
        super().__init__()
        self.settings = settings
        generator = torch.Generator().manual_seed(seed)
        D, M, L = settings["dimensions"], settings["mlp"], settings["layers"]

        def normal(*shape, std=0.02):
            return torch.nn.Parameter(torch.randn(*shape, generator=generator) * std)

        def ones(n):
            return torch.nn.Parameter(torch.ones(n))

        def zeros(n):
            return torch.nn.Parameter(torch.zeros(n))

        named = {"embedding": normal(vocabulary, D)}
        residual_std = 0.02 / math.sqrt(2 * L)
        for layer in range(L):
            p = f"layers.{layer}."
            named.update(
                {
                    p + "norm1.weight": ones(D),
                    p + "norm1.bias": zeros(D),
                    p + "query": normal(D, D),
                    p + "key": normal(D, D),
                    p + "value": normal(D, D),
                    p + "output": normal(D, D, std=residual_std),
                    p + "norm2.weight": ones(D),
                    p + "norm2.bias": zeros(D),
                    p + "mlp.in": normal(D, M),
                    p + "mlp.in_bias": zeros(M),
                    p + "mlp.out": normal(M, D, std=residual_std),
                    p + "mlp.out_bias": zeros(D),
                }
            )
        named.update({"norm.weight": ones(D), "norm.bias": zeros(D)})
        # torch refuses "." in parameter names; lib's names are kept by swapping "." for "__" here only
        self.stored = torch.nn.ParameterDict({n.replace(".", "__"): v for n, v in named.items()})

    @property
    def params(self) -> dict:
        """lib's name -> parameter."""
        return {n.replace("__", "."): v for n, v in self.stored.items()}

    def forward(self, ids):  # ids: (B, T)
        s, P = self.settings, self.params
        B, T = ids.shape
        H = s["heads"]
        x = P["embedding"][ids]  # (B, T, D)
        for layer in range(s["layers"]):
            p = f"layers.{layer}."
            h = F.layer_norm(x, (x.shape[-1],), P[p + "norm1.weight"], P[p + "norm1.bias"], s["norm_eps"])

            def heads(m):  # (B, T, D) -> (B, H, T, d)
                return m.view(B, T, H, -1).transpose(1, 2)

            q = rotary(heads(h @ P[p + "query"]), s["rotary_base"])
            k = rotary(heads(h @ P[p + "key"]), s["rotary_base"])
            v = heads(h @ P[p + "value"])
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, d)
            x = x + mixed.transpose(1, 2).reshape(B, T, -1) @ P[p + "output"]
            h = F.layer_norm(x, (x.shape[-1],), P[p + "norm2.weight"], P[p + "norm2.bias"], s["norm_eps"])
            x = (
                x
                + F.gelu(h @ P[p + "mlp.in"] + P[p + "mlp.in_bias"], approximate="tanh") @ P[p + "mlp.out"]
                + P[p + "mlp.out_bias"]
            )
        x = F.layer_norm(x, (x.shape[-1],), P["norm.weight"], P["norm.bias"], s["norm_eps"])
        return x @ P["embedding"].T  # (B, T, V)


def encode_products(products, bpe, longest):
    index = bpe.index
    texts = []
    for name, description in zip(products["name"], products["description"]):
        pieces = [tokenizer.BOS, *bpe.tokens(name), tokenizer.SEP, *bpe.tokens(description), tokenizer.END]
        texts.append([index[p] for p in pieces[:longest]])
    return texts


def batches(texts, size, rng):
    """Batches of similar length (sorted in chunks of 50 batches), right-padded with -1, in a shuffled order."""
    order = rng.permutation(len(texts))
    chunk = size * 50
    out = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: len(texts[i]))
        out += [part[i : i + size] for i in range(0, len(part), size)]
    rng.shuffle(out)
    for members in out:
        longest = max(len(texts[i]) for i in members)
        padded = np.full((len(members), longest), -1, dtype=np.int64)
        for row, i in enumerate(members):
            padded[row, : len(texts[i])] = texts[i]
        yield torch.from_numpy(padded)


def loss_of(model, padded, autocast):
    inputs, targets = padded[:, :-1].clamp(min=0), padded[:, 1:]
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        logits = model(inputs)
    return F.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1, reduction="sum"
    ), int((targets >= 0).sum())


@torch.no_grad()
def evaluate(model, texts, autocast, size=64):
    total, count = 0.0, 0
    for padded in batches(texts, size, np.random.default_rng(0)):
        loss, n = loss_of(model, padded, autocast)
        total, count = total + float(loss), count + n
    return total / max(count, 1)


def train(
    products,
    out: Path,
    settings: dict,
    seed: int,
    epochs: float,
    batch: int,
    lr: float,
    autocast: bool = True,
    evaluate_every: int = 400,
    statistics_texts: int = 300,
    log=print,
):
    """Learn the tokenizer, train, and write the recorded model to ``out``. Returns the manifest."""
    torch.manual_seed(seed)
    out.mkdir(parents=True, exist_ok=True)
    train_set = products[products["split"] == "train"]
    validation_set = products[products["split"] == "validation"]
    started = time.time()
    bpe = tokenizer.learn(list(train_set["name"]) + list(train_set["description"]), settings["merges"])
    log(f"tokenizer: {len(bpe.vocabulary):,} tokens from {len(bpe.merges):,} merges ({time.time() - started:.0f} s)")
    train_texts = encode_products(train_set, bpe, settings["longest"])
    validation_texts = encode_products(validation_set, bpe, settings["longest"])
    model = Model(len(bpe.vocabulary), settings, seed)
    matrices = [p for n, p in model.params.items() if p.ndim == 2]
    vectors = [p for n, p in model.params.items() if p.ndim == 1]
    optimizer = torch.optim.AdamW(
        [{"params": matrices, "weight_decay": 0.1}, {"params": vectors, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95)
    )
    steps = int(math.ceil(len(train_texts) / batch) * epochs)
    warmup = min(200, steps // 10 + 1)

    def rate(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    rng = np.random.default_rng(seed)
    tokens_seen, step, history = 0, 0, []
    bar = tqdm(total=steps, desc="training", unit="step", file=sys.stderr, mininterval=5)
    smoothed = None
    while step < steps:
        for padded in batches(train_texts, batch, rng):
            if step >= steps:
                break
            model.train()
            loss, count = loss_of(model, padded, autocast)
            loss = loss / count
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            tokens_seen += count
            step += 1
            value = loss.item()
            smoothed = value if smoothed is None else 0.98 * smoothed + 0.02 * value
            bar.update(1)
            bar.set_postfix(loss=f"{smoothed:.3f}", tokens=f"{tokens_seen:,}")
            if step % evaluate_every == 0 or step == steps:
                model.eval()
                held_out = evaluate(model, validation_texts[:500], autocast)
                history.append(
                    {"step": step, "tokens": tokens_seen, "train": round(smoothed, 4), "validation": round(held_out, 4)}
                )
                log(
                    f"step {step:,}/{steps:,}  tokens {tokens_seen:,}  train {smoothed:.3f}  validation {held_out:.3f} "
                    f" ({tokens_seen / (time.time() - started):,.0f} tokens/s)"
                )
    bar.close()
    model.eval()
    final_validation = evaluate(model, validation_texts, autocast=False)
    final_train = evaluate(model, train_texts[:5000], autocast=False)
    log(f"final loss (float32): train {final_train:.4f} (first 5,000 texts), validation {final_validation:.4f}")

    weights = {n: p.detach().float().numpy() for n, p in model.params.items()}
    np.savez(out / "weights.npz", **weights)
    bpe.save(out)
    manifest = {
        "settings": (
            {k: settings[k] for k in ("layers", "heads", "dimensions", "longest", "mlp", "rotary_base", "norm_eps")}
            | {"vocabulary": len(bpe.vocabulary), "merges": len(bpe.merges)}
        ),
        "seed": seed,
        "training": {
            "epochs": epochs,
            "batch": batch,
            "learning_rate": lr,
            "steps": steps,
            "autocast": "bfloat16" if autocast else "none",
            "torch": torch.__version__,
            "seconds": round(time.time() - started),
        },
        "tokens_seen": tokens_seen,
        "losses": {"train": round(final_train, 4), "validation": round(final_validation, 4), "history": history},
        "catalogue": catalogue_record(products),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    record_reference_logits(model, validation_texts[:5], out)
    return manifest


def catalogue_record(products):
    text = "\n".join(
        f"{i}\t{n}\t{d}" for i, n, d in zip(products["product_id"], products["name"], products["description"])
    )
    return {
        "products": int(len(products)),
        "train": int((products["split"] == "train").sum()),
        "validation": int((products["split"] == "validation").sum()),
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


@torch.no_grad()
def record_reference_logits(model, texts, out: Path):
    """PyTorch logits in float64 for a few validation texts: lib's NumPy forward must equal them within 1e-4."""
    double = Model(model.params["embedding"].shape[0], model.settings, 0).double()
    for name, p in model.params.items():
        double.params[name].copy_(p.double())
    arrays = {}
    for i, ids in enumerate(texts):
        arrays[f"ids_{i}"] = np.asarray(ids, dtype=np.int64)
        arrays[f"logits_{i}"] = double(torch.tensor([ids]))[0].numpy()
    np.savez_compressed(out / "reference_logits.npz", **arrays)


def record_head_statistics(out: Path, n: int = 300):
    """The reference's head statistics over the first n validation products, with lib's NumPy forward of the model
    just written."""
    from autograder import assignments
    from lib import transformer
    from lib.products import product_texts

    heads = assignments.reference(ROOT / "source" / "attention")  # the statistics' one definition, never released

    transformer._load.cache_clear()
    _, vocabulary, _ = transformer.load(out)
    texts = product_texts("validation", n, folder=out)
    stats = heads.head_statistics(
        texts, lambda ids, keep=True: transformer.forward(ids, keep=keep, folder=out), vocabulary.index(transformer.END)
    )
    record = {k: np.round(v, 6).tolist() if isinstance(v, np.ndarray) else v for k, v in stats.items()}
    record["definition"] = (
        "source/attention/reference.py head_statistics over lib.products.product_texts('validation', %d)" % n
    )
    (out / "head_statistics.json").write_text(json.dumps(record, indent=2) + "\n")
    return stats


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "model")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--epochs", type=float, default=6.0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument(
        "--bf16",
        action="store_true",
        help="bf16 autocast; measured 0.65x the speed of float32 on this project's 2-core CPU, so off by default",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads; on a 2-core machine shared with other work, 1 thread measured 3x faster than 2",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    from lib import store

    products = store.load_products("all")
    train(products, args.out, SETTINGS, args.seed, args.epochs, args.batch, args.lr, autocast=args.bf16)
    stats = record_head_statistics(args.out)
    print(
        "previous-token weight by layer and head:\n",
        np.round(stats["previous"], 3),
        "even",
        round(stats["previous_even"], 3),
    )


if __name__ == "__main__":
    main()
