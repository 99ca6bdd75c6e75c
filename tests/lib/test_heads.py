"""Tests for lib.heads: every statistic on small patterns whose answer is known by hand."""

import numpy as np
import pytest

from lib.heads import (
    description_positions,
    even_far_back_weight,
    even_marker_weight,
    even_previous_weight,
    far_back_weight,
    head_statistics,
    marker_weight,
    previous_token_weight,
)

END = 99


def even_pattern(positions, heads=2):
    """Every position spreads its weight evenly over itself and everything before it."""
    visible = np.tril(np.ones((positions, positions)))
    return np.broadcast_to(visible / visible.sum(1, keepdims=True), (heads, positions, positions)).copy()


def one_hot_pattern(positions, targets, heads=1):
    """Position i puts all its weight on targets[i]."""
    pattern = np.zeros((heads, positions, positions))
    pattern[:, np.arange(positions), targets] = 1.0
    return pattern


def previous_pattern(positions, heads=1):
    """All weight on the previous token (position 0 on itself)."""
    return one_hot_pattern(positions, np.maximum(np.arange(positions) - 1, 0), heads)


# --- previous token -------------------------------------------------------------------


def test_previous_token_pattern_gives_exactly_one():
    np.testing.assert_array_equal(previous_token_weight(previous_pattern(6, heads=3)), [1.0, 1.0, 1.0])


def test_self_attending_pattern_gives_zero_previous_weight():
    assert previous_token_weight(one_hot_pattern(5, np.arange(5)))[0] == 0.0


def test_previous_weight_by_hand_and_per_head():
    pattern = np.stack([previous_pattern(4)[0], one_hot_pattern(4, np.arange(4))[0]])
    pattern[1, 2] = [0.0, 0.5, 0.5, 0.0]  # position 2 puts half on position 1
    # head 1: positions 1, 2, 3 put 0, 0.5, 0 on their previous token -> mean 0.5 / 3
    np.testing.assert_allclose(previous_token_weight(pattern), [1.0, 0.5 / 3])


def test_even_pattern_gives_exactly_the_even_previous_baseline():
    for positions in [2, 3, 7, 40]:
        np.testing.assert_allclose(previous_token_weight(even_pattern(positions)), even_previous_weight(positions))
    assert even_previous_weight(2) == 0.5
    assert even_previous_weight(3) == pytest.approx((1 / 2 + 1 / 3) / 2)


# --- description positions ------------------------------------------------------------


def test_description_positions_skip_name_markers_and_end():
    #        <s>  name  name <sep> d   d   <end>
    ids = [1, 10, 11, 2, 20, 21, END]
    np.testing.assert_array_equal(description_positions(ids, 3, END), [4, 5])
    assert description_positions([1, 10, 2, END], 2, END).size == 0
    assert description_positions([1, 10, 2], 2, END).size == 0
    assert description_positions(ids, 3, END).dtype.kind == "i"


# --- far back and markers -------------------------------------------------------------


def test_far_back_counts_four_back_but_not_three_back():
    # sep = 1, query position 8: 3 back is position 5, 4 back is position 4
    four_back = one_hot_pattern(9, np.r_[np.zeros(8, int), 4])
    three_back = one_hot_pattern(9, np.r_[np.zeros(8, int), 5])
    np.testing.assert_array_equal(far_back_weight(four_back, 1, [8]), [[1.0]])
    np.testing.assert_array_equal(far_back_weight(three_back, 1, [8]), [[0.0]])


def test_markers_are_excluded_from_far_back_and_counted_as_markers():
    # query 9, sep 3: both <s> (9 back) and <sep> (6 back) are far, but they are markers
    pattern = np.zeros((2, 10, 10))
    pattern[0, 9, 0] = 1.0  # head 0: all on <s>
    pattern[1, 9, [3, 4]] = 0.5  # head 1: half on <sep>, half on a far description token
    np.testing.assert_array_equal(far_back_weight(pattern, 3, [9]), [[0.0], [0.5]])
    np.testing.assert_array_equal(marker_weight(pattern, 3, [9]), [[1.0], [0.5]])


def test_far_and_marker_weight_by_hand_for_several_queries():
    # sep = 2, T = 8. Query 5: far positions are j <= 1 minus the marker 0 -> {1}.
    # Query 7: j <= 3 minus markers {0, 2} -> {1, 3}.
    pattern = even_pattern(8, heads=1)
    np.testing.assert_allclose(far_back_weight(pattern, 2, [5, 7]), [[1 / 6, 2 / 8]])
    np.testing.assert_allclose(marker_weight(pattern, 2, [5, 7]), [[2 / 6, 2 / 8]])
    np.testing.assert_allclose(even_far_back_weight(2, [5, 7]), [1 / 6, 2 / 8])
    np.testing.assert_allclose(even_marker_weight([5, 7]), [2 / 6, 2 / 8])


def test_even_pattern_gives_exactly_the_even_far_and_marker_baselines():
    sep, positions = 4, 30
    queries = np.arange(sep + 1, positions)
    pattern = even_pattern(positions, heads=3)
    far = far_back_weight(pattern, sep, queries)
    markers = marker_weight(pattern, sep, queries)
    assert far.shape == markers.shape == (3, queries.size)
    np.testing.assert_allclose(far, np.broadcast_to(even_far_back_weight(sep, queries), far.shape))
    np.testing.assert_allclose(markers, np.broadcast_to(even_marker_weight(queries), markers.shape))


def test_near_queries_have_no_far_back_positions():
    # sep = 1: query 4 has far position j = 0 only, which is a marker -> 0
    np.testing.assert_array_equal(even_far_back_weight(1, [2, 3, 4, 5]), [0, 0, 0, 0])
    # query 6, sep 1: j in {0, 1, 2} minus markers -> {2}
    assert even_far_back_weight(1, [6])[0] == 1 / 7


def test_pattern_functions_keep_leading_axes():
    pattern = np.stack([even_pattern(10, heads=4)] * 3)  # (layers, heads, T, T)
    assert previous_token_weight(pattern).shape == (3, 4)
    assert far_back_weight(pattern, 2, [6, 7, 8]).shape == (3, 4, 3)
    assert marker_weight(pattern, 2, [6, 7, 8]).shape == (3, 4, 3)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="at least 2 positions"):
        previous_token_weight(np.ones((1, 1, 1)))
    with pytest.raises(ValueError, match="square"):
        previous_token_weight(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="at least 2 positions"):
        even_previous_weight(1)
    with pytest.raises(ValueError, match="past the end"):
        far_back_weight(even_pattern(5), 5, [4])
    with pytest.raises(ValueError, match=">= 1"):
        marker_weight(even_pattern(5), 0, [4])
    with pytest.raises(ValueError, match="must lie in 0..4"):
        far_back_weight(even_pattern(5), 2, [5])
    with pytest.raises(TypeError, match="integer positions"):
        marker_weight(even_pattern(5), 2, [3.0])
    with pytest.raises(ValueError, match="both markers"):
        even_marker_weight([0, 3])


# --- head_statistics ------------------------------------------------------------------

LAYERS, HEADS = 3, 2


def even_forward(ids, keep=False):
    assert keep is True
    patterns = [even_pattern(len(ids), HEADS) for _ in range(LAYERS)]
    return np.zeros((len(ids), 5)), patterns


TEXTS = [
    ([1, 10, 11, 2, 20, 21, 22, 23, 24, 25, END], 3),  # 6 description tokens
    ([1, 12, 2, END], 2),  # no description
    ([1, 10, 2, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39], 2),  # 10 description tokens, cut before <end>
]


def test_head_statistics_on_even_patterns_equals_the_even_baselines():
    stats = head_statistics(TEXTS, even_forward, END)
    assert stats["texts"] == 3 and stats["tokens"] == 16 and stats["described"] == 2
    for key in ["previous", "far", "markers"]:
        assert stats[key].shape == (LAYERS, HEADS)
        np.testing.assert_allclose(stats[key], stats[key + "_even"])

    # the baselines, averaged the way the contract says
    previous_even = np.mean([even_previous_weight(len(ids)) for ids, _ in TEXTS])
    assert stats["previous_even"] == pytest.approx(previous_even)
    queries = [description_positions(ids, sep, END) for ids, sep in TEXTS]
    far_even = sum(even_far_back_weight(sep, q).sum() for (_, sep), q in zip(TEXTS, queries)) / 16
    markers_even = sum(even_marker_weight(q).sum() for q in queries) / 16
    assert stats["far_even"] == pytest.approx(far_even)
    assert stats["markers_even"] == pytest.approx(markers_even)


def test_head_statistics_is_token_weighted_and_per_layer():
    def forward(ids, keep=False):
        # layer 0: all on the previous token; layer 1: all on <s>; head 1 of layer 2: all on <sep>
        positions = len(ids)
        sep = ids.index(2)
        prev = previous_pattern(positions, HEADS)
        start = one_hot_pattern(positions, np.zeros(positions, int), HEADS)
        third = start.copy()
        third[1] = one_hot_pattern(positions, np.minimum(np.arange(positions), sep))[0]
        return None, [prev, start, third]

    stats = head_statistics(TEXTS, forward, END)
    np.testing.assert_array_equal(stats["previous"][0], [1.0, 1.0])
    np.testing.assert_array_equal(stats["far"][0], [0.0, 0.0])  # 1 back is never far
    np.testing.assert_array_equal(stats["markers"][1], [1.0, 1.0])  # <s> is a marker, not far
    np.testing.assert_array_equal(stats["far"][1], [0.0, 0.0])
    np.testing.assert_array_equal(stats["markers"][2], [1.0, 1.0])


def test_head_statistics_errors():
    with pytest.raises(ValueError, match="at least one"):
        head_statistics([], even_forward, END)
    with pytest.raises(ValueError, match="none of the 1 texts has a description token"):
        head_statistics([([1, 12, 2, END], 2)], even_forward, END)

    def wrong_forward(ids, keep=False):
        return None, [np.ones((HEADS, 3, 3))]

    with pytest.raises(ValueError, match="expected each layer's pattern"):
        head_statistics(TEXTS, wrong_forward, END)
