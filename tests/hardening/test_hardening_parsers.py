"""The two central parsers (JSON bodies, numbers) at their edges: what they must still accept is as
important as what they refuse (the HTTP-level classes are in test_hardening_bad_input)."""
import pytest

from pocketstack.common import exceptions, numbers
from pocketstack.wsgi import jsonbody


@pytest.mark.parametrize("raw,value", [
    (b'"\\ud83d\\ude00"', "\U0001F600"),          # a surrogate pair is one character
    (b'{"a": "x\\\\u0000"}', {"a": "x\\u0000"}),   # an escaped backslash, then text
    (b'["[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]',
     ["[" * 70]),                                  # brackets inside a string
    (b"[" * 64 + b"]" * 64, None),                 # the deepest allowed
    (b'{"n": 9223372036854775807, "f": 1.5e308}', {"n": 2**63 - 1, "f": 1.5e308}),
    (b"[9223372036854775808]", [2**63]),  # ranges are each field's to check
    ("{\"name\": \"caf\u00e9\"}".encode(), {"name": "caf\u00e9"}),
])
def test_accepted(raw, value):
    decoded = jsonbody.decode(raw)
    if value is not None:
        assert decoded == value


@pytest.mark.parametrize("raw", [
    b"[" * 65 + b"]" * 65, b'{"a":' * 65 + b"1" + b"}" * 65,
    b'"\\ud800"', b'{"\\udfff": 1}', b'"\\u0000"', b'"\\\\\\u0000"',
    b"[NaN]", b"[Infinity]", b"[-Infinity]", b"[1e999]", b"[-1e400]",
    b"[" + b"9" * 5000 + b"]",
    b'"\xff"', b'"\xed\xa0\x80"', '"x"'.encode("utf-16"),
])
def test_refused_with_400(raw):
    with pytest.raises(exceptions.BadRequest):
        jsonbody.decode(raw)


@pytest.mark.parametrize("text,ok", [
    ("0", True), ("42", True), ("-1", True), ("+7", True), ("9223372036854775807", True),
    ("9223372036854775808", False), ("²", False), ("٣", False), ("1_000", False),
    ("1e3", False), ("", False), (" ", False), ("1" * 5000, False), ("0x10", False),
])
def test_is_int_text(text, ok):
    assert numbers.is_int_text(text, signed=True) is ok


def test_parse_int_bounds_and_bools():
    assert numbers.parse_int(" 12 ", "n", minimum=0) == 12
    for bad in (True, "-1", 2**63, 1.5, None, "²"):
        with pytest.raises(exceptions.BadRequest):
            numbers.parse_int(bad, "n", minimum=0)


def test_parse_limit_clamps_ascii_and_refuses_the_rest():
    assert numbers.parse_limit("5", "limit", 1000) == 5
    assert numbers.parse_limit("9" * 5000, "limit", 1000) == 1000
    for bad in ("²", "-1", "x", "1e3"):
        with pytest.raises(exceptions.BadRequest):
            numbers.parse_limit(bad, "limit", 1000)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999", "9" * 400, 10**400,
                                   float("nan"), True, "x"])
def test_parse_float_refuses_non_finite(value):
    with pytest.raises(exceptions.BadRequest):
        numbers.parse_float(value, "rxtx_factor")


def test_parse_float_accepts_numbers():
    assert numbers.parse_float("1.5", "f") == 1.5 and numbers.parse_float(2, "f") == 2.0
