"""The store's model, driven from the grader: the student's attention in every head of the model, and the student's
head statistics over the recorded patterns (sections 2, 7 and 8)."""

from __future__ import annotations

import numpy as np

from autograder import model
from autograder.checks import (
    ATOL,
    Budget,
    Call,
    Mapped,
    Result,
    StudentFailed,
    Unavailable,
    close,
    driven_result,
    largest_difference,
)

# --- the store's model, driven from the grader ----------------------------------------------------------


def forward_with_attention(student, function: str, ids, seconds: float) -> Result:
    """The store's model's logits (T, V) with the student's ``function`` (attention) in every head, as written
    (no stand-ins)."""
    from lib import transformer

    if not (model.MODEL_DIR / "weights.npz").exists():
        return Result(model.UNAVAILABLE)
    budget, returned = Budget(seconds), []

    def students_attention(*args, **kwargs):
        if budget.left <= 0:
            raise StudentFailed(f"attention used up the {seconds:g} s of CPU time for driving the model")
        result = budget.charge(*student(function, args, kwargs, (), 2, budget.left))
        returned.extend(result.returned)
        return result.values

    try:
        logits = transformer.forward(np.asarray(ids, dtype=np.int64), attention=students_attention)
    except StudentFailed as failure:
        return Result(str(failure))
    except Exception as error:  # noqa: BLE001 - what the student returned did not fit the model
        return Result(f"the store's model could not use what your attention returned ({type(error).__name__}: {error})")
    return driven_result(logits, returned)


def over_model_patterns(
    student, function: str, index, queries, offsets, per: str, layers: int, heads: int, seconds: float
) -> Result:
    """The student's statistic over every recorded text's patterns: (layers, heads, N).

    index: (texts, 3) rows (offset into the flat patterns file, T, sep); text t's description positions
    are queries[offsets[t]:offsets[t+1]]. Each text's layers go in one call, stacked as layers * heads
    heads. per: "head" (F(pattern) -> (heads,), one column per text) or "query" (F(pattern, sep,
    queries) -> (heads, Q), one column per description token; a text without one is left out, as
    the reference's head_statistics leaves it out). The patterns reach the runner as Mapped arguments: it reads
    them from the patterns file (the model's attention on these texts: inputs, not answers), not the pipe.
    """
    patterns = str(model.cache().file)
    stacked, budget, columns, returned, texts = layers * heads, Budget(seconds), [], [], []
    for text, (offset, positions, sep) in enumerate(np.asarray(index).tolist()):
        mine = np.asarray(queries[offsets[text] : offsets[text + 1]])
        if per == "query" and not len(mine):
            continue
        pattern = Mapped(patterns, offset, stacked * positions * positions, (stacked, positions, positions))
        args, expected = (
            ((pattern,), (stacked,)) if per == "head" else ((pattern, int(sep), mine.copy()), (stacked, len(mine)))
        )
        texts.append((text, positions, args, expected))
    # the texts' calls do not depend on each other: sent at once, with the seconds for them all (after the first
    # that fails, none is made); judged below one by one, in order, as if made one after the other
    made = student.many(function, [(args, {}) for _, _, args, _ in texts], (), 1, seconds)
    try:
        for (text, positions, _, expected), outcome in zip(texts, made):
            if budget.left <= 0:
                raise StudentFailed(
                    f"{function} used up its {seconds:g} s of CPU time before the last of the model's texts"
                )
            result = budget.charge(*outcome)
            where = f"for the model's text {text}, its {layers} layers' patterns stacked as {stacked} heads"
            if tuple(result.values[0].shape) != expected:
                raise StudentFailed(
                    f"returned shape {tuple(result.values[0].shape)} {where} "
                    f"{(stacked, positions, positions)}; expected {expected}"
                )
            returned.extend(result.returned)
            columns.append(result.values[0].reshape(layers, heads, -1))
    except StudentFailed as failure:
        return Result(str(failure))
    return driven_result(np.concatenate(columns, axis=-1), returned)


# --- head statistics ----------------------------------------------------------------------------


def model_call(function, per):
    """The call that applies ``function`` to every layer's pattern of the recorded texts (or None without the model)."""
    if not model.available():
        return None
    measured = model.cache()
    return Call(
        function,
        (measured.index, measured.queries, measured.offsets),
        {"per": per, "layers": measured.layers, "heads": measured.heads},
        slow=6.0,
        drive=over_model_patterns,
        files=(str(measured.file),),
        role="model",
        about=f"{function} on every layer's pattern of the recorded texts",
    )


def with_model(calls, function, per):
    extra = model_call(function, per)
    return calls + ([extra] if extra else [])


def recorded_judge(key, message):
    """A judge comparing the student's statistic over the recorded texts with head_statistics.json[key].

    The runner returns (layers, heads, N): one column per text for previous_token_weight (the
    record averages over texts), one per description token for far_back_weight (the record
    averages over all description tokens). Either way the record is the mean over the last axis.
    """

    def judge(out):
        if not out.numbers("model"):
            raise Unavailable(model.UNAVAILABLE)
        gap = model.cache().record_gap
        if gap > ATOL:
            raise Unavailable(
                "not available: data/model/head_statistics.json does not belong to the model and catalogue "
                f"here (lib's own statistics differ from it by {gap:.3g}); re-record it (recordings/transformer.py)"
            )
        number = out.number("model")
        actual = out.value(number).mean(axis=-1)  # (layers, heads)
        expected = model.recorded_statistics()[key]
        if close(actual, expected, out.tolerance(number)):
            return None
        return f"{message} ({largest_difference(actual, expected)}; the recorded values are rounded to 6 decimals)"

    return judge
