"""The input classes every draw of a check covers: a designed set of sizes and value kinds, then random ones.

A function can be right only for the sizes a check happens to draw: weights transposed when the number of positions
equals the key size, a rotation written for 8-number vectors, a statistic divided by the model's head size 32. So a
check declares the sizes of its calls (``Cover``: each size's range, which pairs of sizes are compared) and on every
seed its calls hold, whatever else is drawn:

- each size odd and even, 1 and 0 (one position, none), wherever its range and rules allow;
- each compared pair of sizes equal, the first smaller and the first larger (positions = key size, fewer, more;
  m < n and m > n);
- each value kind (``KINDS``: mixed signs, all positive, all negative, large enough that a softmax without its
  maximum subtracted overflows), where the check asks for them;
- no size equal to a constant of the store's model (``MODEL_SIZES``: 4 heads of 32 numbers, 128 in all, a window of
  160) or of the task (``avoid``): a size is never drawn equal to one, unless its range holds nothing else.

``Cover.draw(rng)`` gives the designed assignments ({size name: int, "kind": str}) that cover every class the
ranges and ``where`` allow (greedily, from random candidates: other values on every seed, the same classes), plus
``extra`` random ones; ``Cover.missing(assignments)`` names the classes a list of assignments leaves out, so a
test or ``python -m autograder.validate`` can read a check's calls back and prove it.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from autograder import REPOSITORY

KINDS = ("mixed", "positive", "negative", "large")  # the value kinds a check may ask its designed calls to hold
LARGE = 1000.0  # the "large" kind's scale: exp(1000) overflows float64, so a softmax must subtract its maximum
FEASIBLE_SAMPLE = 4000  # assignments tried (seed 0) to learn which classes the ranges and ``where`` allow
CANDIDATES = 120  # random assignments per seed the designed set is picked from


def model_sizes() -> tuple[int, ...]:
    """The store's model's sizes (data/model/manifest.json): heads, head size, width, window; () without it."""
    manifest = REPOSITORY / "data" / "model" / "manifest.json"
    if not manifest.is_file():
        return ()
    settings = json.loads(manifest.read_text(encoding="utf-8"))["settings"]
    heads, width = int(settings["heads"]), int(settings["dimensions"])
    return tuple(sorted({heads, width // heads, width, int(settings["longest"])}))


MODEL_SIZES = model_sizes()


@dataclass(frozen=True)
class Size:
    """A size drawn in low..high (inclusive); parity "even" or "odd" keeps only those (a rotation's even width)."""

    low: int
    high: int
    parity: str | None = None

    def choices(self, avoid) -> np.ndarray:
        """The sizes it may take: its range, its parity, none of ``avoid`` (unless nothing else is left)."""
        span = np.arange(self.low, self.high + 1)
        if self.parity is not None:
            span = span[span % 2 == (0 if self.parity == "even" else 1)]
        kept = np.setdiff1d(span, np.asarray(sorted(avoid), dtype=int))
        return kept if kept.size else span


@dataclass(frozen=True)
class Cover:
    """The sizes of a check's calls and the classes every seed's calls cover (the module's docstring).

    sizes: {name: Size}; pairs: the (first, second) sizes compared (equal, smaller, larger; default: none);
    kinds: the value kinds the designed calls hold (KINDS' names; default none); where: a rule an assignment must
    keep ({name: size} -> bool: D divisible by heads); avoid: the task's own constants, avoided as the model's are;
    derived: {name: size(assignment)}, sizes computed from the drawn ones (a vector's 2 * half), compared in pairs.
    """

    sizes: dict
    pairs: tuple = ()
    kinds: tuple = ()
    where: Callable | None = None
    avoid: tuple = ()
    derived: dict = field(default_factory=dict)
    _feasible: list = field(default_factory=list, compare=False, repr=False)
    _required: dict = field(default_factory=dict, compare=False, repr=False)
    _allowed: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def avoided(self) -> set:
        return set(MODEL_SIZES) | set(self.avoid)

    def classes(self) -> dict[str, Callable]:
        """{label: holds(assignment)} of every class this cover asks for, before feasibility."""
        found: dict[str, Callable] = {}
        for name in (*self.sizes, *self.derived):  # those no allowed assignment holds are dropped (required)
            found[f"{name} odd"] = lambda a, name=name: a[name] % 2 == 1
            found[f"{name} even"] = lambda a, name=name: a[name] % 2 == 0
            found[f"{name} = 0"] = lambda a, name=name: a[name] == 0
            found[f"{name} = 1"] = lambda a, name=name: a[name] == 1
        for first, second in self.pairs:
            found[f"{first} < {second}"] = lambda a, f=first, s=second: a[f] < a[s]
            found[f"{first} = {second}"] = lambda a, f=first, s=second: a[f] == a[s]
            found[f"{first} > {second}"] = lambda a, f=first, s=second: a[f] > a[s]
        for kind in self.kinds:
            found[f"{kind} values"] = lambda a, kind=kind: a.get("kind") == kind
        return found

    def allowed(self) -> dict:
        """{name: the sizes it may take} (Size.choices, the avoided constants left out), worked out once."""
        if not self._allowed:
            self._allowed.update({name: size.choices(self.avoided) for name, size in self.sizes.items()})
        return self._allowed

    def random(self, rng: np.random.Generator, tries: int = 200) -> dict | None:
        """One random assignment that keeps ``where`` (None after ``tries`` draws that do not)."""
        allowed = self.allowed()
        for _ in range(tries):
            drawn = {name: int(choices[rng.integers(len(choices))]) for name, choices in allowed.items()}
            drawn.update({name: int(size(drawn)) for name, size in self.derived.items()})
            if self.kinds:
                drawn["kind"] = self.kinds[rng.integers(len(self.kinds))]
            if self.where is None or self.where(drawn):
                return drawn
        return None

    def feasible(self) -> list[dict]:
        """Assignments (the same on every seed) that show which classes the ranges and ``where`` allow."""
        if not self._feasible:
            allowed = list(self.allowed().values())
            if np.prod([len(v) for v in allowed], dtype=float) * max(1, len(self.kinds)) <= FEASIBLE_SAMPLE:
                for combination in itertools.product(*allowed, *([self.kinds] if self.kinds else [])):
                    drawn = dict(zip(self.sizes, (int(v) for v in combination[: len(allowed)])))
                    drawn.update({name: int(size(drawn)) for name, size in self.derived.items()})
                    if self.kinds:
                        drawn["kind"] = combination[-1]
                    if self.where is None or self.where(drawn):
                        self._feasible.append(drawn)
            else:
                rng = np.random.default_rng(0)
                self._feasible.extend(filter(None, (self.random(rng, 20) for _ in range(FEASIBLE_SAMPLE))))
        return self._feasible

    def required(self) -> dict[str, Callable]:
        """The classes some allowed assignment holds: the ones every seed's draw must cover (worked out once)."""
        if not self._required:
            pool = self.feasible()
            self._required.update(
                {label: holds for label, holds in self.classes().items() if any(holds(a) for a in pool)}
            )
        return dict(self._required)

    def missing(self, assignments: list[dict]) -> list[str]:
        """The required classes that none of ``assignments`` holds, and each size drawn equal to an avoided
        constant where its range holds others."""
        left = [label for label, holds in self.required().items() if not any(holds(a) for a in assignments)]
        for name, size in self.sizes.items():
            if len(size.choices(self.avoided)) < len(size.choices(())):
                left += [f"{name} = {a[name]}, a constant" for a in assignments if a[name] in self.avoided]
        return left

    def draw(self, rng: np.random.Generator, extra: int = 0) -> list[dict]:
        """The designed assignments covering every required class (new values each seed), then ``extra`` random."""
        needed = self.required()
        candidates = [found for found in (self.random(rng) for _ in range(CANDIDATES)) if found]
        chosen: list[dict] = []
        while needed:
            best = max(candidates or self.feasible(), key=lambda a: sum(holds(a) for holds in needed.values()))
            if not any(holds(best) for holds in needed.values()):  # none of this seed's candidates: the fixed pool
                holds = next(iter(needed.values()))
                best = next(a for a in self.feasible() if holds(a))
            chosen.append(best)
            needed = {label: holds for label, holds in needed.items() if not holds(best)}
        chosen += [found for found in (self.random(rng) for _ in range(extra)) if found]
        return chosen


def values(rng: np.random.Generator, *shape: int, kind: str = "mixed", scale: float = 1.0) -> np.ndarray:
    """Normal numbers of ``shape`` of one value kind: mixed signs, all positive, all negative, or large (LARGE x)."""
    drawn = rng.normal(0.0, scale, tuple(int(n) for n in shape))
    if kind == "positive":
        return np.abs(drawn) + 0.1 * scale
    if kind == "negative":
        return -np.abs(drawn) - 0.1 * scale
    if kind == "large":
        return drawn * LARGE
    return drawn
