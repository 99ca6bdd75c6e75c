"""The graded functions, lib's reference of each, and which graded functions each may call.

One table, read by both sides of the grading:

- the runner (the student's process) turns lib's references into traps, so that a graded
  function calling lib's reference of its own operation earns nothing for it;
- the checks (the grader's process) ask for isolation, so that a graded function that calls
  another graded function is graded with lib's version of that other function, and a mistake
  loses points on its own exercise only.

Reference names are "module.function" inside lib, e.g. "attention.softmax" is
lib.attention.softmax. A name that lib does not define is simply skipped.
"""

# student function -> lib functions that compute the same operation (its "own" references).
# A helper that does the core of the work counts too (scaled_scores is the scaling step of
# attention; _far_back is the "far back" rule of both far-back statistics).
REFERENCES = {
    "softmax": ("attention.softmax",),
    "attention": ("attention.attention", "attention.scaled_scores"),
    "causal_mask": ("attention.causal_mask",),
    "average_largest_weight": ("attention.average_largest_weight", "attention.scaled_scores"),
    "split_heads": ("attention.split_heads",),
    "join_heads": ("attention.join_heads",),
    "multi_head_attention": ("attention.multi_head_attention",),
    "previous_token_weight": ("heads.previous_token_weight",),
    "even_previous_weight": ("heads.even_previous_weight",),
    "description_positions": ("heads.description_positions",),
    "far_back_weight": ("heads.far_back_weight", "heads._far_back"),
    "marker_weight": ("heads.marker_weight",),
    "even_far_back_weight": ("heads.even_far_back_weight", "heads._far_back"),
    "even_marker_weight": ("heads.even_marker_weight",),
    "safe_softmax": ("attention.softmax",),
}

GRADED = tuple(REFERENCES)

# student function -> the other graded functions it may call, replaced by lib's version while it
# is graded (contracts.md, "Isolation"). The runner never hands a function its own reference: lib's
# softmax already is a safe softmax, so safe_softmax gets the textbook softmax instead. (An
# even_far_back_weight that calls far_back_weight keeps the student's own: lib's far_back_weight
# holds the far-back rule, even_far_back_weight's own operation.)
ISOLATE = {
    "attention": ("softmax",),
    "average_largest_weight": ("softmax", "attention"),
    "multi_head_attention": ("softmax", "attention", "causal_mask", "split_heads", "join_heads"),
    "safe_softmax": ("softmax",),
    "even_previous_weight": ("previous_token_weight",),  # the statistic of an even pattern
    "even_marker_weight": ("marker_weight",),
}

# Modules of lib whose functions are references of graded functions (their source files are
# off limits to the student's process once it runs student code).
REFERENCE_MODULES = ("attention", "heads")

# The special call that runs the store's model with the student's attention in every head.
FORWARD_WITH_ATTENTION = "forward_with_attention"
# The special call that applies a graded function to every layer's pattern of the recorded texts.
OVER_MODEL_PATTERNS = "over_model_patterns"
