from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import InvalidParameterError
from assay.plugins.names import format_name, parse_name, split_qualifier


@pytest.mark.parametrize(
    ("spec", "name", "overrides"),
    [
        ("accuracy", "accuracy", {}),
        ("  f1 ", "f1", {}),
        ("f1[]", "f1", {}),
        ("f1[average=macro, score_prefix=m_]", "f1", {"average": "macro", "score_prefix": "m_"}),
        ("prr[max_rejection=0.5]", "prr", {"max_rejection": 0.5}),
        ("prr[normalize=true]", "prr", {"normalize": True}),
        ("x[a=False, b=none, c=null, d=-3, e=1e-3, f=inf]", "x",
         {"a": False, "b": None, "c": None, "d": -3, "e": 0.001, "f": float("inf")}),
        ("f1[labels=[1, 2, 3]]", "f1", {"labels": [1, 2, 3]}),
        ("f1[labels=[a, [b, c]], k=[]]", "f1", {"labels": ["a", ["b", "c"]], "k": []}),
        ("m[s='a, b]', t=\"x=y\"]", "m", {"s": "a, b]", "t": "x=y"}),
        ("patch_max[patch_size=10, mean=false]", "patch_max", {"patch_size": 10, "mean": False}),
        ("threads[workers=2]", "threads", {"workers": 2}),
        ("assay-classic:accuracy", "assay-classic:accuracy", {}),
        ("classic:f1[average=macro]", "classic:f1", {"average": "macro"}),
        ("m[s='a:b']", "m", {"s": "a:b"}),
    ],
)
def test_parse_name(spec, name, overrides):
    assert parse_name(spec) == (name, overrides)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("f1[average=macro", "must close with ']'"),
        ("f1[average]", "not of the form key=value"),
        ("f1[a=1, a=2]", "given twice"),
        ("f1[1a=2]", "Invalid override key"),
        ("f 1", "Invalid name"),
        ("f1[a=[1, 2]", "Unbalanced"),
        ("f1[a='x]", "Unclosed quote"),
        ("", "Invalid name"),
        ("a:b:c", "Invalid name"),
        (":accuracy", "Invalid name"),
        ("classic:", "Invalid name"),
    ],
)
def test_parse_name_errors_name_the_problem(spec, fragment):
    with pytest.raises(InvalidParameterError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        parse_name(spec)


def test_parse_name_rejects_non_strings():
    with pytest.raises(InvalidParameterError, match="must be a string"):
        parse_name(3)  # type: ignore[arg-type]


scalars = st.one_of(
    st.booleans(),
    st.none(),
    st.integers(-10**6, 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(alphabet="abcxyz_-. ,[]=", min_size=1, max_size=8).filter(lambda s: s.strip() == s),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3))


@given(st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True), values, max_size=4))
def test_format_then_parse_round_trips(overrides):
    assert parse_name(format_name("metric", overrides)) == ("metric", overrides)


def test_split_qualifier():
    assert split_qualifier("assay-classic:accuracy") == ("assay-classic", "accuracy")
    assert split_qualifier("accuracy") == (None, "accuracy")
