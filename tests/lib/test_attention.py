"""Tests for lib.attention: values, the mask's guarantees, scaling, heads and bad inputs."""

import numpy as np
import pytest

from lib.attention import (
    attention,
    causal_mask,
    join_heads,
    multi_head_attention,
    scaled_scores,
    softmax,
    split_heads,
)


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
