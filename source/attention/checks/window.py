"""Section 8, reaching past the window: check_description_positions, check_far_back_weight, check_marker_weight,
check_even_far_back_weight and check_even_marker_weight."""

from __future__ import annotations

import numpy as np

from autograder.checks import (
    ATOL,
    Call,
    Check,
    Shaped,
    checks_by_id,
    close,
    compare,
    describe_call,
    diagnose,
    largest_difference,
    mistake,
    require_shape,
)
from autograder.coverage import Cover, Size

from .driven import recorded_judge, with_model
from .inputs import (
    causal_pattern,
    designed,
    ref,
    sizes,
    window_pattern_case,
    window_size,
)


def token_ids(rng, count, avoid) -> list[int]:
    choices = np.setdiff1d(np.arange(3, 60), avoid)
    return [int(x) for x in rng.choice(choices, size=count)]


def text_ids(rng, name, description, ends, end=None):
    """(ids, sep, end_id): <s> name <sep> description <end>*ends, as random token ids (the end marker's id ``end``
    when given); ids a list of ints, as the task says (a function written with ids.index is right)."""
    markers = np.setdiff1d(np.arange(60, 90), [] if end is None else [end])
    bos, sep_id, drawn_end = (int(x) for x in rng.choice(markers, size=3, replace=False))
    end = drawn_end if end is None else end
    words = token_ids(rng, name + description, [bos, sep_id, end])
    return [bos, *words[:name], sep_id, *words[name:], *[end] * ends], name + 1, end


TEXT_COVERS = {  # the end marker's id drawn as small as a position: a function that compares positions with it loses
    "name, description, ends": Cover(
        {"name": Size(0, 6), "description": Size(0, 12), "ends": Size(0, 3), "end": Size(1, 24)},
        pairs=(("name", "description"), ("sep", "end"), ("length", "end")),
        derived={
            "sep": lambda drawn: drawn["name"] + 1,
            "length": lambda drawn: drawn["name"] + drawn["description"] + drawn["ends"] + 2,
        },
    )
}


def description_calls(rng):
    cases = [
        (int(rng.integers(2, 6)), int(rng.integers(3, 10)), 1),  # a normal text
        (int(rng.integers(2, 6)), int(rng.integers(3, 10)), 3),  # padded with end markers
        (int(rng.integers(2, 6)), 0, 1),  # no description
        (int(rng.integers(2, 6)), int(rng.integers(3, 10)), 0),  # cut before <end>
        (int(rng.integers(2, 6)), window_size(rng), 1),  # a text as long as the model's window, or longer
    ]
    cases.append(cases[0])  # the first text's shape again, with other token ids
    designs = designed(rng, TEXT_COVERS, "name, description, ends")
    calls = []
    chosen = [(*case, None, {}) for case in cases]
    chosen += [(d["name"], d["description"], d["ends"], d["end"], d) for d in designs]
    for name, description, ends, end_id, drawn in chosen:
        ids, sep, end = text_ids(rng, name, description, ends, end_id)
        calls.append(Call("description_positions", (ids, sep, end), drawn=drawn))
    return calls


def description_values(out):
    for number in out.numbers():
        ids, sep, end = out.calls[number].args
        ids = np.asarray(ids)  # drawn as a list, as the task says
        actual, expected = out.value(number), ref.description_positions(ids, sep, end)
        if close(actual, expected, out.tolerance(number)):
            continue
        after = np.arange(sep + 1, len(ids))
        return diagnose(
            actual,
            [
                ("includes the end marker's position: leave out positions whose token is end_id", lambda: after),
                (
                    "starts at sep: <sep> is a marker, the description starts at sep + 1",
                    lambda: np.arange(sep, len(ids))[ids[sep:] != end],
                ),
                ("returned the token ids at those positions: return the positions themselves", lambda: ids[expected]),
                (
                    "returned one True/False per token: return the positions where it is True (np.flatnonzero)",
                    lambda: (np.arange(len(ids)) > sep) & (ids != end),
                ),
                (
                    (
                        "dropped the last position whether or not it is <end>: leave out exactly the positions whose"
                        " token is end_id"
                    ),
                    lambda: after[:-1],
                ),
            ],
            f"{describe_call(out.calls[number])} returned {np.asarray(actual).tolist()}, expected positions"
            f" {expected.tolist()}",
            out.tolerance(number),
        )
    return None


# far-back and marker weights --------------------------------------------------------------------------


def pattern_case(rng, low, high):
    """(pattern, sep, queries) of a random text: a causal pattern and its description positions."""
    heads, positions = sizes(rng, 2, 5, 1)[0], int(rng.integers(low, high))
    sep = int(rng.integers(2, 6))
    return causal_pattern(rng, heads, positions), sep, np.arange(sep + 1, positions)


TEXT_PATTERN = Cover(  # queries: the description's positions, sep + 1 .. T - 1, none to many
    {"heads": Size(1, 5), "positions": Size(2, 20), "sep": Size(1, 7)},
    pairs=(("heads", "sep"), ("sep", "queries")),
    where=lambda drawn: drawn["sep"] < drawn["positions"],
    derived={"queries": lambda drawn: drawn["positions"] - drawn["sep"] - 1},
)
PATTERN_TEXT_COVERS = {"heads, positions, sep": TEXT_PATTERN}


def designed_patterns(rng, function: str, **keywords) -> list[Call]:
    """``function`` on the designed patterns (TEXT_PATTERN: one head, as many heads as sep and not, sep odd and
    even and 1, texts odd and even in length), each with its description positions."""
    calls = []
    for drawn in designed(rng, PATTERN_TEXT_COVERS, "heads, positions, sep"):
        pattern = causal_pattern(rng, drawn["heads"], drawn["positions"])
        queries = np.arange(drawn["sep"] + 1, drawn["positions"])
        calls.append(Call(function, (pattern, drawn["sep"], queries), drawn=drawn, **keywords))
    return calls


def marker_only_pattern(rng):
    """A pattern whose far-back queries put all weight on a marker: <s> for even rows, <sep> for odd rows."""
    heads, positions, sep = int(rng.integers(2, 4)), int(rng.integers(12, 17)), int(rng.integers(2, 5))
    pattern = causal_pattern(rng, heads, positions)
    queries = np.arange(sep + 4, positions)
    for i in queries:
        pattern[:, i] = 0.0
        pattern[:, i, 0 if i % 2 == 0 else sep] = 1.0
    return pattern, sep, queries


def far_back_calls(rng):
    pattern, sep, queries = pattern_case(rng, 12, 21)
    markers = marker_only_pattern(rng)
    again = causal_pattern(rng, pattern.shape[0], pattern.shape[-1])  # the same shape, other values
    return with_model(
        [
            Call("far_back_weight", (pattern, sep, queries), role="random"),
            Call("far_back_weight", (again, sep, queries.copy()), role="random"),
            Call("far_back_weight", window_pattern_case(rng), role="random"),
            Call("far_back_weight", markers, role="markers only"),
            *designed_patterns(rng, "far_back_weight", role="random"),
        ],
        "far_back_weight",
        "query",
    )


def far_back_rule(queries, sep, positions, distance=4, markers=(True, True), strict=False):
    """(Q, T) True where j counts as far back from query i, with knobs for the known mistakes."""
    j = np.arange(positions)
    gap = queries[:, None] - j[None, :]
    far = gap > distance if strict else gap >= distance
    if markers[0]:
        far &= j[None, :] != 0
    if markers[1]:
        far &= j[None, :] != sep
    return far


def far_back_variants(pattern, sep, queries):
    positions = pattern.shape[-1]
    rows = pattern[:, queries, :]

    def total(**knobs):
        return lambda: (rows * far_back_rule(queries, sep, positions, **knobs)).sum(-1)

    return [
        ("counted positions 5 or more back (i - j > 4): 4 back is far too (i - j >= 4)", total(strict=True)),
        ("counted positions 3 back (i - j >= 3): far back starts at 4 (i - j >= 4)", total(distance=3)),
        (
            "counted the markers <s> (0) and <sep> as far back: leave them out, marker_weight reports them",
            total(markers=(False, False)),
        ),
        ("counted <sep> as far back: leave out both markers, positions 0 and sep", total(markers=(True, False))),
        (
            "counted <s> (position 0) as far back: leave out both markers, positions 0 and sep",
            total(markers=(False, True)),
        ),
    ]


def far_back_values(out):
    for number in out.numbers("random"):
        pattern, sep, queries = out.calls[number].args
        actual, expected = out.value(number), ref.far_back_weight(pattern, sep, queries)
        message = mistake(
            out,
            number,
            actual,
            expected,
            far_back_variants(pattern, sep, queries),
            f"{describe_call(out.calls[number])}: {largest_difference(actual, expected)} from the weight on j with "
            "i - j >= 4, j not 0 or sep",
        )
        if message:
            return message
    return None


def far_back_markers(out):
    number = out.number("markers only")
    pattern, sep, queries = out.calls[number].args
    actual = out.value(number)
    require_shape(actual, (pattern.shape[0], len(queries)), "the result on a pattern that looks only at the markers")
    counted = sorted(
        {"<s> (0)" if i % 2 == 0 else "<sep>" for i, column in zip(queries, actual.T) if np.abs(column).max() > ATOL}
    )
    if counted:
        return (
            f"on a pattern whose far queries look only at the markers, {' and '.join(counted)} counted as far back:"
            " leave out positions 0 and sep"
        )
    return None


def a_text_pattern(rng, heads, positions, sep, queries):
    """(pattern, sep, queries) of a designed text (TEXT_PATTERN): a causal pattern and its description positions."""
    return causal_pattern(rng, heads, positions), sep, np.arange(sep + 1, positions)


MARKER = compare(  # the simple tier: marker_weight against the reference, its two mistakes named
    "check_marker_weight",
    ref.marker_weight,
    points=1,
    inputs={"values": Shaped(a_text_pattern, TEXT_PATTERN), "past the model's window": window_pattern_case},
    mistakes={
        "counts only <s> (position 0): add the weight on <sep> (position sep)": lambda pattern, sep, queries: pattern[
            :, queries, 0
        ],
        "counts only <sep>: add the weight on <s> (position 0)": lambda pattern, sep, queries: pattern[:, queries, sep],
    },
)


SPAN_COVERS = {
    "sep, end": Cover(
        {"sep": Size(1, 8), "end": Size(2, 40)},
        pairs=(("sep", "end"), ("sep", "queries")),
        where=lambda drawn: drawn["end"] > drawn["sep"],
        derived={"queries": lambda drawn: drawn["end"] - drawn["sep"] - 1},  # sep + 1 .. end - 1: none to many
    )
}


def spread(sep, queries, denominator=1, **knobs) -> np.ndarray:
    """An even pattern's far-back weight with far_back_rule's knobs (a known mistake): count / (i + denominator)."""
    return far_back_rule(queries, sep, int(queries.max()) + 1, **knobs).sum(1) / (queries + denominator)


def designed_span(rng, sep, end, queries):
    """(sep, the description positions sep + 1 .. end - 1) of a designed text (SPAN_COVERS)."""
    return sep, np.arange(sep + 1, end)


def scattered_positions(rng):
    """(sep, six description positions picked apart from each other), some past a short text's end."""
    sep, end = int(rng.integers(2, 7)), int(rng.integers(15, 41))
    return sep, np.sort(rng.choice(np.arange(sep + 1, 2 * end), 6, replace=False))


def sep_past_the_window(rng):
    """(sep, the description positions of a text as long as the model's window, or longer)."""
    sep = int(rng.integers(2, 7))
    return sep, np.arange(sep + 1, window_size(rng))


EVEN_FAR_BACK = compare(  # the simple tier: even_far_back_weight against the reference, its five mistakes named
    "check_even_far_back_weight",
    ref.even_far_back_weight,
    points=1,
    inputs={
        "values": Shaped(designed_span, SPAN_COVERS["sep, end"]),
        "scattered description positions": scattered_positions,
        "past the model's window": sep_past_the_window,
    },
    mistakes={
        "counted positions 5 or more back (i - j > 4): 4 back is far too (i - j >= 4)": lambda sep, queries: spread(
            sep, queries, strict=True
        ),
        "counted the markers (positions 0 and sep): leave them out of the count": lambda sep, queries: spread(
            sep, queries, markers=(False, False)
        ),
        "counted <sep>: leave out both markers, positions 0 and sep": lambda sep, queries: spread(
            sep, queries, markers=(True, False)
        ),
        "counted <s> (position 0): leave out both markers, positions 0 and sep": lambda sep, queries: spread(
            sep, queries, markers=(False, True)
        ),
        "divided by i: position i sees i + 1 positions (0..i)": lambda sep, queries: spread(sep, queries, 0),
    },
)


def description_span(rng, sep, end, queries):
    """The description positions sep + 1 .. end - 1 of a designed text (SPAN_COVERS)."""
    return (np.arange(sep + 1, end),)


def span_past_the_window(rng):
    """The description positions of a text as long as the model's window, or longer."""
    return (np.arange(int(rng.integers(2, 7)) + 1, window_size(rng)),)


EVEN_MARKER = compare(  # the simple tier: even_marker_weight against the reference, its two mistakes named
    "check_even_marker_weight",
    ref.even_marker_weight,
    points=1,
    inputs={
        "values": Shaped(description_span, SPAN_COVERS["sep, end"]),
        "past the model's window": span_past_the_window,
    },
    mistakes={
        "one marker's weight: there are two markers, <s> and <sep>, each with 1 / (i + 1)": lambda queries: (
            1 / (queries + 1)
        ),
        "divided by i: position i sees i + 1 positions (0..i)": lambda queries: 2 / queries,
    },
)


CHECKS = checks_by_id(
    Check(
        "check_description_positions",
        "description_positions",
        1,
        description_calls,
        (("values (end marker out)", description_values),),
        TEXT_COVERS,
    ),
    Check(
        "check_far_back_weight",
        "far_back_weight",
        2,
        far_back_calls,
        (
            ("values", far_back_values),
            ("markers excluded", far_back_markers),
            (
                "matches recorded statistics",
                recorded_judge(
                    "far",
                    "on the store's model, the average over all description tokens differs from head_statistics.json",
                ),
            ),
        ),
        PATTERN_TEXT_COVERS,
    ),
    MARKER,
    EVEN_FAR_BACK,
    EVEN_MARKER,
)
