"""The hidden checks of the attention assignment: one Check per graded test cell of attention.ipynb, one module per
section of the notebook (weights: 1, mask: 2, scaling: 3, heads: 4, previous: 7, window: 8, production: 9), with the
draws and the driven model they share (inputs, driven) and what validate grades as wrong (wrong).

Loaded by autograder.assignments (never by the student's process, and never shipped to students: nbgrader's
CourseDirectory.ignore leaves it out of the release). Each check draws its inputs at grading time, names the
calls of the student's function to make, and judges the results with the reference: reference.py beside this
package (``ref``: the graded functions written once, never released, never in the student wheel).

The assignment's interface to the engine: CHECKS (grade id -> Check), ISOLATE (what a graded function may
call while it is graded), stand_in (what such a call computes, in the grader's process) and forward_texts (the
texts the notebook runs the store's model on, whose forward passes the grader records once per class) and
forward_probabilities (the ablation queries it runs, recorded with them).
"""

from __future__ import annotations

import numpy as np

from lib import experiments, transformer
from lib.products import product_texts

from . import heads, mask, previous, production, scaling, weights, window
from .inputs import ref
from .wrong import EQUIVALENT_MUTANTS, WRONG_VERSIONS

CACHED_TEXTS = 300  # the notebook measures heads on the first 300 validation products (sections 7 and 8)


def forward_texts() -> list:
    """The texts (token ids) every notebook runs the store's model on: the grader records lib's forward passes of
    them once per class (autograder.grading.forward), and each kernel maps them instead of recomputing them."""
    return [ids for ids, _ in product_texts("validation", CACHED_TEXTS)]


ABLATION_TEXTS = 100  # section 6 finds its copy positions in the first 100 validation products


def forward_probabilities() -> list:
    """The ablation queries every notebook runs (lib.experiments.next_token_probability's (cases, heads zeroed)):
    section 6's table (every head, each head alone, each layer's four) and section 7's two sets of early heads. The
    grader records them with the forward passes; each kernel reads them instead of recomputing them."""
    vocabulary, settings = transformer.load()[1], transformer.load()[2]["settings"]
    layer_count, head_count = settings["layers"], settings["heads"]  # `heads` is section 4's module
    cases = experiments.copy_cases(product_texts("validation", ABLATION_TEXTS), vocabulary)
    previous = experiments.recorded_head_statistics()["previous"]  # (layers, heads), as section 7 reads it
    zeroed = [None]
    zeroed += [{(layer, head)} for layer in range(layer_count) for head in range(head_count)]
    zeroed += [{(layer, head) for head in range(head_count)} for layer in range(layer_count)]
    zeroed += [{(layer, int(previous[layer].argmax())) for layer in (0, 1)}]  # layers 1-2's strongest previous-token
    zeroed += [{(layer, head) for layer in (0, 1) for head in range(head_count)}]  # all of layers 1-2
    return [(cases, heads_zeroed) for heads_zeroed in zeroed]


# graded function -> its reference in reference.py, when the names differ (the yardstick, and what a stand-in
# computes): the reference's softmax already is a safe softmax
REFERENCES = {"safe_softmax": "softmax"}

# graded function -> the other graded functions it may call, computed by the grader while it is graded
# (contracts.md, "Isolation"): a mistake loses points on its own exercise only. safe_softmax gets the textbook
# softmax: the reference's softmax already is a safe softmax, so handing it over would hand over the answer.
ISOLATE = {
    "attention": ("softmax",),
    "average_largest_weight": ("softmax", "attention"),
    "multi_head_attention": ("softmax", "attention", "causal_mask", "split_heads", "join_heads"),
    "safe_softmax": ("softmax",),
    "even_previous_weight": ("previous_token_weight",),  # the statistic of an even pattern
    "even_marker_weight": ("marker_weight",),
}


def textbook_softmax(scores):
    """Softmax over the last axis with the row maximum subtracted; a fully masked row gives NaN."""
    scores = np.asarray(scores, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return exps / exps.sum(axis=-1, keepdims=True)


TEXTBOOK = {("safe_softmax", "softmax"): textbook_softmax}


def reference(function: str):
    """The reference of graded ``function`` (reference.py)."""
    return getattr(ref, REFERENCES.get(function, function))


def stand_in(graded: str, name: str):
    """What ``graded`` gets when it calls graded function ``name`` while it is graded (ISOLATE's names only)."""
    if name not in ISOLATE.get(graded, ()):
        raise KeyError(f"{graded} may not call a stand-in for {name}")
    return TEXTBOOK.get((graded, name)) or reference(name)


CHECKS = {
    **weights.CHECKS,
    **mask.CHECKS,
    **scaling.CHECKS,
    **heads.CHECKS,
    **previous.CHECKS,
    **window.CHECKS,
    **production.CHECKS,
}

__all__ = [
    "CHECKS",
    "EQUIVALENT_MUTANTS",
    "ISOLATE",
    "REFERENCES",
    "WRONG_VERSIONS",
    "forward_probabilities",
    "forward_texts",
    "stand_in",
]
