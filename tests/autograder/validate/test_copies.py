"""autograder.validate.copies: the reference's statements found again after renaming and re-spacing, and only those."""

from autograder.validate.copies import copied_statements, normalised, reference_statements

REFERENCE = '''
import numpy as np

def softmax(scores):
    """The docstring is never compared."""
    scores = np.asarray(scores, dtype=float)
    top = scores.max(axis=-1, keepdims=True)
    exps = np.exp(scores - top)
    return exps / exps.sum(axis=-1, keepdims=True)

def attention(q, k, v):
    weights = softmax(q @ k.T / np.sqrt(q.shape[-1]))
    return weights @ v
'''


def test_a_renamed_reindented_statement_is_found_with_its_function_and_line():
    code = {"cell 3": "def f(z):\n  mx = z.max(axis = -1, keepdims = True)\n  return z\n"}
    (copy,) = copied_statements(REFERENCE, code)
    assert (copy.function, copy.where, copy.line) == ("softmax", "cell 3", 2)
    assert copy.statement == "top = scores.max(axis=-1, keepdims=True)"


def test_everyones_statements_and_calls_of_graded_functions_are_not_copies():
    code = {
        "demo": "x = np.asarray(x, dtype=float)\nweights = softmax(scores)\nout = attention(a, b, c)\n",
        "other axis": "top = scores.max(axis=0, keepdims=True)\n",
        "broken": "def (:\n",
    }
    assert copied_statements(REFERENCE, code) == []


def test_a_called_function_keeps_its_name_so_another_function_is_another_statement():
    mine = normalised_of("weights = softmax(q @ k.T / np.sqrt(q.shape[-1]))")
    other = normalised_of("weights = sigmoid(q @ k.T / np.sqrt(q.shape[-1]))")
    assert mine != other
    assert copied_statements(REFERENCE, {"c": "w = softmax(a @ b.T / np.sqrt(a.shape[-1]))\n"})[0].function == (
        "attention"
    )


def test_a_shared_statement_is_not_reported():
    shared = [form for form, (function, _) in reference_statements(REFERENCE).items() if function == "softmax"]
    code = {"cell": "e = np.exp(s - m)\nr = e / e.sum(axis=-1, keepdims=True)\n"}
    assert {c.statement for c in copied_statements(REFERENCE, code)} >= {"exps = np.exp(scores - top)"}
    assert copied_statements(REFERENCE, code, shared=shared) == []


def normalised_of(line: str) -> str:
    import ast

    tree = ast.parse(line)
    return normalised(tree.body[0], frozenset({"softmax", "sigmoid"}))
