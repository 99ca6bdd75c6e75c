"""Tests for source/attention/reference.py, the assignment's reference (the answer key, never released): the
chapter's operations (values, the mask's guarantees, scaling, heads, bad inputs) and every head statistic on small
patterns whose answer is known by hand."""

from pathlib import Path

import numpy as np
import pytest

from autograder import assignments

REFERENCE = assignments.reference(Path(__file__).resolve().parents[2] / "source" / "attention")
attention, causal_mask, join_heads = REFERENCE.attention, REFERENCE.causal_mask, REFERENCE.join_heads
multi_head_attention, scaled_scores = REFERENCE.multi_head_attention, REFERENCE.scaled_scores
softmax, split_heads = REFERENCE.softmax, REFERENCE.split_heads
description_positions, far_back_weight = REFERENCE.description_positions, REFERENCE.far_back_weight
even_far_back_weight, even_marker_weight = REFERENCE.even_far_back_weight, REFERENCE.even_marker_weight
even_previous_weight, head_statistics = REFERENCE.even_previous_weight, REFERENCE.head_statistics
marker_weight, previous_token_weight = REFERENCE.marker_weight, REFERENCE.previous_token_weight


def random_qkv(seed=0, leading=(), positions=5, size=4):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(0, 1, (*leading, positions, size)) for _ in range(3))


# --- softmax --------------------------------------------------------------------------


def test_softmax_rows_sum_to_one_and_match_the_formula():
    scores = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    weights = softmax(scores)
    expected = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    np.testing.assert_allclose(weights, expected)
    np.testing.assert_allclose(weights.sum(-1), 1.0)
    np.testing.assert_allclose(weights[1], [1 / 3, 1 / 3, 1 / 3])
    assert weights.dtype == np.float64


def test_softmax_of_huge_scores_is_finite_and_equals_shifted_scores():
    scores = np.array([[1e4, 1e4 - 1.0, 1e4 - 2.0], [-1e4, 0.0, 1e4]])
    weights = softmax(scores)
    assert np.isfinite(weights).all()
    np.testing.assert_allclose(weights, softmax(scores - scores.max(1, keepdims=True)))
    np.testing.assert_allclose(weights[0], softmax(np.array([0.0, -1.0, -2.0])))
    np.testing.assert_allclose(weights[1], [0.0, 0.0, 1.0])


def test_softmax_along_another_axis():
    scores = np.random.default_rng(1).normal(size=(3, 4))
    np.testing.assert_allclose(softmax(scores, axis=0), softmax(scores.T).T)


def test_softmax_masked_entries_get_exactly_zero_and_fully_masked_row_is_zero():
    scores = np.array([[0.5, -np.inf, 1.5], [-np.inf, -np.inf, -np.inf]])
    weights = softmax(scores)
    assert weights[0, 1] == 0.0
    np.testing.assert_allclose(weights[0].sum(), 1.0)
    assert not np.isnan(weights).any()
    assert (weights[1] == 0.0).all()


def test_softmax_rejects_nan_and_positive_infinity():
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        softmax(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        softmax(np.array([0.0, np.inf]))


# --- causal mask and attention ---------------------------------------------------------


def test_causal_mask_is_lower_triangle():
    mask = causal_mask(4)
    assert mask.dtype == np.bool_ and mask.shape == (4, 4)
    expected = np.array([[j <= i for j in range(4)] for i in range(4)])
    assert (mask == expected).all()


def test_attention_equals_the_formula_by_hand():
    queries, keys, values = random_qkv(3)
    scores = queries @ keys.T / np.sqrt(4)
    weights_by_hand = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    weights, output = attention(queries, keys, values)
    np.testing.assert_allclose(weights, weights_by_hand)
    np.testing.assert_allclose(output, weights_by_hand @ values)
    np.testing.assert_allclose(scaled_scores(queries, keys), scores)
    np.testing.assert_allclose(scaled_scores(queries, keys, scale=False), queries @ keys.T)


def test_rows_sum_to_one_and_nothing_above_the_diagonal_with_causal_mask():
    queries, keys, values = random_qkv(4, positions=6)
    weights, output = attention(queries, keys, values, mask=causal_mask(6))
    np.testing.assert_allclose(weights.sum(-1), 1.0)
    above = ~causal_mask(6)
    assert (weights[above] == 0.0).all()
    assert weights[0, 0] == 1.0  # the first position can only see itself
    assert output.shape == (6, 4)


def test_changing_a_later_token_leaves_earlier_outputs_unchanged_only_with_the_mask():
    rng = np.random.default_rng(2026)
    x = rng.normal(0, 1, (4, 8))
    w_query, w_key, w_value = (rng.normal(0, 0.5, (8, 4)) for _ in range(3))
    changed = x.copy()
    changed[3] = rng.normal(0, 1, 8)

    def outputs(inputs, mask):
        return attention(inputs @ w_query, inputs @ w_key, inputs @ w_value, mask=mask)[1]

    mask = causal_mask(4)
    np.testing.assert_array_equal(outputs(x, mask)[:3], outputs(changed, mask)[:3])
    assert not np.allclose(outputs(x, mask)[3], outputs(changed, mask)[3])
    assert not np.allclose(outputs(x, None)[:3], outputs(changed, None)[:3])


def test_mask_none_equals_an_all_true_mask():
    queries, keys, values = random_qkv(5)
    none_w, none_out = attention(queries, keys, values, mask=None)
    all_w, all_out = attention(queries, keys, values, mask=np.ones((5, 5), dtype=bool))
    np.testing.assert_array_equal(none_w, all_w)
    np.testing.assert_array_equal(none_out, all_out)


def test_fully_masked_row_gives_zero_weights_and_zero_output_not_nan():
    queries, keys, values = random_qkv(6, positions=3)
    mask = np.array([[True, False, False], [False, False, False], [True, True, True]])
    weights, output = attention(queries, keys, values, mask=mask)
    assert not np.isnan(weights).any() and not np.isnan(output).any()
    assert (weights[1] == 0.0).all() and (output[1] == 0.0).all()
    np.testing.assert_allclose(weights[[0, 2]].sum(-1), 1.0)


def test_attention_with_leading_axes_equals_one_call_per_slice():
    queries, keys, values = random_qkv(7, leading=(2, 3), positions=5, size=4)
    weights, output = attention(queries, keys, values, mask=causal_mask(5))
    assert weights.shape == (2, 3, 5, 5) and output.shape == (2, 3, 5, 4)
    for a in range(2):
        for b in range(3):
            w, o = attention(queries[a, b], keys[a, b], values[a, b], mask=causal_mask(5))
            np.testing.assert_allclose(weights[a, b], w)
            np.testing.assert_allclose(output[a, b], o)


def test_fewer_queries_than_keys_and_other_value_width():
    rng = np.random.default_rng(8)
    queries, keys, values = rng.normal(size=(2, 4)), rng.normal(size=(7, 4)), rng.normal(size=(7, 3))
    weights, output = attention(queries, keys, values)
    assert weights.shape == (2, 7) and output.shape == (2, 3)


def test_scaling_keeps_the_largest_weight_near_a_quarter_while_unscaled_grows():
    rng = np.random.default_rng(2026)
    scaled, unscaled = [], []
    for size in [4, 32, 256]:
        queries, keys = rng.normal(0, 1, (1000, size)), rng.normal(0, 1, (16, size))
        for scale, results in [(False, unscaled), (True, scaled)]:
            weights, _ = attention(queries, keys, keys, scale=scale)
            results.append(weights.max(-1).mean())
    for value in scaled:
        assert abs(value - 0.25) <= 0.05
    assert unscaled[0] < unscaled[1] < unscaled[2]
    assert unscaled[2] > 0.85


# --- heads ----------------------------------------------------------------------------


def test_split_heads_shapes_and_columns():
    x = np.arange(5 * 12, dtype=float).reshape(5, 12)
    split = split_heads(x, 3)
    assert split.shape == (3, 5, 4)
    for h in range(3):
        np.testing.assert_array_equal(split[h], x[:, h * 4 : (h + 1) * 4])


def test_join_heads_inverts_split_heads():
    x = np.random.default_rng(9).normal(size=(6, 8))
    for heads in [1, 2, 4, 8]:
        np.testing.assert_array_equal(join_heads(split_heads(x, heads)), x)
    stacked = np.random.default_rng(10).normal(size=(2, 6, 4))
    np.testing.assert_array_equal(split_heads(join_heads(stacked), 2), stacked)


def test_multi_head_attention_equals_a_loop_over_heads():
    rng = np.random.default_rng(2026)
    positions, dims, heads = 6, 8, 2
    size = dims // heads
    x = rng.normal(0, 1, (positions, dims))
    w_query, w_key, w_value, w_output = (rng.normal(0, 0.5, (dims, dims)) for _ in range(4))
    weights, output = multi_head_attention(x, w_query, w_key, w_value, w_output, heads)
    assert weights.shape == (heads, positions, positions)
    assert output.shape == (positions, dims)

    loop_weights, loop_outputs = [], []
    for h in range(heads):
        cols = slice(h * size, (h + 1) * size)
        w, o = attention(x @ w_query[:, cols], x @ w_key[:, cols], x @ w_value[:, cols], mask=causal_mask(positions))
        loop_weights.append(w)
        loop_outputs.append(o)
    np.testing.assert_allclose(weights, np.stack(loop_weights))
    np.testing.assert_allclose(output, np.concatenate(loop_outputs, axis=1) @ w_output)
    assert (weights[:, ~causal_mask(positions)] == 0.0).all()


def test_multi_head_attention_without_causal_mask_looks_ahead():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(4, 8))
    ws = [rng.normal(size=(8, 8)) for _ in range(4)]
    weights, _ = multi_head_attention(x, *ws, heads=4, causal=False)
    assert weights.shape == (4, 4, 4)
    assert (weights[:, ~causal_mask(4)] > 0).all()


# --- bad inputs -----------------------------------------------------------------------


def test_heads_that_do_not_divide_the_width_raise():
    with pytest.raises(ValueError, match="cannot be split evenly into 3 heads"):
        split_heads(np.zeros((4, 8)), 3)
    rng = np.random.default_rng(12)
    ws = [rng.normal(size=(8, 8)) for _ in range(4)]
    with pytest.raises(ValueError, match="divides 8"):
        multi_head_attention(rng.normal(size=(4, 8)), *ws, heads=3)


def test_mismatched_query_and_key_size_raises():
    with pytest.raises(ValueError, match="same size d"):
        scaled_scores(np.zeros((3, 4)), np.zeros((3, 5)))
    with pytest.raises(ValueError, match="same size d"):
        attention(np.zeros((3, 4)), np.zeros((3, 5)), np.zeros((3, 5)))


def test_other_bad_inputs_raise():
    with pytest.raises(ValueError, match="one row per key"):
        attention(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((2, 4)))
    with pytest.raises(TypeError, match="boolean"):
        attention(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 4)), mask=np.tril(np.ones((3, 3))))
    with pytest.raises(ValueError, match="does not broadcast"):
        attention(np.zeros((3, 4)), np.zeros((3, 4)), np.zeros((3, 4)), mask=causal_mask(4))
    with pytest.raises(ValueError, match=r"\(\.\.\., T, d\)"):
        scaled_scores(np.zeros(4), np.zeros((3, 4)))
    with pytest.raises(ValueError, match="shape \\(D, D\\)"):
        square = np.zeros((8, 8))
        multi_head_attention(np.zeros((3, 8)), np.zeros((8, 4)), square, square, square, 2)
    with pytest.raises(ValueError, match="at least 1"):
        causal_mask(0)
    with pytest.raises(TypeError, match="integer"):
        causal_mask(3.0)
    with pytest.raises(ValueError, match="at least 1"):
        split_heads(np.zeros((4, 8)), 0)
    with pytest.raises(ValueError, match="array of numbers"):
        softmax(["a", "b"])


# --- the head statistics

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
