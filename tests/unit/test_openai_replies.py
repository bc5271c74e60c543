"""Reading a 2xx reply's body (openai_replies.json_reply): a JSON object, nested no deeper than
MAX_REPLY_NESTING levels, whatever mix of objects and lists the nesting is made of."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaoshi.models.openai_replies import (
    MAX_REPLY_NESTING,
    TransientFailure,
    _brackets_nest_past,
    _loads,
    _may_hold_long_integer,
    _nesting_exceeds,
    json_reply,
)


def nested(levels: int, kinds: str) -> object:
    """A value `levels` containers deep (0: a string): containers chosen in turn from `kinds` ('d' an
    object, 'l' a list), each beside scalars, a shallower sibling and brackets inside strings."""
    value: object = "[[{{"
    for level in range(levels):
        if kinds[level % len(kinds)] == "d":
            value = {"inner": value, "n": 1.5, "s": "]}"}
        else:
            value = [value, 2, "{[", *([{"leaf": None}] if level else [])]  # the sibling no deeper
    return value


@pytest.mark.parametrize("kinds", ["d", "l", "dl", "lld"])
@pytest.mark.parametrize("levels", [1, 2, MAX_REPLY_NESTING, MAX_REPLY_NESTING + 1])
def test_nesting_is_counted_to_the_limit(kinds: str, levels: int) -> None:
    raw = json.dumps({"choices": nested(levels - 1, kinds)}).encode()  # the reply's object is a level
    if levels > MAX_REPLY_NESTING:
        with pytest.raises(TransientFailure, match=f"nests more than {MAX_REPLY_NESTING} levels"):
            json_reply(raw)
    else:
        assert json_reply(raw) == json.loads(raw)


def test_a_wide_reply_of_many_small_objects_is_read() -> None:
    # an echo reply's shape: thousands of one-entry objects, two levels below the choices
    top = [{f"t{i}": -0.5} for i in range(5000)]
    raw = json.dumps({"choices": [{"logprobs": {"top_logprobs": top, "tokens": ["a"] * 5000}}]}).encode()
    assert len(json_reply(raw)["choices"][0]["logprobs"]["top_logprobs"]) == 5000


# Bodies orjson refuses or would read otherwise: each must come out as json.loads reads it, or fail as
# it fails (kaoshi reads bodies with orjson where it is installed).
BODIES = [
    b'{"choices": [{"logprobs": {"token_logprobs": [NaN, -Infinity, -0.5]}}]}',
    b'{"choices": [{"text": "A"}], "usage": {"prompt_tokens": 1e400}}',
    b'{"choices": [{"text": "A"}], "usage": {"prompt_tokens": 99999999999999999999999}}',
    b'{"choices": [{"text": "A"}], "usage": {"prompt_tokens": -9999999999999999999}}',
    b'{"choices": [{"text": "\\ud800 lone"}]}',
    b'{"choices": [{"text": "A"}], "id": "1234567890123456789012345"}',  # digits in a string
    b'{"a": 1, "a": 2, "choices": [{"text": "-0.0"}], "x": [-0.0, 1.0000000000000002, 5e-324]}',
    '{"choices": [{"text": "答案：A"}]}'.encode("utf-16"),
]


@pytest.mark.parametrize("raw", BODIES)
def test_a_body_is_read_as_json_reads_it(raw: bytes) -> None:
    expected = json.loads(raw)
    got = json_reply(raw)
    assert json.dumps(got) == json.dumps(expected)
    assert [type(v) for v in got.get("usage", {}).values()] == [
        type(v) for v in expected.get("usage", {}).values()
    ]


def test_a_number_of_5000_digits_is_refused_as_before() -> None:
    with pytest.raises(TransientFailure, match="not readable JSON"):
        json_reply(b'{"choices": [{"text": "A"}], "n": ' + b"9" * 5000 + b"}")


# -- the nesting read from a UTF-8 body's bytes is the nesting of what it parses to ----------------------
# Strings are where bytes lie about structure: brackets, quotes and backslashes in them, escaped or not,
# and the escape letters (b f n r t u /) that the byte reading keeps for a while; ensure_ascii writes
# the other characters as \\u escapes.
_TRICKY = st.text(alphabet=st.sampled_from('[]{}"\\/bfnrtuxé答\n\t\x00'))
_JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.integers(-(2**60), 2**60) | _TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TRICKY, inner, max_size=4),
    max_leaves=40,
)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@settings(max_examples=400, deadline=None)
@given(value=_JSON, ascii_only=st.booleans(), limit=st.integers(1, 6))
def test_the_bytes_tell_the_nesting_the_walk_finds(value: object, ascii_only: bool, limit: int) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    parsed = json.loads(raw)
    assert _brackets_nest_past(raw, limit) == _nesting_exceeds(parsed, limit) == (_depth(parsed) > limit)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-8-sig"])
def test_a_body_in_another_unicode_encoding_is_checked_on_what_it_parses_to(encoding: str) -> None:
    # U+5B5B is the bytes 5B 5B ('[[') in UTF-16: read as bytes it would nest past the limit
    text = "\u5b5b" * (MAX_REPLY_NESTING + 1)
    raw = json.dumps({"choices": [{"text": text}]}, ensure_ascii=False).encode(encoding)
    assert json_reply(raw)["choices"][0]["text"] == text
    deep = json.dumps({"choices": nested(MAX_REPLY_NESTING, "dl")}).encode(encoding)
    with pytest.raises(TransientFailure, match="nests more than"):
        json_reply(deep)


# -- orjson reads the body unless it may hold an integer past 64 bits ---------------------------------------
@pytest.mark.parametrize(
    ("raw", "long_integer"),
    [
        (b'{"v": -0.00012299999798182398}', False),  # a float32 log-probability: twenty digits after a point
        (b'{"v": [0.1234567890123456789, 5, -1.2345678901234567e-05]}', False),
        (b'{"n": 9223372036854775808}', True),
        (b'{"n": -9999999999999999999}', True),
        (b'{"v": -0.5, "n": 18446744073709551616}', True),  # a fraction first, then an integer
        (b'{"a": 1.0000000000000000000001, "b": 99999999999999999999}', True),
        (b"12345678901234567890", True),  # at the body's start
        (b'{"s": "12345678901234567890"}', True),  # in a string: json reads it, as orjson would
        (b'{"n": 922337203685477580}', False),  # 18 digits: orjson reads it as an integer
    ],
)
def test_a_long_integer_is_told_from_a_long_fraction(raw: bytes, long_integer: bool) -> None:
    assert _may_hold_long_integer(raw) is long_integer


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.integers(-(2**70), 2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.floats(width=32, allow_nan=False, allow_infinity=False).map(float),
        max_size=20,
    )
)
def test_numbers_are_read_as_json_reads_them(values: list[float]) -> None:
    raw = json.dumps({"choices": values}).encode()
    got, expected = _loads(raw), json.loads(raw)
    assert got == expected
    assert [type(v) for v in got["choices"]] == [type(v) for v in expected["choices"]]  # type: ignore[index]
