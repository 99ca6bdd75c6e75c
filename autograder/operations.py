"""The graded functions, lib's reference of each, and which graded functions each may call while it is graded.

- REFERENCES: for each graded function, lib's function that computes the same operation (the grader's
  yardstick, and what a stand-in computes);
- ISOLATE: the other graded functions a graded function may call; while it is graded they are computed
  by the grader with lib (stand-ins), so that a mistake loses points on its own exercise only.

Reference names are "module.function" inside lib, e.g. "attention.softmax" is lib.attention.softmax.
Nothing here is imported by the runner: the student's process holds no reference (autograder/runner.py).
"""

from __future__ import annotations

import importlib

import numpy as np

REFERENCES = {
    "softmax": "attention.softmax",
    "attention": "attention.attention",
    "causal_mask": "attention.causal_mask",
    "average_largest_weight": "attention.average_largest_weight",
    "split_heads": "attention.split_heads",
    "join_heads": "attention.join_heads",
    "multi_head_attention": "attention.multi_head_attention",
    "previous_token_weight": "heads.previous_token_weight",
    "even_previous_weight": "heads.even_previous_weight",
    "description_positions": "heads.description_positions",
    "far_back_weight": "heads.far_back_weight",
    "marker_weight": "heads.marker_weight",
    "even_far_back_weight": "heads.even_far_back_weight",
    "even_marker_weight": "heads.even_marker_weight",
    "safe_softmax": "attention.softmax",
}

GRADED = tuple(REFERENCES)

# graded function -> the other graded functions it may call, computed by the grader while it is graded
# (contracts.md, "Isolation"). safe_softmax gets the textbook softmax (TEXTBOOK): lib's softmax already is
# a safe softmax, so handing it over would hand over the answer.
ISOLATE = {
    "attention": ("softmax",),
    "average_largest_weight": ("softmax", "attention"),
    "multi_head_attention": ("softmax", "attention", "causal_mask", "split_heads", "join_heads"),
    "safe_softmax": ("softmax",),
    "even_previous_weight": ("previous_token_weight",),  # the statistic of an even pattern
    "even_marker_weight": ("marker_weight",),
}

# The special call that runs the store's model with the student's attention in every head.
FORWARD_WITH_ATTENTION = "forward_with_attention"
# The special call that applies a graded function to every layer's pattern of the recorded texts.
OVER_MODEL_PATTERNS = "over_model_patterns"


def textbook_softmax(scores):
    """Softmax over the last axis with the row maximum subtracted; a fully masked row gives NaN."""
    scores = np.asarray(scores, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return exps / exps.sum(axis=-1, keepdims=True)


TEXTBOOK = {("safe_softmax", "softmax"): textbook_softmax}


def reference(function: str):
    """lib's function that computes graded ``function``'s operation."""
    module, name = REFERENCES[function].split(".")
    return getattr(importlib.import_module(f"lib.{module}"), name)


def stand_in_for(graded: str, name: str):
    """What ``graded`` gets when it calls graded function ``name`` while it is graded (ISOLATE's names only)."""
    if name not in ISOLATE.get(graded, ()):
        raise KeyError(f"{graded} may not call a stand-in for {name}")
    return TEXTBOOK.get((graded, name)) or reference(name)
