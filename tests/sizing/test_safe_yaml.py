"""The one YAML reader of every input (`sizing.kube.safe_yaml`) and the bounded messages of
`sizing.errors`: what it accepts, what it refuses, and how."""

from __future__ import annotations

import pytest

from sizing.errors import MESSAGE_LIMIT, SizingInputError, echo
from sizing.kube.safe_yaml import MAX_ALIAS_REPEATS, YamlInputError, decode_text, load_document, load_documents


def test_anchors_aliases_and_merge_keys_within_the_bound_are_read():
    text = "base: &base {cpu: 1, memory: 1Gi}\napi: {<<: *base, cpu: 2}\nweb: *base\n"
    assert load_document(text, "x") == {
        "base": {"cpu": 1, "memory": "1Gi"},
        "api": {"cpu": 2, "memory": "1Gi"},
        "web": {"cpu": 1, "memory": "1Gi"},
    }


def test_aliases_may_repeat_up_to_the_bound():
    items = ", ".join(["x"] * 99)
    repeats = ", ".join(["*a"] * (MAX_ALIAS_REPEATS // 100))
    assert len(load_document(f"a: &a [{items}]\nb: [{repeats}]\n", "x")["b"]) == MAX_ALIAS_REPEATS // 100
    with pytest.raises(YamlInputError, match="repeat 10,100 values"):
        load_document(f"a: &a [{items}]\nb: [{repeats}, *a]\n", "x")


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: 1\nb: 2\na: 3\n", "key 'a' appears twice in one map, on line 1 and line 3"),
        ("m:\n  1: a\n  0x1: b\n", "key '0x1' appears twice in one map, on line 2 and line 3"),
        ("true: a\nTrue: b\n", "key 'True' appears twice"),
        ("- {a: 1, a: 1}\n", "key 'a' appears twice in one map, on line 1 and line 1"),
    ],
)
def test_a_key_given_twice_is_refused_with_both_lines(text, message):
    with pytest.raises(YamlInputError) as error:
        load_documents(text, "input.yaml")
    assert message in str(error.value)


def test_a_merge_key_may_be_overridden_without_a_duplicate():
    assert load_document("a: &a {x: 1}\nb: {<<: *a, x: 2}\n", "x")["b"] == {"x": 2}


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x89PNG\x00", "is not a text file (byte 0 at line 1, column 1 is not UTF-8)"),
        (b"a: 1\nb: caf\xe9\n", "is not a text file (byte 11 at line 2, column 7 is not UTF-8)"),
        (b"a: 1\nb: \x00\n", "is not a text file (control character U+0000 at line 2, column 4)"),
        (b"a: \x1b[31m\n", "control character U+001B at line 1, column 4"),
    ],
)
def test_bytes_that_are_not_yaml_text_are_named(data, message):
    with pytest.raises(YamlInputError) as error:
        decode_text(data, "input")
    assert message in str(error.value)


def test_a_byte_order_mark_is_allowed():
    assert decode_text("\ufeffa: 1\n".encode(), "input") == "a: 1\n"


def test_python_tags_are_refused():
    with pytest.raises(YamlInputError, match="unsupported YAML at line 1"):
        load_document("a: !!python/object/apply:os.system [echo]\n", "x")


def test_one_document_is_expected_where_one_is_read():
    with pytest.raises(YamlInputError, match="holds 2 YAML documents"):
        load_document("a: 1\n---\nb: 2\n", "x")


def test_echo_cuts_long_strings_and_big_numbers_and_structures():
    assert echo("short") == "'short'"
    assert echo("x" * 100_000) == f"{'x' * 60!r}… (100,000 characters)"
    assert echo(10**5000) == "an integer of about 5,001 digits"
    assert len(echo([[list(range(1000))] * 1000])) <= 121


def test_every_sizing_message_is_bounded():
    assert "… (100,000 characters)" in str(SizingInputError("name " + "a" * 100_000 + " is bad"))
    assert len(str(SizingInputError("a b " * 100_000))) <= MESSAGE_LIMIT + 50
    # Paths and ordinary words are left whole.
    path = "/tmp/" + "d" * 200 + "/input.yaml"
    assert path in str(SizingInputError(f"file {path!r} is bad"))


@pytest.mark.parametrize(
    "data, encoding",
    [
        ("kind: List\nitems: []\n".encode("utf-16"), "UTF-16LE"),  # with a byte-order mark, as PowerShell writes
        ("kind: List\nitems: []\n".encode("utf-16-le"), "UTF-16LE"),
        ("kind: Liste\u0301\n".encode("utf-16-be"), "UTF-16BE"),
        (b"\xfe\xff" + "a: 1\n".encode("utf-16-be"), "UTF-16BE"),
    ],
)
def test_utf16_text_is_named_with_how_to_save_it_as_utf8(data, encoding):
    with pytest.raises(YamlInputError) as error:
        decode_text(data, "file 'objects.yaml'")
    message = str(error.value)
    assert message.startswith(f"file 'objects.yaml' is {encoding} text, and YAML is read as UTF-8; save it as UTF-8")
    assert "Set-Content -Encoding utf8" in message and "not a text file" not in message
