"""Byte-pair encoding with an end-of-word marker, as the store's model reads text.

Normalisation, written down once (``normalise``):

1. Unicode NFKD, then accents dropped (``décor`` -> ``decor``); anything still outside ASCII is dropped.
2. Lowercase.
3. Words are runs of letters and digits; every other visible character (``.``, ``,``, ``"``, ``-``, ``&`` ...)
   is a word of its own. Whitespace only separates words.

Each word is split into characters, the last one carrying the end-of-word marker ``</w>``
(``sled`` -> ``s l e d</w>``), and the learned merges are applied in the order they were learned.
Frequent words end up as one token (``sled</w>``); rare ones stay in pieces (``har`` ``sh</w>``).
Decoding joins the pieces and turns each ``</w>`` back into a space, so
``decode(encode(text)) == " ".join(words(text))`` for every text.

The three markers are tokens of their own that never come out of ``encode``:
``<s>`` starts a product, ``<sep>`` separates the name from the description, ``<end>`` ends it.
"""

from __future__ import annotations

import collections
import re
import unicodedata
from pathlib import Path

BOS, SEP, END = "<s>", "<sep>", "<end>"
MARKERS = (BOS, SEP, END)
END_OF_WORD = "</w>"

_WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def normalise(text: str) -> str:
    """Fold accents, drop what is not ASCII, lowercase."""
    folded = unicodedata.normalize("NFKD", text)
    return folded.encode("ascii", "ignore").decode("ascii").lower()


def words(text: str) -> list[str]:
    """The normalised words of a text: runs of letters and digits, and single punctuation characters."""
    return _WORD.findall(normalise(text))


def _symbols(word: str) -> tuple[str, ...]:
    return tuple(word[:-1]) + (word[-1] + END_OF_WORD,)


def _merge(symbols: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def learn(texts, merges: int) -> "Tokenizer":
    """Learn ``merges`` merges from an iterable of texts (the training split only).

    At each step the most frequent adjacent pair of symbols is merged; ties go to the pair
    that sorts first, so the result does not depend on dictionary order.
    """
    counts = collections.Counter(w for text in texts for w in words(text))
    split = {w: _symbols(w) for w in counts}
    pairs: collections.Counter = collections.Counter()  # pair -> how often it occurs
    where = collections.defaultdict(set)  # pair -> the words it occurs in
    for w, symbols in split.items():
        for pair in zip(symbols, symbols[1:]):
            pairs[pair] += counts[w]
            where[pair].add(w)
    learned: list[tuple[str, str]] = []
    for _ in range(merges):
        pairs = +pairs  # drop pairs whose count fell to zero
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))  # most frequent; ties to the first in sort order
        learned.append(best)
        for w in list(where[best]):
            old = split[w]
            new = _merge(old, best)
            for pair in zip(old, old[1:]):
                pairs[pair] -= counts[w]
                where[pair].discard(w)
            for pair in zip(new, new[1:]):
                pairs[pair] += counts[w]
                where[pair].add(w)
            split[w] = new
    characters = {c for w in counts for c in w}
    alphabet = sorted(characters | {c + END_OF_WORD for c in characters})  # every character, inside or ending a word
    return Tokenizer(learned, alphabet)


class Tokenizer:
    """A learned BPE: its merges in order and its vocabulary (markers first, then symbols, then merges)."""

    def __init__(self, merges: list[tuple[str, str]], alphabet: list[str], vocabulary: list[str] | None = None):
        self.merges = [tuple(m) for m in merges]
        self.rank = {m: i for i, m in enumerate(self.merges)}
        if vocabulary is None:
            vocabulary = list(MARKERS) + list(alphabet)
            seen = set(vocabulary)
            for a, b in self.merges:
                if a + b not in seen:
                    vocabulary.append(a + b)
                    seen.add(a + b)
        self.vocabulary = vocabulary
        self.index = {t: i for i, t in enumerate(vocabulary)}
        self._cache: dict[str, tuple[str, ...]] = {}

    def pieces(self, word: str) -> tuple[str, ...]:
        """The tokens of one normalised word, merges applied lowest rank first."""
        if word in self._cache:
            return self._cache[word]
        symbols = _symbols(word)
        while len(symbols) > 1:
            ranked = [(self.rank.get(p, len(self.rank)), p) for p in zip(symbols, symbols[1:])]
            rank, pair = min(ranked)
            if rank == len(self.rank):
                break
            symbols = _merge(symbols, pair)
        self._cache[word] = symbols
        return symbols

    def tokens(self, text: str) -> list[str]:
        """Text -> token strings; a character never seen in training is dropped (it has no token)."""
        return [p for w in words(text) for p in self.pieces(w) if p in self.index] if text else []

    def encode(self, text: str) -> list[int]:
        return [self.index[t] for t in self.tokens(text)]

    def decode(self, ids) -> str:
        """Ids -> text: pieces joined, each ``</w>`` a space; markers kept as words."""
        out = []
        for i in ids:
            token = self.vocabulary[int(i)]
            out.append(f"{token} " if token in MARKERS else token.replace(END_OF_WORD, " "))
        return "".join(out).strip()

    def save(self, folder: Path) -> None:
        import json

        folder = Path(folder)
        (folder / "vocabulary.json").write_text(json.dumps(self.vocabulary, indent=0) + "\n")
        (folder / "merges.txt").write_text("".join(f"{a} {b}\n" for a, b in self.merges))

    @classmethod
    def load(cls, folder: Path) -> "Tokenizer":
        import json

        folder = Path(folder)
        vocabulary = json.loads((folder / "vocabulary.json").read_text())
        merges = [tuple(line.split(" ")) for line in (folder / "merges.txt").read_text().splitlines() if line]
        return cls(merges, [], vocabulary)
