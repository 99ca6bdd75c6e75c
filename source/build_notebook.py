"""Build source/attention/attention.ipynb, the nbgrader source notebook of the attention assignment.

The notebook is written here, cell by cell, so it can be read, reviewed and regenerated:

    .venv/bin/python source/build_notebook.py

Cell kinds (nbgrader metadata, schema 3):
  md / code        read-only provided cells (locked)
  answer           autograded answer: solution=true, grade=false; the signature and docstring stay visible,
                   the body between ### BEGIN SOLUTION / ### END SOLUTION becomes `raise NotImplementedError()`
  check            locked test cell: grade=true, grade_id = the check id of docs/contracts.md, its points; visible
                   property checks, then the hidden block that the autograder fills in outside the student's kernel
  written          manually graded answer (markdown, solution=true, grade=true, 1 point); the model answer here
                   becomes "YOUR ANSWER HERE" in the release
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
TARGET = HERE / "attention" / "attention.ipynb"

# grade_id -> points of every graded cell, in notebook order (autograded checks from docs/contracts.md,
# then the four written answers). The builder refuses to write a notebook that disagrees with this table.
CHECK_POINTS = {
    "check_softmax": 2,
    "check_attention": 4,
    "check_causal_mask": 1,
    "check_masked_attention": 4,
    "check_average_largest_weight": 2,
    "check_split_heads": 1,
    "check_join_heads": 1,
    "check_multi_head_attention": 3,
    "check_previous_token_weight": 2,
    "check_even_previous_weight": 1,
    "check_description_positions": 1,
    "check_far_back_weight": 2,
    "check_marker_weight": 1,
    "check_even_far_back_weight": 1,
    "check_even_marker_weight": 1,
    "check_safe_softmax": 2,
}
WRITTEN_POINTS = {
    "answer_scaling_prediction": 1,
    "answer_read_a_head": 1,
    "answer_copy_prediction": 1,
    "answer_mask_after_softmax": 1,
}

cells: list = []
_ids: set[str] = set()


def _clean(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def _meta(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: int | None = None) -> dict:
    if grade_id in _ids:
        raise ValueError(f"duplicate grade_id {grade_id}")
    _ids.add(grade_id)
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def md(grade_id: str, text: str) -> None:
    """A read-only markdown cell."""
    cells.append(nbformat.v4.new_markdown_cell(_clean(text), metadata=_meta(grade_id, grade=False, solution=False, locked=True)))


def code(grade_id: str, text: str) -> None:
    """A read-only provided code cell."""
    cells.append(nbformat.v4.new_code_cell(_clean(text), metadata=_meta(grade_id, grade=False, solution=False, locked=True)))


def answer(grade_id: str, text: str) -> None:
    """An autograded answer cell: the student's function."""
    text = _clean(text)
    if "### BEGIN SOLUTION" not in text or "### END SOLUTION" not in text:
        raise ValueError(f"{grade_id}: an answer cell needs a solution block")
    cells.append(nbformat.v4.new_code_cell(text, metadata=_meta(grade_id, grade=False, solution=True, locked=False)))


def check(grade_id: str, text: str) -> None:
    """A locked, graded test cell: visible property checks, then the hidden block."""
    hidden = (
        "\n\n### BEGIN HIDDEN TESTS\n"
        f"# graded outside this kernel: autograder.checks.{grade_id}\n"
        "### END HIDDEN TESTS"
    )
    cells.append(
        nbformat.v4.new_code_cell(
            _clean(text) + hidden,
            metadata=_meta(grade_id, grade=True, solution=False, locked=True, points=CHECK_POINTS[grade_id]),
        )
    )


def written(grade_id: str, text: str) -> None:
    """A manually graded markdown answer; the text here is the model answer for graders."""
    cells.append(
        nbformat.v4.new_markdown_cell(
            _clean(text),
            metadata=_meta(grade_id, grade=True, solution=True, locked=False, points=WRITTEN_POINTS[grade_id]),
        )
    )


AUTO_TOTAL = sum(CHECK_POINTS.values())
WRITTEN_TOTAL = sum(WRITTEN_POINTS.values())

# ---------------------------------------------------------------------------------------------------------
# Introduction and setup
# ---------------------------------------------------------------------------------------------------------

md("intro", f"""
# Attention, by hand and inside the store's model

In this assignment you build attention from its parts and then use your own code to read a trained model.
The running example is the store: an online furniture shop whose product names and descriptions
(`double chaise patio furniture cover`, `sled coffee table`) are the text the store's model was trained on.

There are nine sections, one idea each:

1. **A weighted average**: softmax and attention on four tokens, `<s> sled coffee table`.
2. **The causal mask**: hide later positions, and test that nothing leaks.
3. **Scaling by √d**: predict, then measure, why scores are divided by the square root of the size.
4. **Several heads**: split the numbers into heads, attend in each, join them again.
5. **Reading the store's model**: what each head looks at in one product, and your attention inside the real model.
6. **Testing what the model copies**: change the product's name and watch the prediction.
7. **Previous-token heads**: a measured habit of every head, over 300 products, against an even spread.
8. **Reaching past the window**: how much attention goes 4 or more tokens back, and how much to the markers.
9. **What goes wrong in production**: overflow, fully masked rows, and a mask applied in the wrong place.

Each section states its task first. For every function you write, the task, the signature and the shape of
what it returns come before its cell.

### How this notebook is graded

| kind of cell | what you do | how it is graded |
| --- | --- | --- |
| code cells with `raise NotImplementedError()` | replace that line with your code; keep the function's name and signature | automatically, {AUTO_TOTAL} points in all |
| the cell right after each of them (locked) | run it: its visible checks test properties of your function and say where to look when one fails | the hidden part of that cell is graded outside this notebook, on fresh inputs; partial credit for each property |
| four markdown cells that say `YOUR ANSWER HERE` | write a few sentences | by hand, 1 point each, {WRITTEN_TOTAL} points in all |
| every other cell | run it | not graded |

Total: **{AUTO_TOTAL + WRITTEN_TOTAL} points**. The automatically graded functions and their points:

| section | function | check | points |
| --- | --- | --- | --- |
| 1 | `softmax` | `check_softmax` | 2 |
| 1 | `attention` | `check_attention` | 4 |
| 2 | `causal_mask` | `check_causal_mask` | 1 |
| 2 | `attention` with a mask | `check_masked_attention` | 4 |
| 3 | `average_largest_weight` | `check_average_largest_weight` | 2 |
| 4 | `split_heads` | `check_split_heads` | 1 |
| 4 | `join_heads` | `check_join_heads` | 1 |
| 4 | `multi_head_attention` | `check_multi_head_attention` | 3 |
| 7 | `previous_token_weight` | `check_previous_token_weight` | 2 |
| 7 | `even_previous_weight` | `check_even_previous_weight` | 1 |
| 8 | `description_positions` | `check_description_positions` | 1 |
| 8 | `far_back_weight` | `check_far_back_weight` | 2 |
| 8 | `marker_weight` | `check_marker_weight` | 1 |
| 8 | `even_far_back_weight` | `check_even_far_back_weight` | 1 |
| 8 | `even_marker_weight` | `check_even_marker_weight` | 1 |
| 9 | `safe_softmax` | `check_safe_softmax` | 2 |

The written answers, graded by hand (1 point each): your prediction in section 3, your reading of a head
in section 5, your prediction in section 6, and your explanation of a mask applied after softmax in section 9.

Each function is graded on its own: when a check runs one of your functions, the other functions it calls
(for example `softmax` inside `attention`) are replaced by correct ones, so one mistake costs points in one
place only. The one exception is section 5's use of your `attention` inside the real model.

Rules: run the cells in order, from the top. Use NumPy only. Don't rename the functions, and don't copy,
delete or move cells. Passing the visible checks is a good sign, not a guarantee. The whole notebook runs
in well under a minute.
""")

code("setup", '''
# Setup: run this first. It finds the course folder (the one that holds lib/), so that `lib` imports
# from any copy of this notebook, and it defines the two drawing helpers used below.
import os
import sys
from pathlib import Path

# The store's model multiplies small matrices; one BLAS thread does that faster than several threads
# competing for the same cores (on a small machine, several times faster). Set before NumPy loads.
for _variable in ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"]:
    os.environ.setdefault(_variable, "1")

import matplotlib.pyplot as plt
import numpy as np

_here = Path.cwd().resolve()
_roots = [folder for folder in [_here, *_here.parents] if (folder / "lib" / "attention.py").exists()]
if not _roots:
    raise FileNotFoundError(
        f"no course folder (one holding lib/attention.py) at or above {_here}: "
        "open this notebook from inside the course repository"
    )
ROOT = _roots[0]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

np.set_printoptions(precision=2, suppress=True)


def show_weights(weights, rows, columns=None, title="", ax=None, numbers=True, highlight=None):
    """Draw attention weights as a heatmap: one row per position that looks, one column per position looked at."""
    weights = np.asarray(weights, dtype=float)
    columns = rows if columns is None else columns
    if ax is None:
        _, ax = plt.subplots(figsize=(0.55 * len(columns) + 2.8, 0.5 * len(rows) + 1.6))
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(len(columns)), columns, rotation=90)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel("looked at (key)")
    ax.set_ylabel("looking (query)")
    ax.set_title(title)
    if numbers:
        for (i, j), w in np.ndenumerate(weights):
            ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=8, color="black" if w > 0.6 else "white")
    if highlight is not None:  # frame one row, e.g. the position being predicted from
        ax.add_patch(plt.Rectangle((-0.5, highlight - 0.5), len(columns), 1, fill=False, edgecolor="red", lw=2))
    plt.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="weight")
    return ax


def show_table(values, rows, columns, title="", label="", vmax=None):
    """Draw a small table of numbers (for example layers x heads) as an annotated heatmap."""
    values = np.asarray(values, dtype=float)
    _, ax = plt.subplots(figsize=(0.9 * len(columns) + 2.8, 0.6 * len(rows) + 1.6))
    image = ax.imshow(values, cmap="magma", vmin=0.0, vmax=vmax if vmax is not None else values.max())
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_title(title)
    top = image.get_clim()[1]
    for (i, j), v in np.ndenumerate(values):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=10, color="black" if v > 0.6 * top else "white")
    plt.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=label)
    return ax


print("course folder:", ROOT)
''')

# ---------------------------------------------------------------------------------------------------------
# 1. A weighted average
# ---------------------------------------------------------------------------------------------------------

md("s1_intro", """
## 1. Attention is a weighted average

**Your task:** write `softmax` and `attention`, then run them on four tokens and read the weights.

At every position, attention computes a new vector as a weighted average of vectors from the positions it
may look at. Each token's vector `x` is turned into three vectors by three learned matrices:

* a **query**, `x @ w_query`: what this position is looking for;
* a **key**, `x @ w_key`: what this position offers to the positions that look at it;
* a **value**, `x @ w_value`: what this position hands over when it is looked at.

Position *i* scores position *j* with the dot product of *i*'s query and *j*'s key, divided by √d, where d is
the number of numbers in a query (and in a key). Softmax turns each row of scores into weights that are
positive and sum to 1. The output at *i* is the weighted sum of the values. For all positions at once, with the
queries, keys and values as rows of Q, K and V:

$$\\text{Attention}(Q, K, V) = \\text{softmax}\\!\\left(\\frac{Q K^\\top}{\\sqrt{d}}\\right) V$$

The example: the start marker and `sled coffee table`, four tokens, each given a random vector of 8 numbers
(as an untrained embedding table would), and random 8 × 4 query, key and value matrices.
""")

code("s1_tokens", """
# Four tokens, one random 8-number vector each, and random 8 x 4 query, key and value matrices.
tokens = ["<s>", "sled</w>", "coffee</w>", "table</w>"]
rng = np.random.default_rng(20)
x = rng.normal(size=(4, 8))                      # (positions, 8): row i is token i's vector
w_query = rng.normal(scale=0.5, size=(8, 4))
w_key = rng.normal(scale=0.5, size=(8, 4))
w_value = rng.normal(scale=0.5, size=(8, 4))

queries, keys, values = x @ w_query, x @ w_key, x @ w_value   # each (4, 4): one row per token
print("queries, keys, values:", queries.shape, keys.shape, values.shape)
""")

md("s1_softmax_task", """
### Write `softmax(scores)`

**Task:** turn scores into weights along the **last axis**: for each row, `exp(score)` divided by the sum of
the row's exponentials.

* **Signature:** `softmax(scores)`, `scores` an array of any shape, for example `(positions, positions)` or
  `(heads, positions, positions)`.
* **Returns:** an array of the **same shape**, each row (last axis) positive and summing to 1.
* Subtract each row's largest score before `np.exp`. That leaves the weights unchanged (softmax ignores a
  constant added to a whole row) and keeps `np.exp` from overflowing on scores such as 1000.
* A score of `-np.inf` must get a weight of exactly 0 (section 2 relies on it). You may assume every row
  has at least one finite score; section 9 deals with rows that don't.
* Use `axis=-1, keepdims=True` so the same code works with a heads axis in front.
""")

answer("softmax", '''
def softmax(scores):
    """Weights from scores along the last axis: positive, each row summing to 1. Same shape as scores."""
    ### BEGIN SOLUTION
    scores = np.asarray(scores, dtype=float)
    top = scores.max(axis=-1, keepdims=True)           # each row's largest score
    exps = np.exp(scores - top)                        # the largest becomes exp(0) = 1: no overflow
    return exps / exps.sum(axis=-1, keepdims=True)
    ### END SOLUTION
''')

check("check_softmax", '''
# Visible checks for softmax: properties only. The grade comes from the hidden checks, run outside this notebook.
rng = np.random.default_rng(101)
scores = rng.normal(0, 2, size=(5, 7))
weights = np.asarray(softmax(scores))
assert weights.shape == scores.shape, (
    f"softmax returned shape {weights.shape} for scores of shape {scores.shape}: it must return one weight per score"
)
for i, total in enumerate(weights.sum(axis=-1)):
    assert abs(total - 1) < 1e-9, (
        f"row {i} sums to {total:.4f}, not 1: divide by the sum over the row itself (axis=-1, keepdims=True), "
        "not over the whole array or over a column"
    )
assert (weights > 0).all(), "some weights are 0 or negative: every finite score must get a positive weight (exp is never 0)"
assert np.array_equal(np.argsort(weights, axis=-1), np.argsort(scores, axis=-1)), (
    "within a row, a larger score must get a larger weight: exponentiate the scores themselves"
)
moved = np.asarray(softmax(scores + rng.normal(0, 50, size=(5, 1))))
assert np.allclose(moved, weights), (
    "adding one number to every score of a row changed that row's weights: normalise each row along axis=-1"
)
large = np.asarray(softmax(np.array([[1000.0, 999.0, 990.0], [-1000.0, -1001.0, -1010.0]])))
assert np.isfinite(large).all(), (
    "scores near +-1000 gave inf or NaN: subtract each row's largest score (keepdims=True) before np.exp"
)
assert np.allclose(large[0], large[1]), (
    "these two rows differ by the same constant everywhere, so their weights must be equal: subtract each row's own maximum"
)
hidden = np.asarray(softmax(np.array([[0.5, -np.inf, 1.0]])))
assert hidden[0, 1] == 0.0 and abs(hidden.sum() - 1) < 1e-12, "a score of -inf must get a weight of exactly 0"
stacked = np.asarray(softmax(rng.normal(size=(3, 4, 5))))
assert stacked.shape == (3, 4, 5) and np.allclose(stacked.sum(axis=-1), 1), (
    "with a heads axis in front, (3, 4, 5), each row along the last axis must sum to 1: use axis=-1, not axis=1"
)
print("softmax: visible checks passed")
''')

md("s1_attention_task", """
### Write `attention(queries, keys, values, mask=None)`

**Task:** scaled dot-product attention: scores `queries @ keysᵀ / √d`, with `d = queries.shape[-1]`, softmax
over each row (use your `softmax`), then the weighted average of the values.

* **Signature:** `attention(queries, keys, values, mask=None)`, with `queries` of shape `(..., Tq, d)`,
  `keys` `(..., Tk, d)`, `values` `(..., Tk, dv)`. The `...` are optional leading axes, such as heads: the
  store's model calls your function with arrays of shape `(heads, positions, 32)`.
* **Returns:** a pair `(weights, output)`: `weights` of shape `(..., Tq, Tk)`, `output` of shape `(..., Tq, dv)`.
* `mask` is used from section 2 on; write it now. When `mask` is given it is a boolean array that broadcasts
  to the scores' shape, `True` where a position may be looked at. Set every score where the mask is `False`
  to `-np.inf` **before** softmax (`np.where` does it in one line). When `mask` is `None`, every position is
  visible.
* Transpose the keys with `np.swapaxes(keys, -1, -2)`, not `keys.T`: with a heads axis in front, `.T` would
  flip that axis too.
""")

answer("attention", '''
def attention(queries, keys, values, mask=None):
    """Scaled dot-product attention. queries (..., Tq, d), keys (..., Tk, d), values (..., Tk, dv);
    mask: None or booleans broadcastable to (..., Tq, Tk), True = may look there.
    Returns (weights (..., Tq, Tk), output (..., Tq, dv))."""
    ### BEGIN SOLUTION
    queries, keys, values = (np.asarray(a, dtype=float) for a in (queries, keys, values))
    d = queries.shape[-1]
    scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(d)    # (..., Tq, Tk)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)                  # hidden positions: weight exactly 0
    weights = softmax(scores)
    return weights, weights @ values                              # (..., Tq, Tk), (..., Tq, dv)
    ### END SOLUTION
''')

check("check_attention", '''
# Visible checks for attention (no mask here; the mask is checked in section 2).
rng = np.random.default_rng(102)
q, k, v = rng.normal(size=(3, 8)), rng.normal(size=(5, 8)), rng.normal(size=(5, 6))
result = attention(q, k, v)
assert isinstance(result, tuple) and len(result) == 2, "attention must return a pair: (weights, output)"
weights, output = (np.asarray(a) for a in result)
assert weights.shape == (3, 5), (
    f"weights have shape {weights.shape}; 3 queries and 5 keys need (3, 5): one row per query, one column per key"
)
assert output.shape == (3, 6), (
    f"output has shape {output.shape}; it needs (3, 6): one value-sized vector (6 numbers) per query, weights @ values"
)
for i, total in enumerate(weights.sum(axis=-1)):
    assert abs(total - 1) < 1e-9, f"row {i} of the weights sums to {total:.4f}: apply softmax along the last axis of the scores"
assert np.allclose(output, weights @ v), "the output must be the weighted average of the values with the returned weights: weights @ values"
tiled, _ = attention(np.tile(q, 4), np.tile(k, 4), v)
doubled, _ = attention(2 * q, k, v)
assert np.allclose(tiled, doubled), (
    "repeating every query and key 4 times (d: 8 -> 32) makes each dot product 4 times larger; after dividing by "
    "sqrt(32) instead of sqrt(8) it must be 2 times larger, exactly like doubling the queries. Divide the scores by "
    "np.sqrt(d) with d = queries.shape[-1]: not by d, not by a fixed number, and not forgotten"
)
order = rng.permutation(5)
_, shuffled = attention(q, k[order], v[order])
assert np.allclose(shuffled, output), (
    "shuffling the keys and values together changed the output, but a weighted average ignores order: "
    "each value must be weighted by its own key's weight"
)
qh, kh, vh = (rng.normal(size=(2, 4, 8)) for _ in range(3))
try:
    wh, oh = (np.asarray(a) for a in attention(qh, kh, vh))
except ValueError as error:
    raise AssertionError(
        f"with a heads axis in front, (2, 4, 8) inputs raised {error!r}: transpose the keys with "
        "np.swapaxes(keys, -1, -2), not keys.T (which also moves the heads axis)"
    ) from None
assert wh.shape == (2, 4, 4) and oh.shape == (2, 4, 8), (
    f"with a heads axis in front, (2, 4, 8) inputs gave weights {wh.shape} and output {oh.shape}, expected (2, 4, 4) "
    "and (2, 4, 8): transpose the keys with np.swapaxes(keys, -1, -2), not keys.T"
)
for h in range(2):
    alone, _ = attention(qh[h], kh[h], vh[h])
    assert np.allclose(wh[h], alone), f"head {h}'s weights depend on the other head: keep the heads axis apart (np.swapaxes(keys, -1, -2))"
print("attention: visible checks passed")
''')

md("s1_read", """
Now run your attention on the four tokens and read the heatmap. Each **row** is one position's average:
which positions it draws from, and how much. Rows are the positions that look; columns are the positions
they look at.
""")

code("s1_run", """
weights, output = attention(queries, keys, values)
show_weights(weights, tokens, title="attention weights, no mask (random matrices)")
plt.show()
print("each row sums to 1:", bool(np.allclose(weights.sum(axis=1), 1)))
print("output shape (one 4-number vector per token):", np.shape(output))
print(f"coffee's weight on table, the token after it: {weights[2, 3]:.2f}")
""")

md("s1_after", """
The matrices are random, so the pattern means nothing yet, but it shows what attention is free to do: a row
can draw from **any** position, including later ones. `coffee` takes much of its average from `table`, which
comes after it. The weights come from the content (queries meet keys), and the same three matrices work for
4 positions or 150. A plain weighted average also ignores order, as the shuffle check above showed. For
predicting the next token, looking at later positions is a bug, which is the next section's subject.
""")

# ---------------------------------------------------------------------------------------------------------
# 2. The causal mask
# ---------------------------------------------------------------------------------------------------------

md("s2_intro", """
## 2. The causal mask, and the leak test

**Your task:** write `causal_mask`, make your `attention` use it correctly, and check that no position can see
a later one.

A language model predicts each token from the tokens before it. If position *i* could attend to *i* + 1, it
would see the answer: training would reward copying the next token, and the model would learn nothing it can
use when generating, where the next token does not exist yet. The causal mask sets every score for a later
position to −∞ **before** softmax; exp(−∞) = 0, so each position averages over itself and earlier positions
only. It also makes training cheap: one pass over a text predicts every position at once, each from its own past.

### Write `causal_mask(positions)`

* **Signature:** `causal_mask(positions)`, `positions` an int *T*.
* **Returns:** a **boolean** array of shape `(T, T)`, `True` at `[i, j]` when position *i* may look at
  position *j*, that is when `j <= i`: the lower triangle, diagonal included.
""")

answer("causal_mask", '''
def causal_mask(positions):
    """Boolean (positions, positions): True at [i, j] where j <= i (i may look at itself and earlier positions)."""
    ### BEGIN SOLUTION
    return np.tril(np.ones((positions, positions), dtype=bool))
    ### END SOLUTION
''')

check("check_causal_mask", '''
# Visible checks for causal_mask.
for T in [1, 4, 9]:
    mask = np.asarray(causal_mask(T))
    assert mask.dtype == bool, (
        f"causal_mask({T}) has dtype {mask.dtype}: it must be boolean (dtype=bool); "
        "np.where(mask, ...) needs True/False, and a 0/1 float mask is easy to misuse"
    )
    assert mask.shape == (T, T), f"causal_mask({T}) has shape {mask.shape}, expected ({T}, {T})"
    assert mask.diagonal().all(), f"causal_mask({T}) hides a position from itself: the diagonal must be True"
    later = np.argwhere(np.triu(mask, 1))
    assert len(later) == 0, (
        f"causal_mask({T}) lets position {later[0][0] if len(later) else 0} look at later position "
        f"{later[0][1] if len(later) else 0}: everything above the diagonal must be False"
    )
    assert mask[np.tril_indices(T)].all(), f"causal_mask({T}) hides an earlier position: everything below the diagonal must be True"
print("causal_mask: visible checks passed")
''')

md("s2_demo", """
Apply the mask to the four tokens of section 1. Then the **leak test**: give the last token, `table`, a
different vector, and see whether the output at `coffee` changes, without the mask and with it. If your
`attention` sets masked scores to −∞ before softmax, the heatmap has exact zeros above the diagonal and the
output at `coffee` no longer depends on what comes after it.
""")

code("s2_run", """
allowed = causal_mask(4)
masked_weights, masked_output = attention(queries, keys, values, allowed)
show_weights(masked_weights, tokens, title="attention weights with the causal mask")
plt.show()
print("total weight on later positions:", float(np.asarray(masked_weights)[~allowed].sum()))

changed = x.copy()
changed[3] = np.random.default_rng(7).normal(size=8)            # another token in place of `table`
for mask in [None, allowed]:
    before = attention(queries, keys, values, mask)[1][2]
    after = attention(changed @ w_query, changed @ w_key, changed @ w_value, mask)[1][2]
    print(f"output at coffee changes when the last token changes, {'with' if mask is not None else 'without'} the mask:",
          bool(not np.allclose(before, after)))
""")

md("s2_after", """
With the mask, the start marker can only look at itself, so its row is a single 1; `coffee` now spreads
its weight over the positions it may see, because softmax shares the total only among the positions left; the
last row is unchanged, since it had nothing later to lose. Without the mask, a change at the end reaches back
to `coffee`: that is the leak. A model trained with it can drive its training loss close to zero by copying
from the next position, and nothing crashes, which is why a broken mask is easy to miss.

The check below tests your `attention` with a mask on random inputs: exact zeros on hidden positions, rows
that still sum to 1, and the leak test. If it fails, fix `attention` in section 1 and re-run both cells.
""")

check("check_masked_attention", '''
# Visible checks for attention with a mask. The mask is built here with np.tril, so this check
# does not depend on your causal_mask.
rng = np.random.default_rng(104)
T, d = 6, 4
allowed = np.tril(np.ones((T, T), dtype=bool))
q, k, v = (rng.normal(size=(T, d)) for _ in range(3))
weights, output = (np.asarray(a) for a in attention(q, k, v, allowed))
for i, j in np.argwhere(~allowed):
    w = weights[i, j]
    assert w == 0.0, (
        f"row {i} puts {w:.2g} on the later position {j}: set the masked scores to -np.inf before softmax "
        "(np.where(mask, scores, -np.inf)) so their weight is exactly 0"
    )
for i, total in enumerate(weights.sum(axis=-1)):
    assert abs(total - 1) < 1e-9, (
        f"row {i} sums to {total:.3f}: apply the mask to the scores before softmax, not to the weights after it, "
        "so each row still sums to 1 over the positions it may see"
    )
q2, k2, v2 = q.copy(), k.copy(), v.copy()
q2[-1], k2[-1], v2[-1] = rng.normal(size=(3, d))                 # only the last token changes
_, leaked = attention(q2, k2, v2, allowed)
for i in range(T - 1):
    assert np.allclose(np.asarray(leaked)[i], output[i], rtol=0, atol=1e-12), (
        f"the output at position {i} changed when only the last token changed: the future leaks. "
        "Mask the scores with -np.inf before softmax"
    )
qh, kh, vh = (rng.normal(size=(3, T, d)) for _ in range(3))
try:
    wh, oh = (np.asarray(a) for a in attention(qh, kh, vh, allowed))  # one (T, T) mask for all 3 heads
except ValueError as error:
    raise AssertionError(
        f"3 heads with one (T, T) mask raised {error!r}: use np.swapaxes(keys, -1, -2) rather than keys.T, "
        "and let np.where broadcast the mask over the heads"
    ) from None
assert wh.shape == (3, T, T) and oh.shape == (3, T, d), (
    f"with 3 heads and a (T, T) mask, got weights {wh.shape} and output {oh.shape}: let the mask broadcast over the heads"
)
assert (wh[:, ~allowed] == 0).all(), "with a heads axis, some head still looks at a later position: the mask must apply to every head"
padding = np.array([True, True, False, True, True, True])       # hide position 2 from everyone
wp, _ = attention(q, k, v, padding)
assert (np.asarray(wp)[:, 2] == 0).all() and np.allclose(np.asarray(wp).sum(-1), 1), (
    "a mask that hides one column for every row must give that column exactly 0 weight, and rows summing to 1"
)
print("attention with a mask: visible checks passed")
''')

# ---------------------------------------------------------------------------------------------------------
# 3. Scaling
# ---------------------------------------------------------------------------------------------------------

md("s3_intro", """
## 3. Scaling the scores by √d

**Your task:** first predict, in writing, what happens without the division; then write
`average_largest_weight` and run the experiment that tests your prediction.

A score is a dot product: one product per number, added up. If the numbers in queries and keys are
independent with mean 0 and variance 1, a score has variance d, so its typical size grows like √d. Softmax
turns large differences between scores into extreme weights: one key gets nearly everything. Dividing by √d
brings the scores back to variance 1 whatever d is. The store's model works with queries and keys of
32 numbers per head.

The experiment: 1,000 random queries, each scored against 16 random keys, for sizes d = 4, 32 and 256, with
and without the division. For each query take the largest of its 16 weights; report the average over the
queries. With 16 keys, an even spread would give 1/16 ≈ 0.06 to each.

**Predict before you run anything** (graded by hand, 1 point): with **256 numbers and no division**, what
will the average largest weight be, roughly? Give a number and one or two sentences of reasoning. You are
graded on the reasoning, not on being right.
""")

written("answer_scaling_prediction", """
Prediction: close to 1, around 0.9. Without the division, scores with 256 numbers have a standard
deviation of about √256 = 16, so the gap between the best and second-best of 16 keys is typically several
units; softmax turns a gap of a few units into a ratio of e^gap, so the top key takes most of the weight
in nearly every row. With the division the scores have standard deviation 1 and the largest weight stays
near 0.25 whatever d is.
""")

md("s3_task", """
### Write `average_largest_weight(queries, keys, scaled=True)`

* **Signature:** `average_largest_weight(queries, keys, scaled=True)`, `queries` of shape `(Q, d)`, `keys` of
  shape `(K, d)`.
* **Returns:** a Python `float`: the scores `queries @ keys.T`, divided by √d when `scaled` is true (not
  divided when false), softmax over each row (use your `softmax`), the largest weight of each row, averaged
  over the Q rows.
""")

answer("average_largest_weight", '''
def average_largest_weight(queries, keys, scaled=True):
    """Mean over queries of the largest softmax weight in each row of queries @ keys.T (divided by sqrt(d) if scaled).
    queries (Q, d), keys (K, d). Returns a float."""
    ### BEGIN SOLUTION
    queries, keys = np.asarray(queries, dtype=float), np.asarray(keys, dtype=float)
    scores = queries @ keys.T                       # (Q, K)
    if scaled:
        scores = scores / np.sqrt(queries.shape[-1])
    return float(softmax(scores).max(axis=-1).mean())
    ### END SOLUTION
''')

check("check_average_largest_weight", '''
# Visible checks for average_largest_weight.
rng = np.random.default_rng(105)
q, k = rng.normal(size=(300, 64)), rng.normal(size=(16, 64))
scaled, unscaled = average_largest_weight(q, k), average_largest_weight(q, k, scaled=False)
for name, value in [("scaled", scaled), ("unscaled", unscaled)]:
    assert np.ndim(value) == 0, f"the {name} result has shape {np.shape(value)}: return one number, the mean over all queries"
    assert 1 / 16 - 1e-12 <= value <= 1 + 1e-12, (
        f"the {name} result is {value:.3f}, but the largest of 16 weights that sum to 1 lies between 1/16 and 1: "
        "take the max over each row's weights (axis=-1), then the mean"
    )
assert average_largest_weight(q, k, True) == scaled, "scaled=True must be the default"
assert unscaled > scaled, (
    f"with 64 numbers, unscaled ({unscaled:.2f}) should be sharper than scaled ({scaled:.2f}): "
    "divide by np.sqrt(d) only when scaled is true"
)
same = average_largest_weight(q, np.ones((16, 64)))
assert abs(same - 1 / 16) < 1e-9, (
    f"with 16 identical keys every weight is 1/16, so the answer must be 1/16, got {same:.4f}: "
    "softmax over the keys (each row), not over the queries"
)
tiled = average_largest_weight(np.tile(q, 4), np.tile(k, 4))
doubled = average_largest_weight(2 * q, k)
assert abs(tiled - doubled) < 1e-9, (
    "repeating queries and keys 4 times (d -> 4d) must act like doubling the scaled scores: "
    "divide by np.sqrt(d) with d = queries.shape[-1]"
)
print("average_largest_weight: visible checks passed")
''')

code("s3_run", """
rng = np.random.default_rng(3)
sizes = [4, 32, 256]
results = {}
for size in sizes:
    q, k = rng.normal(size=(1000, size)), rng.normal(size=(16, size))
    for scaled in [False, True]:
        results[size, scaled] = average_largest_weight(q, k, scaled=scaled)
        print(f"d = {size:>3}, {'scaled  ' if scaled else 'unscaled'}: average largest weight {results[size, scaled]:.2f}")

_, ax = plt.subplots(figsize=(5.5, 3.5))
for scaled, style in [(False, "o-"), (True, "s-")]:
    ax.plot(sizes, [results[s, scaled] for s in sizes], style, label="divided by sqrt(d)" if scaled else "not divided")
ax.axhline(1 / 16, color="gray", ls="--", label="even spread, 1/16")
ax.set_xscale("log", base=2)
ax.set_xticks(sizes, [str(s) for s in sizes])
ax.set_ylim(0, 1.05)
ax.set_xlabel("d, numbers per query and key")
ax.set_ylabel("average largest weight (16 keys)")
ax.legend()
plt.show()
""")

md("s3_after", """
Compare with your prediction. Without the division, the largest weight climbs with d, and at the larger sizes
almost every query attends mostly to one key before any training has happened. With the division it stays
at about the same value for every size: spread over several keys, though not evenly. That is where
training should start: every position looks at several others, so gradients reach all of them, and training
sharpens the weights where sharp weights help. Some models (T5, for example) leave the division out and fold
the factor into how the query weights start, so check which convention a model uses before loading its weights.
""")

# ---------------------------------------------------------------------------------------------------------
# 4. Several heads
# ---------------------------------------------------------------------------------------------------------

md("s4_intro", """
## 4. Several heads look for different things

**Your task:** write `split_heads`, `join_heads` and `multi_head_attention`, and check the shape of the
weights: `(heads, positions, positions)`.

One attention computation gives one set of weights per position, so it can look for one kind of thing.
Multi-head attention runs several side by side, each in its own share of the numbers: with D = 8 numbers and
2 heads, each head works in d = 4. The heads' outputs are put back side by side and mixed by one more learned
matrix, the output projection. The cost stays about that of a single head over all D numbers, and each head
gets its own pattern of weights. The store's model has 4 heads per layer, each 32 numbers wide.

### Write `split_heads(x, heads)`

* **Signature:** `split_heads(x, heads)`, `x` of shape `(T, D)`, `heads` an int that divides D.
* **Returns:** shape `(heads, T, D // heads)`; head `h` holds columns `h*d` to `(h+1)*d - 1` of `x`, where
  `d = D // heads`.
* Hint: reshape to `(T, heads, d)` first, then move the heads axis to the front. Reshaping straight to
  `(heads, T, d)` runs without error and mixes positions together.
""")

answer("split_heads", '''
def split_heads(x, heads):
    """(T, D) -> (heads, T, D // heads); head h holds columns h*d:(h+1)*d of x."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    positions, width = x.shape
    return x.reshape(positions, heads, width // heads).transpose(1, 0, 2)
    ### END SOLUTION
''')

check("check_split_heads", '''
# Visible checks for split_heads. xs[t, c] = 100 * t + c, so every number says where it came from.
T, D, heads = 5, 12, 3
d = D // heads
xs = 100.0 * np.arange(T)[:, None] + np.arange(D)[None, :]
parts = np.asarray(split_heads(xs, heads))
assert parts.shape == (heads, T, d), f"split_heads gave shape {parts.shape}, expected (heads, T, D // heads) = {(heads, T, d)}"
for h in range(heads):
    for t in range(T):
        assert np.array_equal(parts[h, t], xs[t, h * d:(h + 1) * d]), (
            f"head {h}, position {t} holds {parts[h, t]}, but it must hold columns {h * d}..{(h + 1) * d - 1} of "
            f"row {t}: reshape to (T, heads, d), then transpose(1, 0, 2)"
        )
print("split_heads: visible checks passed")
''')

md("s4_join_task", """
### Write `join_heads(x)`

* **Signature:** `join_heads(x)`, `x` of shape `(heads, T, d)`.
* **Returns:** shape `(T, heads * d)`, the heads side by side: head `h` in columns `h*d` to `(h+1)*d - 1`.
  It undoes `split_heads`: `join_heads(split_heads(x, heads))` gives back `x`.
""")

answer("join_heads", '''
def join_heads(x):
    """(heads, T, d) -> (T, heads * d), head h in columns h*d:(h+1)*d; the inverse of split_heads."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    heads, positions, size = x.shape
    return x.transpose(1, 0, 2).reshape(positions, heads * size)
    ### END SOLUTION
''')

check("check_join_heads", '''
# Visible checks for join_heads.
rng = np.random.default_rng(106)
y = rng.normal(size=(3, 5, 4))                          # (heads, T, d)
joined = np.asarray(join_heads(y))
assert joined.shape == (5, 12), f"join_heads gave shape {joined.shape} for (3, 5, 4), expected (T, heads * d) = (5, 12)"
for h in range(3):
    assert np.array_equal(joined[:, h * 4:(h + 1) * 4], y[h]), (
        f"columns {h * 4}..{h * 4 + 3} must hold head {h}: move the heads axis next to d with transpose(1, 0, 2), then reshape"
    )
xs = rng.normal(size=(6, 8))
for heads in [1, 2, 4]:
    back = np.asarray(join_heads(xs.reshape(6, heads, 8 // heads).transpose(1, 0, 2)))
    assert np.array_equal(back, xs), f"joining {heads} heads split from x did not give x back: join_heads must undo split_heads"
print("join_heads: visible checks passed")
''')

md("s4_mha_task", """
### Write `multi_head_attention(x, w_query, w_key, w_value, w_output, heads)`

**Task:** causal multi-head attention over one sequence, using your functions: project `x` into queries,
keys and values (`x @ w_query`, ...), split each into heads, run `attention` in all heads at once with
`causal_mask(T)` (one `(T, T)` mask broadcasts over the heads), join the heads' outputs, multiply by
`w_output`.

* **Signature:** `multi_head_attention(x, w_query, w_key, w_value, w_output, heads)`, `x` of shape `(T, D)`,
  the four matrices of shape `(D, D)`.
* **Returns:** `(weights, output)`: `weights` of shape `(heads, T, T)`, one pattern per head, and
  `output` of shape `(T, D)`, the same shape as `x`, so layers can be stacked.
* Each head scales its scores by √d of **its own** size, d = D // heads; your `attention` already does that if
  you pass it the split arrays.
""")

answer("multi_head_attention", '''
def multi_head_attention(x, w_query, w_key, w_value, w_output, heads):
    """Causal multi-head attention. x (T, D); w_* (D, D), used as x @ W.
    Returns (weights (heads, T, T), output (T, D))."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    queries = split_heads(x @ w_query, heads)              # (heads, T, d)
    keys = split_heads(x @ w_key, heads)
    values = split_heads(x @ w_value, heads)
    weights, mixed = attention(queries, keys, values, causal_mask(x.shape[0]))
    return weights, join_heads(mixed) @ w_output           # (heads, T, T), (T, D)
    ### END SOLUTION
''')

check("check_multi_head_attention", '''
# Visible checks for multi_head_attention.
rng = np.random.default_rng(107)
T, D, heads = 5, 12, 3
d = D // heads
xs = rng.normal(size=(T, D))
wq, wk, wv, wo = (rng.normal(0, 0.4, size=(D, D)) for _ in range(4))
weights, output = (np.asarray(a) for a in multi_head_attention(xs, wq, wk, wv, wo, heads))
assert weights.shape == (heads, T, T), (
    f"weights have shape {weights.shape}, expected (heads, T, T) = {(heads, T, T)}: the heads axis comes first"
)
assert output.shape == (T, D), f"output has shape {output.shape}, expected (T, D) = {(T, D)}: join the heads, then @ w_output"
upper = np.triu(np.ones((T, T), dtype=bool), 1)
for h in range(heads):
    assert (weights[h][upper] == 0).all(), f"head {h} looks at later positions: pass causal_mask(T) to attention"
assert np.allclose(weights.sum(-1), 1), "each head's rows must sum to 1"
w2, o2 = (np.asarray(a) for a in multi_head_attention(xs, wq, wk, 3 * wv, 2 * wo, heads))
assert np.allclose(w2, weights), "the weights changed when only w_value and w_output changed: weights come from queries and keys only"
assert np.allclose(o2, 6 * output), (
    "tripling w_value and doubling w_output must multiply the output by 6: "
    "the output is join_heads(weights @ values) @ w_output"
)
wq_changed = wq.copy()
wq_changed[:, (heads - 1) * d:] = rng.normal(size=(D, d))   # only the last head's query columns
w3, _ = (np.asarray(a) for a in multi_head_attention(xs, wq_changed, wk, wv, wo, heads))
assert np.allclose(w3[:-1], weights[:-1]), (
    "changing only the last head's columns of w_query changed another head's weights: "
    "each head must use its own columns (see split_heads)"
)
assert not np.allclose(w3[-1], weights[-1]), "changing the last head's columns of w_query did not change that head's weights"
xs_changed = xs.copy()
xs_changed[-1] = rng.normal(size=D)
_, o4 = multi_head_attention(xs_changed, wq, wk, wv, wo, heads)
assert np.allclose(np.asarray(o4)[:-1], output[:-1]), "changing the last position changed earlier outputs: use the causal mask"
print("multi_head_attention: visible checks passed")
''')

md("s4_demo", """
Two heads over the four tokens of section 1 (D = 8, so each head works in 4 numbers), with random
8 × 8 matrices. Both heads read the same input; compare where each one looks.
""")

code("s4_run", """
rng = np.random.default_rng(44)
w_q8, w_k8, w_v8, w_o8 = (rng.normal(scale=0.5, size=(8, 8)) for _ in range(4))
head_weights, head_output = multi_head_attention(x, w_q8, w_k8, w_v8, w_o8, heads=2)
print("weights shape (heads, positions, positions):", np.shape(head_weights))
print("output shape (positions, D), the input's shape again:", np.shape(head_output))

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for h, ax in enumerate(axes):
    show_weights(np.asarray(head_weights)[h], tokens, title=f"head {h + 1}", ax=ax)
plt.tight_layout()
plt.show()
""")

md("s4_after", """
Each head has its own weight matrix, and the rows for the same token differ between the heads. With random
matrices that means nothing yet; it is the room training uses, so that each head can learn its own way of
looking back and the output projection can combine what they found. Whenever you change a model, check the
weights' shape, heads × positions × positions: a head axis in the wrong place mixes heads together without an error.
""")

# ---------------------------------------------------------------------------------------------------------
# 5. Reading the store's model
# ---------------------------------------------------------------------------------------------------------

md("s5_intro", """
## 5. Reading what the store's model attends to

**Your task:** read the heads of the trained store's model at one position of one product, check that your
own `attention` runs the real model, and describe in writing what one head seems to do.

The store's model is a small transformer: 4 layers, each with 4 heads of 32 numbers, rotary positions inside
every head, trained once on the store's training products. Each product is one text:
`<s> name <sep> description <end>`, in BPE tokens that end in `</w>` at the end of a word (`furniture</w>`),
while pieces of longer words don't (`har` `sh</w>`). `lib.transformer` recomputes the model in NumPy and
returns every head's weights.

The product: `double chaise patio furniture cover`, from the validation split, so the model never trained on
it. Its description repeats the end of its name. We stop at the description's **second** `furniture`, where the
next token should be `cover`. Labels: `current` is the position being predicted from, `name` a token of
the name, `description` an earlier token of the description, `marker` is `<s>` or `<sep>`.
""")

code("s5_load", """
from lib import transformer
from lib.store import load_products

_, vocabulary, manifest = transformer.load()
settings = manifest["settings"]
index = {token: i for i, token in enumerate(vocabulary)}
print("layers:", settings["layers"], "| heads per layer:", settings["heads"],
      "| numbers per head:", settings["dimensions"] // settings["heads"])

validation = load_products("validation")
chosen = validation[validation["name"] == "double chaise patio furniture cover"]
if chosen.empty:
    raise LookupError("the validation split has no product named 'double chaise patio furniture cover'")
product = chosen.iloc[0]
ids = transformer.product_ids(product["name"], product["description"], index, settings["longest"])
sep = ids.index(index[transformer.SEP])
furniture = [i for i in range(sep + 1, len(ids)) if ids[i] == index["furniture</w>"]]
position = furniture[1]                                     # the description's second `furniture`


def where(i):
    \"\"\"Label position i: current, a marker, a token of the name, or an earlier token of the description.\"\"\"
    token = vocabulary[ids[i]]
    if i == position:
        return f"current:{token}"
    if i == 0 or i == sep:
        return f"marker:{token}"
    return f"{'name' if i < sep else 'description'}:{token}"


logits, patterns = transformer.forward(ids, keep=True)       # patterns: one (heads, T, T) array per layer
probabilities = transformer.softmax(logits[position])
print("name:", " ".join(vocabulary[i] for i in ids[1:sep]))
print("description up to the current position:", " ".join(vocabulary[i] for i in ids[sep + 1:position + 1]))
print(f"P(next token is {vocabulary[ids[position + 1]]}) = {probabilities[ids[position + 1]]:.2f}")
print()
for layer, pattern in enumerate(patterns):
    for head, weights in enumerate(pattern):
        top = np.argsort(-weights[position], kind="stable")[:3]
        print(f"layer {layer + 1}, head {head + 1}: " + ", ".join(f"{where(i)} {weights[position, i]:.2f}" for i in top))
""")

md("s5_heatmaps", """
The last layer's four heads, drawn for the text up to the current position (framed in red). Each row is one
position's weights; read the framed row for what the heads look at when predicting the token after the second
`furniture`, and the other rows for each head's general habits (the diagonal: the current token; just below
it: the previous token; the first column: `<s>`).
""")

code("s5_draw", """
def short(token):
    \"\"\"A readable label: `furniture</w>` -> `furniture`, a word piece `har` -> `har-`, markers unchanged.\"\"\"
    if token in (transformer.BOS, transformer.SEP, transformer.END):
        return token
    return token[:-4] if token.endswith("</w>") else token + "-"


labels = [f"{short(vocabulary[t])}" for t in ids[:position + 1]]
last = patterns[-1]
fig, axes = plt.subplots(2, 2, figsize=(17, 15))
for head, ax in enumerate(axes.flat):
    show_weights(last[head, :position + 1, :position + 1], labels, title=f"layer {len(patterns)}, head {head + 1}",
                 ax=ax, numbers=False, highlight=position)
plt.tight_layout()
plt.show()

at_position = np.stack([p[:, position, :position + 1] for p in patterns]).reshape(-1, position + 1)
rows = [f"L{layer + 1} H{head + 1}" for layer in range(len(patterns)) for head in range(settings["heads"])]
show_weights(at_position, rows, labels, numbers=False,
             title=f"every head, looking from the current position ({labels[-1]}, position {position})")
plt.gca().set_ylabel("layer and head")
for boundary in range(settings["heads"], len(rows), settings["heads"]):
    plt.gca().axhline(boundary - 0.5, color="white", lw=1.5)     # a line between layers
plt.show()
""")

md("s5_yours", """
**Your attention inside the real model.** `transformer.forward` accepts an `attention` function in place of the
library's: it calls it in every head of every layer as `attention(queries, keys, values, mask)`, with arrays of
shape `(heads, T, 32)` (rotary positions already applied) and the causal mask `(T, T)`. The cell below runs the
model with yours and compares. This cell is not graded; a hidden check does the same outside this notebook.
""")

code("s5_drive", """
mine = transformer.forward(ids, attention=attention)
reference = transformer.forward(ids)
cover = index["cover</w>"]
print(f"P(cover) with the library's attention: {transformer.softmax(reference[position])[cover]:.4f}")
print(f"P(cover) with your attention:          {transformer.softmax(np.asarray(mine)[position])[cover]:.4f}")
gap = float(np.abs(np.asarray(mine) - reference).max())
print(f"largest difference between the two sets of logits: {gap:.2e}")
print("the same model, run by your attention" if gap < 1e-6 else
      "your attention gives different logits: check the mask, the scaling and the heads axis (sections 1-2)")
""")

md("s5_question", """
**Written answer** (graded by hand, 1 point): pick **one** head from the output above (say which layer and
head). In two to four sentences: what does it seem to do at this position, which printed numbers or heatmap
rows support that, and why the weights alone can't show that the model *uses* what the head looks at.
""")

written("answer_read_a_head", """
Layer 4, head 1: at the second `furniture` of the description it puts almost all its weight (0.93) on
`cover` in the name, the token that followed `furniture` in the name, and almost none (0.00) on `from`, which
followed the description's own earlier `furniture` (layer 4, head 3 does the same). That looks like an induction head: find an earlier occurrence of the
current token and attend to what came after it, so `cover` can be copied. A heavy weight only says where the
head took its average from; it doesn't show that the prediction depends on it, so the hypothesis needs a test
that changes the input (section 6).
""")

# ---------------------------------------------------------------------------------------------------------
# 6. Testing what the model copies
# ---------------------------------------------------------------------------------------------------------

md("s6_intro", """
## 6. Testing what the model copies

**Your task:** predict, in writing, what happens when the product's name changes; then run the test and
compare.

If the model predicts `cover` by copying it from the name, changing the name should change the prediction.
If it predicts `cover` because text like this usually continues that way, the name shouldn't matter much.
We keep the description as it is and try three names: the name as sold, the name without `cover`, and the name
ending in `set` instead. At the same position (the description's second `furniture`) we read P(cover) and
P(set). Then we count what follows `this outdoor patio furniture` in the training descriptions: those four
tokens are all a four-token window model would see.

**Predict before you run** (graded by hand, 1 point): for the name **without `cover`** and the name
**ending in `set`**, will P(cover) stay high or fall, and what will happen to P(set)? Which outcome would show
that the model copies from the name, and which would show it relies on the description alone?
""")

written("answer_copy_prediction", """
If the model copies from the name, P(cover) should fall sharply when `cover` is taken out of the
name, and with the name ending in `set`, P(set) should rise to become the most likely and P(cover) should fall.
If instead it relied on the description's own words (`this outdoor patio furniture`), P(cover) would stay about
the same for all three names, since the description is unchanged. A large change that follows the name is
evidence of copying; no change would mean the name isn't used.
""")

code("s6_run", """
from lib.experiments import phrase_followers

cover, set_ = index["cover</w>"], index["set</w>"]
names = [("double chaise patio furniture cover", "name as sold"),
         ("double chaise patio furniture", "name without cover"),
         ("double chaise patio furniture set", "name ending in set")]
measured = []
for name, label in names:
    text = transformer.product_ids(name, product["description"], index, settings["longest"])
    text_sep = text.index(index[transformer.SEP])
    second = [i for i in range(text_sep + 1, len(text)) if text[i] == index["furniture</w>"]][1]
    p = transformer.softmax(transformer.forward(text)[second])
    measured.append((p[cover], p[set_]))
    print(f"{label:<20} P(cover) = {p[cover]:.2f}   P(set) = {p[set_]:.2f}")

_, ax = plt.subplots(figsize=(7, 3.2))
spots = np.arange(len(names))
ax.bar(spots - 0.2, [c for c, _ in measured], 0.4, label="P(cover)")
ax.bar(spots + 0.2, [s for _, s in measured], 0.4, label="P(set)")
ax.set_xticks(spots, [label for _, label in names])
ax.set_ylim(0, 1)
ax.set_ylabel("probability of the next token")
ax.legend()
plt.show()

followers = phrase_followers("train", "this outdoor patio furniture")   # the word after the phrase, once per description
counts = {}
for word in followers:
    counts[word] = counts.get(word, 0) + 1
print(f"training descriptions with 'this outdoor patio furniture': {len(followers)}")
print("what follows it:", ", ".join(f"{word} {n}" for word, n in sorted(counts.items(), key=lambda item: -item[1])))
""")

md("s6_after", """
Compare with your prediction. When the prediction follows the name, the model is copying a word from many
tokens back, which a four-token window can't do: the training counts show how weakly those four tokens alone
point at `cover`. Note how the test was built: a change that should matter (the name) and a part that was
held fixed (the description). Attention weights suggest hypotheses; tests like this one decide them. One
product is an example, not a measurement of how often the model does this: the next two sections measure the
heads over many products.
""")

# ---------------------------------------------------------------------------------------------------------
# 7. Previous-token heads
# ---------------------------------------------------------------------------------------------------------

md("s7_intro", """
## 7. Heads that attend to the previous token

**Your task:** write `previous_token_weight` and `even_previous_weight`; the provided cell then measures every
head of the store's model over 300 validation products and compares with an even spread.

A head that attends to the previous token carries each token's predecessor into its position, so later layers
see pairs of tokens; the copying of section 6 needs it (to find what followed `furniture` before, earlier
positions must know their predecessor). One text can mislead, so we average. A number such as 0.3 only means
something next to a baseline: an **even spread**, where position *i* puts 1/(*i* + 1) on each of the *i* + 1
positions it can see.

In sections 7 and 8 a **pattern** is one layer's attention weights, shape `(heads, T, T)`:
`pattern[h, i, j]` is the weight head `h` puts on position `j` when computing position `i`.

### Write `previous_token_weight(pattern)`

* **Signature:** `previous_token_weight(pattern)`, `pattern` of shape `(heads, T, T)`, T ≥ 2.
* **Returns:** shape `(heads,)`: for each head, the mean over positions *i* = 1 … T − 1 of
  `pattern[h, i, i - 1]`. Position 0 has no previous token and is left out; every other position counts once.
""")

answer("previous_token_weight", '''
def previous_token_weight(pattern):
    """pattern (heads, T, T) -> (heads,): mean over i = 1..T-1 of pattern[:, i, i - 1]."""
    ### BEGIN SOLUTION
    pattern = np.asarray(pattern, dtype=float)
    rows = np.arange(1, pattern.shape[-1])
    return pattern[:, rows, rows - 1].mean(axis=-1)
    ### END SOLUTION
''')

check("check_previous_token_weight", '''
# Visible checks for previous_token_weight, on three made-up heads of 7 positions.
rng = np.random.default_rng(108)
T = 7
previous = np.zeros((T, T))
previous[0, 0] = 1.0                                     # position 0 can only look at itself
previous[np.arange(1, T), np.arange(T - 1)] = 1.0        # everyone else: all weight on the previous token
itself = np.eye(T)                                       # all weight on the current token
spread = np.tril(rng.random((T, T)))
spread /= spread.sum(1, keepdims=True)                   # some causal pattern
result = np.asarray(previous_token_weight(np.stack([previous, itself, spread])))
assert result.shape == (3,), f"3 heads gave shape {result.shape}: return one number per head, shape (heads,)"
assert abs(result[0] - 1) < 1e-12, (
    f"a head that always looks at the previous token scored {result[0]:.3f}, not 1: take pattern[h, i, i - 1] for "
    "i = 1..T-1 only (position 0 has no previous token), and average over those T - 1 positions"
)
assert abs(result[1]) < 1e-12, f"a head that only looks at the current token scored {result[1]:.3f}, not 0: use the weight on i - 1, not on i"
assert 0 <= result[2] <= 1, f"a weight average must lie between 0 and 1, got {result[2]:.3f}"
swapped = np.asarray(previous_token_weight(np.stack([spread, previous, itself])))
assert np.allclose(swapped, result[[2, 0, 1]]), "reordering the heads must reorder the results the same way: keep axis 0 (heads) as it is"
print("previous_token_weight: visible checks passed")
''')

md("s7_even_task", """
### Write `even_previous_weight(positions)`

* **Signature:** `even_previous_weight(positions)`, `positions` an int T ≥ 2, the length of a text.
* **Returns:** a Python `float`: what `previous_token_weight` gives for an even spread over a text of T
  tokens, that is the mean over *i* = 1 … T − 1 of 1/(*i* + 1).
""")

answer("even_previous_weight", '''
def even_previous_weight(positions):
    """The previous-token weight of an even spread over a text of `positions` tokens: mean over i = 1..T-1 of 1 / (i + 1)."""
    ### BEGIN SOLUTION
    return float(np.mean(1.0 / np.arange(2, positions + 1)))
    ### END SOLUTION
''')

check("check_even_previous_weight", '''
# Visible checks for even_previous_weight.
values = [even_previous_weight(T) for T in [2, 3, 10, 160]]
for T, value in zip([2, 3, 10, 160], values):
    assert np.ndim(value) == 0, f"even_previous_weight({T}) must be one number, got shape {np.shape(value)}"
assert abs(values[0] - 0.5) < 1e-12, (
    f"with 2 tokens, position 1 sees 2 positions, so an even spread puts 1/2 on the previous one; got {values[0]:.3f}"
)
assert all(a > b for a, b in zip(values, values[1:])), "longer texts must give a smaller even weight: later positions see more tokens"
for T in [2, 5, 40]:
    even = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    mine = float(np.asarray(previous_token_weight(even[None]))[0])
    assert abs(even_previous_weight(T) - mine) < 1e-9, (
        f"for T = {T}, even_previous_weight gives {even_previous_weight(T):.4f} but your previous_token_weight of an "
        f"even-spread pattern gives {mine:.4f}: both must average over the same positions i = 1..T-1"
    )
print("even_previous_weight: visible checks passed")
''')

code("s7_run", """
from lib.products import product_texts

texts = product_texts("validation", 300)
layers, heads = settings["layers"], settings["heads"]
on_previous = np.zeros((layers, heads))
even = 0.0
for text_ids, _ in texts:
    _, text_patterns = transformer.forward(text_ids, keep=True)
    on_previous += np.stack([previous_token_weight(p) for p in text_patterns])   # (layers, heads)
    even += even_previous_weight(len(text_ids))
on_previous /= len(texts)
even /= len(texts)

show_table(on_previous, [f"layer {l + 1}" for l in range(layers)], [f"head {h + 1}" for h in range(heads)],
           title=f"weight on the previous token, {len(texts)} validation products\\n(even spread: {even:.2f})",
           label="average weight")
plt.show()
layer, head = np.unravel_index(on_previous.argmax(), on_previous.shape)
print(f"most previous-token head: layer {layer + 1}, head {head + 1}, weight {on_previous.max():.2f}")
print(f"an even spread, averaged the same way: {even:.2f}; that head puts {on_previous.max() / even:.1f} times as much there")
""")

md("s7_after", """
Read each cell against the even spread. Several heads favour the previous token several times over, and
none puts all its weight there. A head's average says what it does most, not all it
does, so calling a head "the previous-token head" simplifies. Describe heads by measured averages like these,
over a few hundred texts, always beside the even spread.
""")

# ---------------------------------------------------------------------------------------------------------
# 8. Reaching past the window
# ---------------------------------------------------------------------------------------------------------

md("s8_intro", """
## 8. Reaching past the window

**Your task:** write the five functions that measure how much weight description tokens put 4 or more
positions back, and how much on the markers, each with its even-spread baseline. The provided cell then
aggregates them over the store's model.

A four-token window model predicts from the current token and the three before it, so 4 positions back is
the nearest it can't see. The markers `<s>` (position 0) and `<sep>` (position `sep`) are counted apart: heads
often park weight on them when they find nothing useful, and that must not look like long-range attention.

### Write `description_positions(ids, sep, end_id)`

* **Signature:** `description_positions(ids, sep, end_id)`: `ids` a list of token ids, `sep` the position of
  `<sep>`, `end_id` the id of the end marker.
* **Returns:** a 1-D int array of the positions `sep + 1` … `T − 1` whose token is not `end_id` (empty when
  the product has no description).
""")

answer("description_positions", '''
def description_positions(ids, sep, end_id):
    """Positions sep+1..T-1 whose token is not the end marker, as a 1-D int array."""
    ### BEGIN SOLUTION
    ids = np.asarray(ids)
    after = np.arange(sep + 1, len(ids))
    return after[ids[after] != end_id]
    ### END SOLUTION
''')

check("check_description_positions", '''
# Visible checks for description_positions, on made-up ids: 0 = <s>, 1 = <sep>, 2 = <end>, others are words.
END_ID = 2
examples = {
    "with a description": [0, 11, 12, 1, 13, 14, 15, 2],
    "cut before <end>": [0, 11, 1, 13, 14, 15, 16],
    "no description": [0, 11, 12, 1, 2],
    "a word with the id of <s>": [0, 11, 1, 13, 0, 2],
}
for label, ids in examples.items():
    sep = ids.index(1)
    got = np.asarray(description_positions(ids, sep, END_ID))
    assert got.ndim == 1 and (got.size == 0 or np.issubdtype(got.dtype, np.integer)), (
        f"{label}: return a 1-D array of int positions, got shape {got.shape} and dtype {got.dtype}"
    )
    assert all(p > sep for p in got), f"{label}: {got} includes the name or <sep> (sep = {sep}): start at sep + 1"
    assert all(ids[p] != END_ID for p in got), f"{label}: {got} includes the end marker's position: leave out tokens equal to end_id"
    wanted = sum(1 for t in ids[sep + 1:] if t != END_ID)
    assert len(got) == wanted and len(set(got.tolist())) == wanted, (
        f"{label}: {len(got)} positions, but the description has {wanted} tokens that are not <end>: "
        "keep every position after sep, up to the last one, except the end marker"
    )
    assert list(got) == sorted(got), f"{label}: return the positions in increasing order"
print("description_positions: visible checks passed")
''')

md("s8_far_task", """
### Write `far_back_weight(pattern, sep, queries)`

* **Signature:** `far_back_weight(pattern, sep, queries)`: `pattern` of shape `(heads, T, T)`, `sep` the
  position of `<sep>`, `queries` a 1-D int array of Q query positions (usually `description_positions(...)`).
* **Returns:** shape `(heads, Q)`: for each head and each query position *i*, the sum of `pattern[h, i, j]`
  over the positions *j* with *i* − *j* ≥ 4 that are **not** a marker (*j* ∉ {0, `sep`}).
""")

answer("far_back_weight", '''
def far_back_weight(pattern, sep, queries):
    """pattern (heads, T, T) -> (heads, Q): for each query i, the weight on positions j with i - j >= 4, j not 0 or sep."""
    ### BEGIN SOLUTION
    pattern = np.asarray(pattern, dtype=float)
    queries = np.asarray(queries, dtype=int)
    j = np.arange(pattern.shape[-1])
    far = (queries[:, None] - j[None, :] >= 4) & (j != 0) & (j != sep)   # (Q, T)
    return (pattern[:, queries, :] * far).sum(axis=-1)
    ### END SOLUTION
''')

check("check_far_back_weight", '''
# Visible checks for far_back_weight. Texts of 12 positions, <sep> at 3, query positions qs = the description 4..11.
T, sep = 12, 3
qs = np.arange(sep + 1, T)
markers_only = np.zeros((T, T))
markers_only[:, 0] = 0.5
markers_only[sep:, sep] = 0.5
markers_only[:sep, 0] = 1.0
four_back, three_back = np.zeros((T, T)), np.zeros((T, T))
for i in range(T):
    four_back[i, max(i - 4, 0)] = 1.0
    three_back[i, max(i - 3, 0)] = 1.0
far = np.asarray(far_back_weight(np.stack([markers_only, four_back, three_back]), sep, qs))
assert far.shape == (3, len(qs)), f"3 heads and {len(qs)} query positions gave shape {far.shape}, expected (heads, Q) = (3, {len(qs)})"
assert np.allclose(far[0], 0), "weight on <s> and <sep> counted as far back: leave out positions 0 and sep"
for q, i in enumerate(qs):
    wanted = 0.0 if i - 4 in (0, sep) else 1.0
    assert abs(far[1, q] - wanted) < 1e-12, (
        f"query {i} puts all its weight on position {i - 4}, 4 back: far back weight must be {wanted:.0f} "
        f"({'a marker' if wanted == 0 else 'i - j >= 4 counts'}), got {far[1, q]:.2f}"
    )
assert np.allclose(far[2], 0), "weight 3 positions back counted as far: a four-token window still sees 3 back, use i - j >= 4"
rng = np.random.default_rng(109)
pattern = np.tril(rng.random((2, T, T)))
pattern /= pattern.sum(-1, keepdims=True)
some = np.asarray(far_back_weight(pattern, sep, qs[::2]))
assert some.shape == (2, len(qs[::2])) and ((some >= 0) & (some <= 1)).all(), (
    "with some query positions only, return one value per head and per given query, each between 0 and 1"
)
print("far_back_weight: visible checks passed")
''')

md("s8_marker_task", """
### Write `marker_weight(pattern, sep, queries)`

* **Signature:** `marker_weight(pattern, sep, queries)`, arguments as for `far_back_weight`.
* **Returns:** shape `(heads, Q)`: for each head and query position *i*, the weight on the two markers,
  `pattern[h, i, 0] + pattern[h, i, sep]`.
""")

answer("marker_weight", '''
def marker_weight(pattern, sep, queries):
    """pattern (heads, T, T) -> (heads, Q): for each query i, the weight on <s> (position 0) plus <sep> (position sep)."""
    ### BEGIN SOLUTION
    pattern = np.asarray(pattern, dtype=float)
    queries = np.asarray(queries, dtype=int)
    return pattern[:, queries, 0] + pattern[:, queries, sep]
    ### END SOLUTION
''')

check("check_marker_weight", '''
# Visible checks for marker_weight, on the made-up text of the previous check.
T, sep = 12, 3
qs = np.arange(sep + 1, T)
markers_only = np.zeros((T, T))
markers_only[:, 0] = 0.5
markers_only[sep:, sep] = 0.5
markers_only[:sep, 0] = 1.0
itself = np.eye(T)
previous = np.zeros((T, T))
previous[0, 0] = 1.0
previous[np.arange(1, T), np.arange(T - 1)] = 1.0
got = np.asarray(marker_weight(np.stack([markers_only, itself, previous]), sep, qs))
assert got.shape == (3, len(qs)), f"got shape {got.shape}, expected (heads, Q) = (3, {len(qs)})"
assert np.allclose(got[0], 1), "a head that puts everything on <s> and <sep> must score 1: add the weight on position 0 and on position sep"
assert np.allclose(got[1], 0), "a head that looks only at the current token must score 0 on the markers"
wanted = np.array([1.0 if i - 1 == sep else 0.0 for i in qs])
assert np.allclose(got[2], wanted), (
    "a previous-token head has marker weight 1 only at the first description token (its previous token is <sep>): "
    "use the weight at column sep, the position of <sep>"
)
print("marker_weight: visible checks passed")
''')

md("s8_even_far_task", """
### Write `even_far_back_weight(sep, queries)`

* **Signature:** `even_far_back_weight(sep, queries)`, `queries` a 1-D int array of Q positions.
* **Returns:** shape `(Q,)`: what `far_back_weight` gives for an even spread, for each query position *i*:
  the number of positions *j* = 0 … *i* with *i* − *j* ≥ 4 and *j* ∉ {0, `sep`}, divided by *i* + 1.
""")

answer("even_far_back_weight", '''
def even_far_back_weight(sep, queries):
    """(Q,): for each query i, the count of j in 0..i with i - j >= 4 and j not 0 or sep, divided by i + 1."""
    ### BEGIN SOLUTION
    queries = np.asarray(queries, dtype=int)
    j = np.arange(queries.max() + 1 if queries.size else 0)
    far = (queries[:, None] - j[None, :] >= 4) & (j != 0) & (j != sep)
    return far.sum(axis=1) / (queries + 1)
    ### END SOLUTION
''')

check("check_even_far_back_weight", '''
# Visible checks for even_far_back_weight: it must agree with far_back_weight on an even-spread pattern.
for T, sep in [(12, 3), (40, 9)]:
    qs = np.arange(sep + 1, T)
    even = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    got = np.asarray(even_far_back_weight(sep, qs))
    assert got.shape == (len(qs),), f"got shape {got.shape}, expected one value per query position, ({len(qs)},)"
    mine = np.asarray(far_back_weight(even[None], sep, qs))[0]
    for i, a, b in zip(qs, got, mine):
        assert abs(a - b) < 1e-9, (
            f"query {i} (sep = {sep}): even_far_back_weight gives {a:.4f}, your far_back_weight of an even spread {b:.4f}: "
            "count the positions j <= i - 4 that are not 0 or sep, and divide by i + 1"
        )
    assert ((got >= 0) & (got < 1)).all(), "an even spread's far-back weight is a share of the visible positions: between 0 and 1"
print("even_far_back_weight: visible checks passed")
''')

md("s8_even_marker_task", """
### Write `even_marker_weight(queries)`

* **Signature:** `even_marker_weight(queries)`, `queries` a 1-D int array of Q positions, each at or after `<sep>`.
* **Returns:** shape `(Q,)`: what `marker_weight` gives for an even spread at position *i*, two markers each
  weighted 1/(*i* + 1).
""")

answer("even_marker_weight", '''
def even_marker_weight(queries):
    """(Q,): the marker weight of an even spread, 2 / (i + 1) for each query position i."""
    ### BEGIN SOLUTION
    return 2.0 / (np.asarray(queries, dtype=float) + 1)
    ### END SOLUTION
''')

check("check_even_marker_weight", '''
# Visible checks for even_marker_weight: it must agree with marker_weight on an even-spread pattern.
T, sep = 20, 5
qs = np.arange(sep + 1, T)
even = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
got = np.asarray(even_marker_weight(qs))
assert got.shape == (len(qs),), f"got shape {got.shape}, expected ({len(qs)},): one value per query position"
mine = np.asarray(marker_weight(even[None], sep, qs))[0]
assert np.allclose(got, mine), (
    "even_marker_weight disagrees with your marker_weight of an even spread: position i spreads 1 over i + 1 "
    "positions, two of which are markers"
)
print("even_marker_weight: visible checks passed")
''')

code("s8_run", """
end_id = index[transformer.END]
far, on_markers = np.zeros(layers), np.zeros(layers)      # per layer, summed over description tokens
even_far = even_markers = 0.0
tokens_measured = 0
for text_ids, text_sep in texts:
    wanted = description_positions(text_ids, text_sep, end_id)
    if len(wanted) == 0:
        continue                                            # a product with no description
    _, text_patterns = transformer.forward(text_ids, keep=True)
    for layer, pattern in enumerate(text_patterns):         # each (heads, T, T)
        far[layer] += np.asarray(far_back_weight(pattern, text_sep, wanted)).mean(axis=0).sum()
        on_markers[layer] += np.asarray(marker_weight(pattern, text_sep, wanted)).mean(axis=0).sum()
    even_far += float(np.sum(even_far_back_weight(text_sep, wanted)))
    even_markers += float(np.sum(even_marker_weight(wanted)))
    tokens_measured += len(wanted)
far, on_markers = far / tokens_measured, on_markers / tokens_measured
even_far, even_markers = even_far / tokens_measured, even_markers / tokens_measured

print(f"description tokens measured: {tokens_measured:,} in {len(texts)} validation products")
print("average weight of a description token, heads averaged, beside an even spread:")
for layer in range(layers):
    print(f"  layer {layer + 1}: 4 or more back {far[layer]:.2f} (even {even_far:.2f})   "
          f"on <s> and <sep> {on_markers[layer]:.2f} (even {even_markers:.2f})")
print(f"  all layers: 4 or more back {far.mean():.2f} (even {even_far:.2f})   "
      f"on <s> and <sep> {on_markers.mean():.2f} (even {even_markers:.2f})")

_, ax = plt.subplots(figsize=(9, 3.5))
spots = np.arange(layers)
ax.bar(spots - 0.2, far, 0.4, label="4 or more back")
ax.bar(spots + 0.2, on_markers, 0.4, label="<s> and <sep>")
ax.axhline(even_far, color="C0", ls="--", label="even spread, 4 or more back")
ax.axhline(even_markers, color="C1", ls="--", label="even spread, markers")
ax.set_xticks(spots, [f"layer {l + 1}" for l in range(layers)])
ax.set_ylim(0, 1)
ax.set_ylabel("average weight")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
plt.show()
""")

md("s8_after", """
An even spread would put most of a description token's weight far back, simply because most of what it can see
is far back. The heads put less there, favouring nearby tokens, as you would expect for predicting the next word,
and still send a large share past the window, which no window model can use. The markers get more than an
even spread would give them although they predict no word: a row of weights must sum to 1, so a head with
nothing useful to find has to put its weight somewhere, and larger models are known to dump it on the first
tokens ("attention sinks"); `<sep>` also marks where the description starts. These numbers can't tell the two
reasons apart. Report marker weight separately, as here, so it never passes for long-range attention.
""")

# ---------------------------------------------------------------------------------------------------------
# 9. Production
# ---------------------------------------------------------------------------------------------------------

md("s9_intro", """
## 9. What goes wrong in production

**Your task:** write `safe_softmax`, which survives both large scores and fully masked rows; then look at
what a mask applied after softmax does, and explain it in writing.

Three failures that don't crash:

* **Overflow.** `np.exp(1000)` is `inf`, and `inf / inf` is NaN. Subtracting each row's largest score first
  avoids it.
* **A fully masked row.** The causal mask always leaves a position itself, but a mask that hides padding can
  hide a whole row. Then every score is −∞, the row's maximum is −∞, and −∞ − (−∞) is NaN, which spreads
  through every later layer. The decision taken here: such a position attends to nothing, so its weights are
  all zero (and its output is the zero vector).
* **A mask applied to the weights after softmax** instead of to the scores before it: see the demonstration below.

(Two more, without code: attention's cost grows with the square of the text's length, so models cap it, 160
tokens for the store's model; and heavy weight on a marker or separator usually means a head has nothing to
do there, not that the marker matters.)

### Write `safe_softmax(scores)`

* **Signature:** `safe_softmax(scores)`, `scores` of any shape, entries finite or `-np.inf`.
* **Returns:** the same shape: like `softmax` along the last axis, with no overflow, and a row whose entries
  are **all** `-np.inf` gives all-zero weights, never NaN.
""")

answer("safe_softmax", '''
def safe_softmax(scores):
    """Softmax along the last axis that never overflows, and gives all-zero weights to a row that is entirely -inf."""
    ### BEGIN SOLUTION
    scores = np.asarray(scores, dtype=float)
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isneginf(top), 0.0, top)          # a fully masked row: shift by 0 instead of -inf
    exps = np.exp(scores - top)
    total = exps.sum(axis=-1, keepdims=True)
    return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)
    ### END SOLUTION
''')

check("check_safe_softmax", '''
# Visible checks for safe_softmax.
import warnings

scores = np.array([[1000.0, 999.0, -1000.0],
                   [-np.inf, -np.inf, -np.inf],
                   [0.3, -np.inf, 0.1]])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")                     # judge the result, not the warnings on the way
    weights = np.asarray(safe_softmax(scores))
assert weights.shape == scores.shape, f"safe_softmax returned shape {weights.shape} for {scores.shape}"
assert not np.isnan(weights).any(), (
    f"NaN in rows {sorted(set(np.argwhere(np.isnan(weights))[:, 0].tolist()))}: subtract each row's maximum, and "
    "for a fully masked row (maximum -inf) subtract 0 instead; divide only where the row's total is above 0"
)
assert np.isfinite(weights).all(), "inf in the weights: subtract each row's largest score before np.exp"
assert (weights[1] == 0).all(), f"the fully masked row gave {weights[1]}, expected all zeros: it attends to nothing"
for i in [0, 2]:
    assert abs(weights[i].sum() - 1) < 1e-12, f"row {i} sums to {weights[i].sum():.3f}: rows with a visible score must sum to 1"
assert weights[2, 1] == 0.0 and weights[0, 0] > weights[0, 1] > weights[0, 2] >= 0, (
    "-inf must get exactly 0, and larger scores larger weights"
)
rng = np.random.default_rng(110)
stacked = rng.normal(size=(2, 4, 5))
stacked[1, 2] = -np.inf                                 # one head, one position: fully masked
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    w3 = np.asarray(safe_softmax(stacked))
assert w3.shape == (2, 4, 5) and (w3[1, 2] == 0).all(), "with a heads axis, the fully masked row must still give zeros: work along axis=-1"
rows = np.ones((2, 4), dtype=bool)
rows[1, 2] = False
assert np.allclose(w3.sum(-1)[rows], 1), "the other rows must be unaffected by a fully masked one, each summing to 1"
print("safe_softmax: visible checks passed")
''')

md("s9_demo", """
**A fully masked row, and a mask applied after softmax.** The first part hides every position from one row,
as a padding mask can, and compares your two softmax functions. The second part computes the weights without
a mask and zeroes the later positions afterwards, on the four tokens of section 1; then it repeats section 2's
leak test on that version.
""")

code("s9_run", """
import warnings

padded = np.where(np.array([True, True, False])[:, None], np.array([[0.2, 1.5, -0.3]] * 3), -np.inf)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print("padding hides row 2 completely; softmax:     ", np.asarray(softmax(padded))[2])
print("                              safe_softmax:", np.asarray(safe_softmax(padded))[2])
print()


def mask_after_softmax(x_rows):
    \"\"\"The wrong order: softmax over every position, then zero the later ones.\"\"\"
    q, k, v = x_rows @ w_query, x_rows @ w_key, x_rows @ w_value
    wrong = softmax(q @ k.T / np.sqrt(q.shape[-1])) * causal_mask(len(x_rows))
    return wrong, wrong @ v


wrong, wrong_output = mask_after_softmax(x)
right, right_output = attention(queries, keys, values, causal_mask(4))
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
show_weights(right, tokens, title="mask on the scores, before softmax", ax=axes[0])
show_weights(wrong, tokens, title="mask on the weights, after softmax", ax=axes[1])
plt.tight_layout()
plt.show()
print("row sums, mask before softmax:", np.asarray(right).sum(axis=1))
print("row sums, mask after softmax: ", np.asarray(wrong).sum(axis=1))
_, wrong_changed = mask_after_softmax(changed)          # section 2's other last token
print("output at coffee changes when the last token changes, mask after softmax:",
      bool(not np.allclose(wrong_output[2], wrong_changed[2])))
""")

md("s9_question", """
**Written answer** (graded by hand, 1 point): in three to five sentences, explain what the right-hand heatmap
and the printed lines show. Why don't the rows sum to 1 when the mask comes after softmax? Why does the output at
`coffee` still depend on the last token, although its weight on `table` is 0? Why would this bug be hard to
notice during training?
""")

written("answer_mask_after_softmax", """
Softmax was taken over all four positions, so each row's total of 1 was shared with the later positions too;
zeroing those afterwards removes their share, and the rows that had weight on later tokens now sum to less than 1
(only the last row, which had no later position, is untouched). The leak survives through the denominator: every
earlier weight was divided by a sum that includes exp(score) of the later tokens, so changing `table` changes
coffee's weights on `<s>`, `sled` and itself, and so its output, even though the weight on `table` is exactly 0.
The model can therefore still read the future (the size of a row's total tells it about later tokens), training
runs without errors and the loss may even look good, so only a check such as rows summing to 1 or the leak test
reveals it. The fix is to set the masked scores to -inf before softmax.
""")

md("closing", """
## What you built

* Attention as a weighted average: queries meet keys, softmax makes weights, the output averages the values.
* The causal mask, on the scores before softmax, checked by exact zeros and by the leak test.
* Scaling by √d, which keeps untrained heads from collapsing onto one key.
* Multi-head attention: heads in shares of the numbers, joined and projected back; weights `(heads, T, T)`.
* Your attention running the store's model, a hypothesis read from its weights, and a test of it by changing
  the input.
* Head statistics measured over 300 products, always beside an even spread: previous-token weight, weight 4 or
  more tokens back, and marker weight, counted separately.
* A softmax that survives overflow and fully masked rows, and why the mask must come before softmax.
""")


def build() -> nbformat.NotebookNode:
    graded = [c.metadata["nbgrader"] for c in cells if c.metadata["nbgrader"]["grade"]]
    found = {m["grade_id"]: m["points"] for m in graded}
    expected = {**CHECK_POINTS, **WRITTEN_POINTS}
    if found != expected:
        raise ValueError(f"graded cells {found} disagree with the points table {expected}")
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    nbformat.validate(notebook)
    return notebook


if __name__ == "__main__":
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build(), TARGET)
    print(f"wrote {TARGET.relative_to(HERE.parent)}: {len(cells)} cells, "
          f"{AUTO_TOTAL} points graded automatically + {WRITTEN_TOTAL} by hand = {AUTO_TOTAL + WRITTEN_TOTAL}")
