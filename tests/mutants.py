"""Mutants: the classic wrong implementations of each graded function, as small edits of the solution.

Each mutant is one edit of one answer cell of the source notebook's solution (source/attention/attention.ipynb),
the way a student gets it wrong, with the message fragment each check that loses must show, written by hand.
tests/source/test_mutants.py grades each one and checks that its named mistake, and only its, fires;
tests/source/test_seed_invariance.py grades them under many seeds and checks that every check's points stay
the same.

    mutated = MUTANTS["attention: weights @ keys"].sources(solution)   # the answer cells with the mistake
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ATTENTION_CHECKS = ("check_attention", "check_masked_attention")


@dataclass(frozen=True)
class Mutant:
    """In ``function``'s answer cell, ``old`` (found there) replaced by ``new``.

    says: {check id: a fragment of that check's feedback that names the mistake (or a tuple of them)}, for every
    check of the function that must lose points, and only those; drives: True when the store's model, run with the
    student's attention as written (the softmax it calls included), also notices (check_masked_attention's "drives
    the store's model"); keeps: True for a change that is not a mistake (a float32 computation, a different but
    right formula): every check keeps full marks.
    """

    name: str
    function: str
    old: str
    new: str
    says: dict = field(default_factory=dict)
    drives: bool = False
    keeps: bool = False

    def fragments(self, check_id: str) -> tuple[str, ...]:
        said = self.says.get(check_id, ())
        return (said,) if isinstance(said, str) else tuple(said)

    def sources(self, solution: list[str]) -> list[str]:
        index = cell_of(solution, self.function)
        assert self.old in solution[index], (
            f"the solution of {self.function} no longer holds {self.old!r}: update {self.name}"
        )
        changed = list(solution)
        changed[index] = solution[index].replace(self.old, self.new)
        return changed


def cell_of(sources: list[str], function: str) -> int:
    """The index of the answer cell that defines ``function``."""
    found = [i for i, source in enumerate(sources) if re.search(rf"^def {function}\(", source, re.M)]
    assert len(found) == 1, f"expected one answer cell defining {function}, found {len(found)}"
    return found[0]


SOFTMAX_ROWS = "scores.max(axis=-1, keepdims=True)"
ATTENTION_MASK = "np.where(mask, scores, -np.inf)"
SPLIT = "x.reshape(positions, heads, width // heads).transpose(1, 0, 2)"
SAFE_DIVIDE = "np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)"
DTYPE = "the checks accept float64, or float32 within its rounding"

LIST = [
    # --- softmax ---------------------------------------------------------------------------------------------
    Mutant(
        "softmax: over axis 0",
        "softmax",
        "axis=-1",
        "axis=0",
        {"check_softmax": "softmax over axis 0"},
        drives=True,
    ),
    Mutant(
        "softmax: sums over axis 0",
        "softmax",
        "exps.sum(axis=-1, keepdims=True)",
        "exps.sum(axis=0, keepdims=True)",
        {"check_softmax": "divided by a column's total"},
        drives=True,
    ),
    Mutant(
        "softmax: no max subtracted",
        "softmax",
        "np.exp(scores - top)",
        "np.exp(scores)",
        {"check_softmax": "np.exp(1000) overflows"},
    ),
    Mutant(
        "softmax: the column's max subtracted",
        "softmax",
        SOFTMAX_ROWS,
        "scores.max(axis=-2, keepdims=True)",
        {"check_softmax": ("subtract each row's own maximum", "NaN on the rows near -1000 only")},
        drives=True,
    ),
    Mutant(
        "softmax: the max over axis 1",  # the row's maximum on (T, T) scores, a column's once a heads axis is in front
        "softmax",
        SOFTMAX_ROWS,
        "scores.max(axis=1, keepdims=True)",
        {"check_softmax": "subtract each row's own maximum"},
        drives=True,
    ),
    Mutant(
        "softmax: max without keepdims",
        "softmax",
        SOFTMAX_ROWS,
        "scores.max(axis=-1)",
        {"check_softmax": "must keep their axis to broadcast"},
        drives=True,
    ),
    Mutant(
        "softmax: the whole array's total",
        "softmax",
        "exps.sum(axis=-1, keepdims=True)",
        "exps.sum()",
        {"check_softmax": "whole array sums to 1"},
        drives=True,
    ),
    Mutant(
        "softmax: no division",
        "softmax",
        "return exps / exps.sum(axis=-1, keepdims=True)",
        "return exps",
        {"check_softmax": "without dividing by the row total"},
        drives=True,
    ),
    Mutant(
        "softmax: float16",
        "softmax",
        "np.asarray(scores, dtype=float)",
        "np.asarray(scores, dtype=np.float16)",
        {"check_softmax": DTYPE},
        drives=True,
    ),
    Mutant("softmax: float32", "softmax", "dtype=float)", "dtype=np.float32)", keeps=True),
    Mutant(
        "softmax: the whole array's max",
        "softmax",
        SOFTMAX_ROWS,
        "scores.max()",
        {"check_softmax": "NaN on the rows near -1000 only"},
    ),
    Mutant(
        "softmax: the row's mean subtracted",
        "softmax",
        SOFTMAX_ROWS,
        "scores.mean(axis=-1, keepdims=True)",
        {"check_softmax": "NaN where a row holds -inf"},
        drives=True,
    ),
    # --- attention -------------------------------------------------------------------------------------------
    Mutant(
        "attention: no sqrt(d)",
        "attention",
        " / np.sqrt(d)",
        "",
        {"check_attention": "unscaled scores", "check_masked_attention": "unscaled scores"},
    ),
    Mutant(
        "attention: divided by d",
        "attention",
        "/ np.sqrt(d)",
        "/ d",
        {"check_attention": "divided by d", "check_masked_attention": "divided by d"},
    ),
    Mutant(
        "attention: times sqrt(d)",
        "attention",
        "/ np.sqrt(d)",
        "* np.sqrt(d)",
        {"check_attention": "multiplied by sqrt(d)", "check_masked_attention": "multiplied by sqrt(d)"},
    ),
    Mutant(
        "attention: d from the values",
        "attention",
        "d = queries.shape[-1]",
        "d = values.shape[-1]",
        {"check_attention": "divided by sqrt(dv)", "check_masked_attention": "divided by sqrt(dv)"},
    ),
    Mutant(
        "attention: d from the number of keys",
        "attention",
        "d = queries.shape[-1]",
        "d = keys.shape[-2]",
        {"check_attention": "number of keys", "check_masked_attention": "number of keys"},
    ),
    Mutant(
        "attention: weights transposed",
        "attention",
        "return weights, weights @ values",
        "return np.swapaxes(weights, -1, -2), weights @ values",
        {"check_attention": "transposed", "check_masked_attention": "transposed"},
    ),
    Mutant(
        "attention: weights @ keys",
        "attention",
        "return weights, weights @ values",
        "return weights, weights @ keys",
        {"check_attention": "weights @ keys", "check_masked_attention": "weights @ keys"},
    ),
    Mutant(
        "attention: keys.T",
        "attention",
        "np.swapaxes(keys, -1, -2)",
        "keys.T",
        {"check_attention": "keys.T", "check_masked_attention": "keys.T"},
    ),
    Mutant(
        "attention: mask after softmax",
        "attention",
        "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)                  # hidden"
        " positions: weight exactly 0\n    weights = softmax(scores)\n",
        "    weights = softmax(scores)\n    if mask is not None:\n        weights = weights * mask\n",
        {"check_masked_attention": "zeroed afterwards"},
    ),
    Mutant(
        "attention: mask with -1e9",
        "attention",
        ATTENTION_MASK,
        "np.where(mask, scores, -1e9)",
        {"check_masked_attention": "large negative number"},
    ),
    Mutant(
        "attention: mask with -1e4",
        "attention",
        ATTENTION_MASK,
        "np.where(mask, scores, -1e4)",
        {"check_masked_attention": "large negative number"},
    ),
    Mutant(
        "attention: masked scores 0",
        "attention",
        ATTENTION_MASK,
        "np.where(mask, scores, 0.0)",
        {"check_masked_attention": "set to 0, which still gets weight"},
    ),
    Mutant(
        "attention: mask the wrong way round",
        "attention",
        ATTENTION_MASK,
        "np.where(mask, -np.inf, scores)",
        {"check_masked_attention": "wrong way round"},
    ),
    Mutant(
        "attention: mask ignored",
        "attention",
        ATTENTION_MASK,
        "scores",
        {"check_masked_attention": "ignore the mask"},
    ),
    Mutant(
        "attention: always causal",
        "attention",
        "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)",
        "    if True:\n        scores = np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)",
        {"check_attention": "no mask was given", "check_masked_attention": "not the mask given"},
    ),
    # --- causal_mask -----------------------------------------------------------------------------------------
    Mutant(
        "causal_mask: upper triangle",
        "causal_mask",
        "np.tril(",
        "np.triu(",
        {"check_causal_mask": "above the diagonal"},
    ),
    Mutant(
        "causal_mask: no diagonal",
        "causal_mask",
        "dtype=bool))",
        "dtype=bool), -1)",
        {"check_causal_mask": "diagonal is False"},
    ),
    Mutant("causal_mask: floats", "causal_mask", "dtype=bool", "dtype=float", {"check_causal_mask": "not bool"}),
    Mutant(
        "causal_mask: True where hidden",
        "causal_mask",
        "np.tril(np.ones((positions, positions), dtype=bool))",
        "np.triu(np.ones((positions, positions), dtype=bool), 1)",
        {"check_causal_mask": "True where a position must NOT look"},
    ),
    Mutant(
        "causal_mask: a comparison of positions",
        "causal_mask",
        "np.tril(np.ones((positions, positions), dtype=bool))",
        "np.arange(positions)[None, :] <= np.arange(positions)[:, None]",
        keeps=True,
    ),
    # --- average_largest_weight ------------------------------------------------------------------------------
    Mutant(
        "average_largest_weight: max down a column",
        "average_largest_weight",
        ".max(axis=-1)",
        ".max(axis=0)",
        {"check_average_largest_weight": "max down a column"},
    ),
    Mutant(
        "average_largest_weight: ignores scaled",
        "average_largest_weight",
        "if scaled:",
        "if True:",
        {"check_average_largest_weight": "ignores `scaled`"},
    ),
    Mutant(
        "average_largest_weight: never scaled",
        "average_largest_weight",
        "if scaled:",
        "if False:",
        {"check_average_largest_weight": "not divided by sqrt(d)"},
    ),
    Mutant(
        "average_largest_weight: divided by d",
        "average_largest_weight",
        "np.sqrt(queries.shape[-1])",
        "queries.shape[-1]",
        {"check_average_largest_weight": "divided by d"},
    ),
    Mutant(
        "average_largest_weight: every weight averaged",
        "average_largest_weight",
        "softmax(scores).max(axis=-1).mean()",
        "softmax(scores).mean()",
        {"check_average_largest_weight": "averaged every weight"},
    ),
    Mutant(
        "average_largest_weight: largest scores",
        "average_largest_weight",
        "softmax(scores).max(axis=-1).mean()",
        "scores.max(axis=-1).mean()",
        {"check_average_largest_weight": "averaged the largest scores"},
    ),
    # --- split_heads / join_heads ----------------------------------------------------------------------------
    Mutant(
        "split_heads: reshape(heads, T, d)",
        "split_heads",
        SPLIT,
        "x.reshape(heads, positions, width // heads)",
        {"check_split_heads": ("x.reshape(heads, T, d)", "(head 0, position 1 holds row 0, columns")},
    ),
    Mutant(
        "split_heads: strided columns",
        "split_heads",
        SPLIT,
        "x.reshape(positions, width // heads, heads).transpose(2, 0, 1)",
        {"check_split_heads": ("every heads-th column", "(head 0, position 0 holds row 0, columns 0, ")},
    ),
    Mutant(
        "split_heads: heads axis second",
        "split_heads",
        SPLIT,
        "x.reshape(positions, heads, width // heads)",
        {"check_split_heads": "put the heads axis first"},
    ),
    Mutant(
        "split_heads: stacked column blocks", "split_heads", SPLIT, "np.stack(np.split(x, heads, axis=1))", keeps=True
    ),
    Mutant(
        "join_heads: reshape without transposing",
        "join_heads",
        "x.transpose(1, 0, 2).reshape",
        "x.reshape",
        {"check_join_heads": "mixes positions"},
    ),
    Mutant(
        "join_heads: interleaved",
        "join_heads",
        "x.transpose(1, 0, 2).reshape",
        "x.transpose(1, 2, 0).reshape",
        {"check_join_heads": "interleaved"},
    ),
    # --- multi_head_attention --------------------------------------------------------------------------------
    Mutant(
        "multi_head_attention: no output projection",
        "multi_head_attention",
        "join_heads(mixed) @ w_output",
        "join_heads(mixed)",
        {"check_multi_head_attention": "without the output projection"},
    ),
    Mutant(
        "multi_head_attention: w_output @",
        "multi_head_attention",
        "join_heads(mixed) @ w_output",
        "(w_output @ join_heads(mixed).T).T",
        {"check_multi_head_attention": "w_output @"},
    ),
    Mutant(
        "multi_head_attention: no causal mask",
        "multi_head_attention",
        "values, causal_mask(x.shape[0]))",
        "values)",
        {"check_multi_head_attention": "later positions"},
    ),
    Mutant(
        "multi_head_attention: W.T",
        "multi_head_attention",
        "split_heads(x @ w_query, heads)              # (heads, T, d)\n    keys = split_heads(x @ w_key, heads)",
        "split_heads(x @ w_query.T, heads)\n    keys = split_heads(x @ w_key.T, heads)",
        {"check_multi_head_attention": "W.T"},
    ),
    Mutant(
        "multi_head_attention: scaled by sqrt(D)",
        "multi_head_attention",
        "    weights, mixed = attention(queries, keys, values, causal_mask(x.shape[0]))\n",
        "    scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(x.shape[1])\n"
        "    scores = np.where(causal_mask(x.shape[0]), scores, -np.inf)\n"
        "    weights = softmax(scores)\n"
        "    mixed = weights @ values\n",
        {"check_multi_head_attention": "not by sqrt(d) of one head"},
    ),
    # --- previous_token_weight / even_previous_weight --------------------------------------------------------
    Mutant(
        "previous_token_weight: the diagonal",
        "previous_token_weight",
        "pattern[:, rows, rows - 1]",
        "pattern[:, rows, rows]",
        {"check_previous_token_weight": "weight on itself"},
    ),
    Mutant(
        "previous_token_weight: two back",
        "previous_token_weight",
        "pattern[:, rows, rows - 1]",
        "pattern[:, rows[1:], rows[1:] - 2]",
        {"check_previous_token_weight": "two positions back"},
    ),
    Mutant(
        "previous_token_weight: row and column swapped",
        "previous_token_weight",
        "pattern[:, rows, rows - 1]",
        "pattern[:, rows - 1, rows]",
        {"check_previous_token_weight": "returns zeros whatever the input"},
    ),
    Mutant(
        "previous_token_weight: position 0 included",
        "previous_token_weight",
        "pattern[:, rows, rows - 1].mean(axis=-1)",
        "pattern[:, rows, rows - 1].sum(axis=-1) / pattern.shape[-1]",
        {"check_previous_token_weight": "including position 0"},
    ),
    Mutant(
        "previous_token_weight: summed",
        "previous_token_weight",
        "pattern[:, rows, rows - 1].mean(axis=-1)",
        "pattern[:, rows, rows - 1].sum(axis=-1)",
        {"check_previous_token_weight": "average it"},
    ),
    Mutant(
        "previous_token_weight: the diagonal below",
        "previous_token_weight",
        "pattern[:, rows, rows - 1].mean(axis=-1)",
        "np.diagonal(pattern, offset=-1, axis1=1, axis2=2).mean(axis=-1)",
        keeps=True,
    ),
    Mutant(
        "even_previous_weight: 1 / i",
        "even_previous_weight",
        "np.arange(2, positions + 1)",
        "np.arange(1, positions)",
        {"check_even_previous_weight": "used 1 / i"},
    ),
    Mutant(
        "even_previous_weight: position 0 included",
        "even_previous_weight",
        "np.arange(2, positions + 1)",
        "np.arange(1, positions + 1)",
        {"check_even_previous_weight": "leave out position 0"},
    ),
    Mutant(
        "even_previous_weight: summed",
        "even_previous_weight",
        "np.mean(1.0 /",
        "np.sum(1.0 /",
        {"check_even_previous_weight": "average it"},
    ),
    Mutant(
        "even_previous_weight: 1 / T",
        "even_previous_weight",
        "float(np.mean(1.0 / np.arange(2, positions + 1)))",
        "1.0 / positions",
        {"check_even_previous_weight": "1 / T for every position"},
    ),
    # --- description_positions -------------------------------------------------------------------------------
    Mutant(
        "description_positions: end marker kept",
        "description_positions",
        "return after[ids[after] != end_id]",
        "return after",
        {"check_description_positions": "includes the end marker"},
    ),
    Mutant(
        "description_positions: starts at sep",
        "description_positions",
        "np.arange(sep + 1, len(ids))",
        "np.arange(sep, len(ids))",
        {"check_description_positions": "starts at sep"},
    ),
    Mutant(
        "description_positions: token ids",
        "description_positions",
        "return after[ids[after] != end_id]",
        "return ids[after[ids[after] != end_id]]",
        {"check_description_positions": "returned the token ids"},
    ),
    Mutant(
        "description_positions: last position dropped",
        "description_positions",
        "return after[ids[after] != end_id]",
        "return after[:-1]",
        {"check_description_positions": "dropped the last position"},
    ),
    # --- far_back_weight / marker_weight ---------------------------------------------------------------------
    Mutant(
        "far_back_weight: > 4",
        "far_back_weight",
        ">= 4",
        "> 4",
        {"check_far_back_weight": "i - j > 4"},
    ),
    Mutant(
        "far_back_weight: >= 3",
        "far_back_weight",
        ">= 4",
        ">= 3",
        {"check_far_back_weight": "i - j >= 3"},
    ),
    Mutant(
        "far_back_weight: markers counted",
        "far_back_weight",
        " & (j != 0) & (j != sep)",
        "",
        {"check_far_back_weight": "counted the markers"},
    ),
    Mutant(
        "far_back_weight: <sep> counted",
        "far_back_weight",
        " & (j != 0) & (j != sep)",
        " & (j != 0)",
        {"check_far_back_weight": "counted <sep>"},
    ),
    Mutant(
        "far_back_weight: <s> counted",
        "far_back_weight",
        " & (j != 0) & (j != sep)",
        " & (j != sep)",
        {"check_far_back_weight": "counted <s>"},
    ),
    Mutant(
        "far_back_weight: columns",
        "far_back_weight",
        "(pattern[:, queries, :] * far)",
        "(np.swapaxes(pattern, -1, -2)[:, queries, :] * far)",
        {"check_far_back_weight": "returns zeros whatever the input"},
    ),
    Mutant(
        "marker_weight: only <s>",
        "marker_weight",
        " + pattern[:, queries, sep]",
        "",
        {"check_marker_weight": "only <s>"},
    ),
    Mutant(
        "marker_weight: only <sep>",
        "marker_weight",
        "pattern[:, queries, 0] + ",
        "",
        {"check_marker_weight": "only <sep>"},
    ),
    Mutant(
        "marker_weight: columns",
        "marker_weight",
        "pattern[:, queries, 0] + pattern[:, queries, sep]",
        "pattern[:, 0, queries] + pattern[:, sep, queries]",
        {"check_marker_weight": "returns zeros whatever the input"},
    ),
    # --- even_far_back_weight / even_marker_weight -----------------------------------------------------------
    Mutant(
        "even_far_back_weight: markers counted",
        "even_far_back_weight",
        " & (j != 0) & (j != sep)",
        "",
        {"check_even_far_back_weight": "counted the markers"},
    ),
    Mutant(
        "even_far_back_weight: > 4",
        "even_far_back_weight",
        ">= 4",
        "> 4",
        {"check_even_far_back_weight": "i - j > 4"},
    ),
    Mutant(
        "even_far_back_weight: divided by i",
        "even_far_back_weight",
        "/ (queries + 1)",
        "/ queries",
        {"check_even_far_back_weight": "divided by i"},
    ),
    Mutant(
        "even_marker_weight: one marker",
        "even_marker_weight",
        "2.0 /",
        "1.0 /",
        {"check_even_marker_weight": "one marker"},
    ),
    Mutant(
        "even_marker_weight: divided by i",
        "even_marker_weight",
        "dtype=float) + 1)",
        "dtype=float))",
        {"check_even_marker_weight": "divided by i"},
    ),
    # --- safe_softmax ----------------------------------------------------------------------------------------
    Mutant(
        "safe_softmax: NaN for a masked row",
        "safe_softmax",
        SAFE_DIVIDE,
        "exps / total",
        {"check_safe_softmax": "gives NaN"},
    ),
    Mutant(
        "safe_softmax: 1/n for a masked row",
        "safe_softmax",
        SAFE_DIVIDE,
        "np.where(total > 0, exps / np.where(total > 0, total, 1), 1 / exps.shape[-1])",
        {"check_safe_softmax": "1/n everywhere"},
    ),
    Mutant(
        "safe_softmax: no max subtracted",
        "safe_softmax",
        "np.exp(scores - top)",
        "np.exp(scores)",
        {"check_safe_softmax": "subtract each row's maximum"},
    ),
    Mutant(
        "safe_softmax: float16",
        "safe_softmax",
        "np.asarray(scores, dtype=float)",
        "np.asarray(scores, dtype=np.float16)",
        {"check_safe_softmax": DTYPE},
    ),
]

MUTANTS = {mutant.name: mutant for mutant in LIST}
assert len(MUTANTS) == len(LIST), "two mutants share a name"
