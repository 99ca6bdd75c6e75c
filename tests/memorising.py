"""Submissions that remember instead of computing, built from the bundled full solution (examples/submissions).

Each variant is the full solution with one answer cell's function wrapped, as a student might after seeing which
inputs the checks use: right on the sizes, shapes or calls it expects, wrong elsewhere. It must lose points on its
own check (``Variant.check``) and nowhere else, except what ``Variant.also`` names (the properties that use the
student's function as written, by design: contracts.md, "Isolation").

    sources = answer_sources(variant_notebook(VARIANTS["causal_mask_leaks_past_64"]))
"""

from __future__ import annotations

from dataclasses import dataclass

import nbformat
from hostile import load

# the masked attention check drives the store's model with the student's attention as written, so a softmax that
# goes wrong also changes the model's logits there: that property's share (4 / 5) is lost too
MODEL_PROPERTY = ("check_masked_attention",)


@dataclass(frozen=True)
class Variant:
    function: str  # the function wrapped, in the answer cell that defines it
    wrapper: str  # code appended to that cell: it rebinds the function's name
    check: str  # the check that must lose points
    also: tuple = ()  # other checks that may lose points (the model driven by the student's attention)
    why: str = ""


def leaks_past(size: int) -> Variant:
    return Variant(
        "causal_mask",
        f"""
_right_causal_mask = causal_mask


def causal_mask(positions):
    mask = _right_causal_mask(positions)
    if positions > {size}:
        mask = np.ones((positions, positions), dtype=bool)  # beyond the sizes it expects, every position leaks
    return mask
""",
        "check_causal_mask",
        why=f"right up to {size} positions, every later position visible beyond",
    )


def cached_by_shape(function: str, parameters: str, key: str) -> Variant:
    return Variant(
        function,
        f"""
_right_{function} = {function}
_answers_{function} = {{}}


def {function}({parameters}):
    key = {key}
    if key not in _answers_{function}:
        _answers_{function}[key] = _right_{function}({parameters})
    return _answers_{function}[key]  # the first answer again for every input of the same shape
""",
        f"check_{function}",
        why="returns its first answer again for every input of the same shape",
    )


def wrong_from_call(count: int) -> Variant:
    return Variant(
        "softmax",
        f"""
_right_softmax = softmax
_softmax_calls = [0]


def softmax(scores):
    _softmax_calls[0] += 1
    weights = _right_softmax(scores)
    return weights if _softmax_calls[0] < {count} else weights[..., ::-1]  # each row reversed from call {count} on
""",
        "check_softmax",
        also=MODEL_PROPERTY,
        why=f"right on its first {count - 1} calls after its definition, wrong afterwards",
    )


IN_PLACE = Variant(
    "softmax",
    """
def softmax(scores):
    scores -= scores.max(axis=-1, keepdims=True)  # changes the caller's array
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores
""",
    "",  # right values: no points lost, only the note
    why="computes the right softmax in the caller's array (scores -= ...): a note, no points lost",
)

VARIANTS = {
    "causal_mask_leaks_past_32": leaks_past(32),
    "causal_mask_leaks_past_64": leaks_past(64),
    "causal_mask_leaks_past_100": leaks_past(100),
    "split_heads_cached_by_shape": cached_by_shape("split_heads", "x, heads", "(np.shape(x), heads)"),
    "join_heads_cached_by_shape": cached_by_shape("join_heads", "x", "np.shape(x)"),
    "softmax_wrong_from_call_3": wrong_from_call(3),
    "softmax_wrong_from_call_5": wrong_from_call(5),
    "softmax_in_place": IN_PLACE,
}


def variant_notebook(variant: Variant):
    """The full solution with ``variant.wrapper`` appended to the answer cell that defines its function."""
    notebook = load("full_solution")
    for cell in notebook.cells:
        solution = cell.get("metadata", {}).get("nbgrader", {}).get("solution", False)
        if cell.cell_type == "code" and solution and f"def {variant.function}(" in cell.source:
            cell.source = cell.source.rstrip("\n") + "\n\n" + variant.wrapper.strip("\n") + "\n"
            return notebook
    raise LookupError(f"no answer cell defines {variant.function}")


def write(variant: Variant) -> bytes:
    return nbformat.writes(variant_notebook(variant)).encode("utf-8")
