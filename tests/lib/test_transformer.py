"""The recorded store's model: NumPy equals PyTorch, it copies from the name, and its heads' habits."""

from pathlib import Path

import numpy as np
import pytest

from autograder import assignments
from lib import experiments, transformer
from lib.products import product_texts

# the assignment's reference (never in lib, never released): what a student's attention must equal, and the head
# statistics' one definition
ROOT = Path(__file__).resolve().parents[2]
reference = assignments.reference(ROOT / "source" / "attention")


@pytest.fixture(scope="module")
def model():
    return transformer.load()


def test_settings_are_the_designs(model):
    _, vocabulary, manifest = model
    s = manifest["settings"]
    assert (s["layers"], s["heads"], s["dimensions"], s["longest"]) == (4, 4, 128, 160)
    assert s["dimensions"] // s["heads"] == 32
    assert vocabulary[:3] == [transformer.BOS, transformer.SEP, transformer.END]
    assert manifest["tokens_seen"] > 1_000_000
    assert manifest["losses"]["validation"] < 3.0


def test_numpy_forward_equals_recorded_pytorch_logits():
    with np.load(transformer.MODEL_DIR / "reference_logits.npz") as recorded:
        count = len([k for k in recorded.files if k.startswith("ids_")])
        assert count >= 3
        for i in range(count):
            logits = transformer.forward(recorded[f"ids_{i}"])
            assert logits.shape == recorded[f"logits_{i}"].shape
            assert np.abs(logits - recorded[f"logits_{i}"]).max() < 1e-4


def test_forward_keeps_one_causal_pattern_per_layer(model):
    ids = product_texts("validation", 1)[0][0]
    logits, patterns = transformer.forward(ids, keep=True)
    assert logits.shape == (len(ids), len(model[1]))
    assert len(patterns) == 4
    for pattern in patterns:
        assert pattern.shape == (4, len(ids), len(ids))
        np.testing.assert_allclose(pattern.sum(-1), 1.0, atol=1e-12)
        assert np.all(pattern[:, ~reference.causal_mask(len(ids))] == 0.0)


def test_a_later_token_never_changes_earlier_logits(model):
    ids = list(product_texts("validation", 1)[0][0])
    changed = ids[:-1] + [(ids[-1] + 7) % len(model[1])]
    np.testing.assert_array_equal(transformer.forward(ids)[:-1], transformer.forward(changed)[:-1])


def test_another_attention_function_drives_the_model():
    ids = product_texts("validation", 1)[0][0]
    calls = []

    def spy(queries, keys, values, mask):
        calls.append(queries.shape)
        assert mask.dtype == bool and np.array_equal(mask, reference.causal_mask(len(ids)))
        return reference.attention(queries, keys, values, mask)

    # within 1e-12, not bit for bit: lib's own step reads queries and keys already scaled (its rotary table holds
    # the scaling, lib.transformer._turns), a given attention receives them with the scaling taken back out
    assert np.abs(transformer.forward(ids, attention=spy) - transformer.forward(ids)).max() < 1e-12
    assert calls == [(4, len(ids), 32)] * 4


def test_an_attention_that_returns_a_wrong_shape_is_told_so():
    ids = product_texts("validation", 1)[0][0]

    def flat(queries, keys, values, mask):
        weights, output = reference.attention(queries, keys, values, mask)
        return weights, output.reshape(-1)

    with pytest.raises(ValueError, match=r"attention's output must have shape \(heads, T, d\), got \(\d+,\)"):
        transformer.forward(ids, attention=flat)


def test_forward_rejects_bad_ids(model):
    with pytest.raises(ValueError, match="longer than"):
        transformer.forward([0] * 161)
    with pytest.raises(ValueError, match="token ids must lie"):
        transformer.forward([0, len(model[1])])


def test_the_model_copies_cover_from_the_name():
    p = experiments.copy_experiment()
    assert p["name as sold"]["cover"] >= 0.5
    assert p["name without cover"]["cover"] <= 0.1
    assert p["name ending in set"]["set"] > p["name ending in set"]["cover"]


def test_the_phrase_alone_points_only_weakly_at_cover():
    followers = experiments.phrase_followers("train")
    assert len(set(followers)) >= 4
    assert 0 < followers.count("cover") < len(followers) / 2


def test_recorded_head_statistics_are_the_reference_s_on_lib_s_model():
    recorded = experiments.recorded_head_statistics()
    _, vocabulary, _ = transformer.load()
    measured = reference.head_statistics(
        product_texts("validation", 300), transformer.forward, vocabulary.index(transformer.END)
    )
    assert recorded["texts"] == measured["texts"] == 300
    assert recorded["tokens"] == measured["tokens"]
    for key in ("previous", "far", "markers"):
        np.testing.assert_allclose(recorded[key], measured[key], atol=1e-6)
    for key in ("previous_even", "far_even", "markers_even"):
        assert recorded[key] == pytest.approx(measured[key], abs=1e-6)
    # the record names the definition it was measured with, as recordings/transformer.py writes it: a file that
    # exists and defines it (it named lib.heads, a module that no longer exists)
    where, function = recorded["definition"].split(" over ")[0].split()
    assert (ROOT / where).is_file() and f"def {function}(" in (ROOT / where).read_text()
    assert recorded["definition"] == (
        "source/attention/reference.py head_statistics over lib.products.product_texts('validation', 300)"
    )


def test_a_head_favours_the_previous_token():
    stats = experiments.recorded_head_statistics()
    assert stats["previous"].max() >= 3 * stats["previous_even"]


def test_far_back_and_marker_weights_are_measured_against_an_even_spread():
    stats = experiments.recorded_head_statistics()
    assert stats["described"] >= 200 and stats["tokens"] > 5_000
    assert 0 < stats["far"].mean() < stats["far_even"] < 1
    assert 0 < stats["markers_even"] < stats["markers"].mean() < 1


def test_forward_asks_the_recorded_hook_only_for_its_own_attention(monkeypatch):
    """lib.transformer.recorded: asked first when set, for lib's own attention only; None means compute."""
    ids = product_texts("validation", 1)[0][0]
    computed = transformer.forward(ids)
    asked = []

    def recorded(given, folder):
        asked.append(list(given))
        return (np.full_like(computed, 7.0), []) if len(asked) == 1 else None

    monkeypatch.setattr(transformer, "recorded", recorded)
    assert np.all(transformer.forward(ids) == 7.0)  # answered by the hook
    assert np.array_equal(transformer.forward(ids), computed)  # the hook said None: computed
    assert np.abs(transformer.forward(ids, attention=reference.attention) - computed).max() < 1e-12  # computed
    assert asked == [list(ids), list(ids)]  # never asked when an attention is given


def test_the_float32_fast_path_is_the_same_model(model):
    texts = [ids for ids, _ in product_texts("validation", 40)]
    for ids in texts:
        fast, fast_patterns = transformer.forward(ids, keep=True, dtype=np.float32)
        slow, slow_patterns = transformer.forward(ids, keep=True)
        assert fast.dtype == np.float32 and fast.shape == slow.shape
        assert np.abs(fast - slow).max() < 1e-4  # float32 rounding, not another computation
        for fast_pattern, slow_pattern in zip(fast_patterns, slow_patterns, strict=True):
            assert fast_pattern.dtype == np.float32 and fast_pattern.shape == slow_pattern.shape
            assert np.abs(fast_pattern - slow_pattern).max() < 1e-5
            assert np.all(fast_pattern[:, ~reference.causal_mask(len(ids))] == 0.0)  # masked: exactly zero
            np.testing.assert_allclose(fast_pattern.sum(-1), 1.0, atol=1e-6)
    with np.load(transformer.MODEL_DIR / "reference_logits.npz") as recorded:
        logits = transformer.forward(recorded["ids_0"], dtype=np.float32)
        assert np.abs(logits - recorded["logits_0"]).max() < 1e-4
    ids = list(texts[0])
    changed = ids[:-1] + [(ids[-1] + 7) % len(model[1])]
    np.testing.assert_array_equal(
        transformer.forward(ids, dtype=np.float32)[:-1], transformer.forward(changed, dtype=np.float32)[:-1]
    )


def test_the_fast_path_says_what_it_cannot_do():
    ids = product_texts("validation", 1)[0][0]
    with pytest.raises(ValueError, match="a given attention runs in the float64 path"):
        transformer.forward(ids, dtype=np.float32, attention=reference.attention)
    with pytest.raises(ValueError, match="np.float64 .* or np.float32"):
        transformer.forward(ids, dtype=np.float16)
    with pytest.raises(ValueError, match="np.float64 .* or np.float32"):
        transformer.forward(ids, dtype="bfloat")
    with pytest.raises(ValueError, match="longer than"):
        transformer.forward([0] * 161, dtype=np.float32)


def test_ablate_zeroes_the_named_heads_output_and_nothing_else(model):
    """forward(..., ablate=...): the named heads hand on zeros; layers before the first named one are untouched,
    and zeroing a head is the same as giving the model an attention whose output for that head is zero."""
    ids = product_texts("validation", 1)[0][0]
    whole, patterns = transformer.forward(ids, keep=True)
    assert np.array_equal(transformer.forward(ids, ablate=[]), whole) and np.array_equal(
        transformer.forward(ids, ablate=None), whole
    )
    ablated, ablated_patterns = transformer.forward(ids, keep=True, ablate={(2, 1)})
    assert np.abs(ablated - whole).max() > 1e-3  # the head mattered to some logit
    for layer in range(3):  # layers 0..2 read the same input: their patterns are unchanged (the head's own too)
        np.testing.assert_array_equal(ablated_patterns[layer], patterns[layer])
    assert np.abs(ablated_patterns[3] - patterns[3]).max() > 0  # the layer after it reads a changed input

    def silenced(queries, keys, values, mask):
        weights, output = reference.attention(queries, keys, values, mask)
        if queries.shape == (4, len(ids), 32) and silenced.layer == 2:
            output = output.copy()
            output[1] = 0.0
        silenced.layer += 1
        return weights, output

    silenced.layer = 0
    assert np.abs(transformer.forward(ids, attention=silenced) - ablated).max() < 1e-12
    fast = transformer.forward(ids, dtype=np.float32, ablate={(2, 1)})
    assert np.abs(fast - ablated).max() < 1e-4  # the fast path zeroes the same head
    every = transformer.forward(ids, ablate={(layer, head) for layer in range(4) for head in range(4)})
    assert np.abs(every - whole).max() > 1e-2


@pytest.mark.parametrize(
    "ablate, message",
    [
        ({(4, 0)}, r"ablate's pair \(4, 0\) is outside the model: layers 0..3 and heads 0..3"),
        ([(0, -1)], r"outside the model"),
        ([3], r"ablate takes \(layer, head\) pairs of integers, counted from 0; got 3"),
    ],
)
def test_ablate_says_which_pair_is_wrong(ablate, message):
    with pytest.raises(ValueError, match=message):
        transformer.forward([0, 5, 6], ablate=ablate)


def test_copy_cases_and_their_batched_probabilities_are_one_forward_per_case(model):
    """lib.experiments' copy positions repeat a step of the name; next_token_probability, which runs the cases in
    padded batches on the fast path, gives what one float64 forward per case gives, heads zeroed or not."""
    vocabulary = model[1]
    texts = product_texts("validation", 30)
    cases = experiments.copy_cases(texts, vocabulary)
    assert 15 <= len(cases) <= 30 and len({len(ids) for ids, _ in cases}) > 3  # lengths differ: padding is used
    for ids, following in cases:
        i = len(ids) - 1
        assert vocabulary[ids[i]].endswith("</w>") and ids[i] > 0
        name = ids[1 : ids.index(vocabulary.index(transformer.SEP))]
        assert any(name[k] == ids[i] and name[k + 1] == following for k in range(len(name) - 1))
    for zeroed in (None, {(2, 1)}, {(0, 0), (3, 3)}):
        one_by_one = []
        for ids, following in cases:
            logits = transformer.forward(ids, ablate=zeroed)[-1]
            exps = np.exp(logits - logits.max())
            one_by_one.append(exps[following] / exps.sum())
        np.testing.assert_allclose(experiments.next_token_probability(cases, zeroed), one_by_one, rtol=0, atol=1e-5)
    assert experiments.next_token_probability([]).shape == (0,)
