"""The BPE tokenizer: normalisation, the end-of-word marker, merges, round trips, saving."""

import pytest

from lib import tokenizer

CORPUS = [
    "Protect your outdoor patio furniture from harsh elements with this outdoor patio furniture cover.",
    "double chaise patio furniture cover",
    "sled coffee table",
    "A sled coffee table with a walnut top; the sled base is kiln-dried oak.",
] * 20


@pytest.fixture(scope="module")
def bpe():
    return tokenizer.learn(CORPUS, merges=120)


def test_normalise_folds_accents_and_case():
    assert tokenizer.normalise("Décor ÉTAGÈRE") == "decor etagere"
    assert tokenizer.normalise("naïve café ™") == "naive cafe tm"


def test_words_split_letters_digits_and_punctuation():
    assert tokenizer.words('18" x 18" Linen, kiln-dried & oak.') == [
        "18",
        '"',
        "x",
        "18",
        '"',
        "linen",
        ",",
        "kiln",
        "-",
        "dried",
        "&",
        "oak",
        ".",
    ]


def test_every_word_ends_with_the_marker(bpe):
    tokens = bpe.tokens("sled coffee table")
    assert tokens == ["sled</w>", "coffee</w>", "table</w>"]
    assert all(t.endswith("</w>") for t in bpe.tokens("outdoor patio furniture cover"))


def test_a_rare_word_is_split_into_known_pieces(bpe):
    pieces = bpe.tokens("coffees")
    assert len(pieces) > 1 and pieces[-1].endswith("</w>")
    assert "".join(pieces).replace("</w>", "") == "coffees"


def test_round_trip_is_the_normalised_words(bpe):
    text = "Protect your OUTDOOR patio furniture; from harsh elements."
    assert bpe.decode(bpe.encode(text)) == " ".join(tokenizer.words(text))


def test_markers_come_first_and_never_come_out_of_encode(bpe):
    assert bpe.vocabulary[:3] == ["<s>", "<sep>", "<end>"]
    assert not {0, 1, 2} & set(bpe.encode("<s> sled <sep> table <end>"))


def test_merges_are_deterministic(bpe):
    again = tokenizer.learn(CORPUS, merges=120)
    assert again.merges == bpe.merges and again.vocabulary == bpe.vocabulary


def test_learning_stops_when_every_word_is_whole():
    small = tokenizer.learn(["ab ab"], merges=50)
    assert small.merges == [("a", "b</w>")]


def test_save_and_load_give_the_same_tokens(bpe, tmp_path):
    bpe.save(tmp_path)
    loaded = tokenizer.Tokenizer.load(tmp_path)
    assert loaded.vocabulary == bpe.vocabulary
    assert loaded.encode(CORPUS[0]) == bpe.encode(CORPUS[0])


def test_an_unseen_character_is_dropped_not_an_error(bpe):
    assert bpe.tokens("sled §") == ["sled</w>"]
