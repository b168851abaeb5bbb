import pytest

from precheck.errors import InputError
from precheck.sources import decode, load, parse


def test_yaml_positions_point_at_keys_and_values() -> None:
    doc = parse("t.yaml", "a: 1\nblock:\n  fp16: true\n", "yaml")
    node = doc.mapping()["block"].get("fp16")
    assert node is not None
    assert (node.key_line, node.key_column, node.line, node.column) == (3, 3, 3, 9)
    assert node.value is True


def test_yaml_syntax_error_names_line_and_column() -> None:
    with pytest.raises(InputError) as info:
        parse("bad.yaml", "a: 1\nb: [1, 2\nc: 3\n", "yaml")
    assert str(info.value).startswith("bad.yaml:3:")


def test_yaml_never_constructs_python_objects() -> None:
    doc = parse("t.yaml", "x: !!python/object/apply:os.system ['echo hi']\ny: !custom 3\n", "yaml")
    assert doc.mapping()["y"].value == "3"
    assert isinstance(doc.mapping()["x"].value, list)


def test_yaml_notes_duplicates_and_yaml11_booleans() -> None:
    doc = parse("t.yaml", "fp16: on\nfp16: off\n", "yaml")
    kinds = sorted(n.kind for n in doc.notes)
    assert kinds == ["duplicate-key", "yaml11-boolean", "yaml11-boolean"]
    assert doc.mapping()["fp16"].value is False


def test_yaml_alias_bomb_is_refused_where_it_explodes() -> None:
    """Composing shares aliased nodes, but every later walk would pay for the expansion
    (a deepspeed block of 9**11 values never finished): refused at the line it explodes."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        prev = chr(ord("a") + i - 1)
        name = chr(ord("a") + i)
        lines.append(
            f"{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]"
        )
    with pytest.raises(InputError, match=r"^bomb.yaml:6:4: aliases expand this document by more than 100,000"):
        parse("bomb.yaml", "\n".join(lines) + "\n", "yaml")
    # a few aliases of a small block, as real configs share defaults, are read
    doc = parse("ok.yaml", "\n".join(lines[:4]) + "\n", "yaml")
    assert doc.mapping()["d"].plain() == [[[["x"] * 9] * 9] * 9] * 9


def test_yaml_merge_keys() -> None:
    doc = parse("t.yaml", "base: &b {fp16: true}\nrun:\n  <<: *b\n  lr: 1\n", "yaml")
    assert doc.mapping()["run"].plain() == {"lr": 1, "fp16": True}


def test_json_positions_and_duplicates() -> None:
    doc = parse("t.json", '{\n  "fp16": true,\n  "nested": {"bf16": false}\n}', "json")
    nested = doc.mapping()["nested"].get("bf16")
    assert nested is not None and (nested.key_line, nested.key_column) == (3, 14)
    dup = parse("d.json", '{"a": 1, "a": 2}', "json")
    assert dup.mapping()["a"].value == 2 and dup.notes[0].kind == "duplicate-key"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": 1,}', "t.json:1:9"),
        ('{"a": 1 // c\n}', "t.json:1:9"),
        ('{\n  "a": tru\n}', "t.json:2:8"),
        ('{"a": 1} x', "t.json:1:10"),
        ("", None),
    ],
)
def test_json_errors_name_line_and_column(text: str, where: str | None) -> None:
    if where is None:
        assert parse("t.json", text, "json").root.value is None
        return
    with pytest.raises(InputError) as info:
        parse("t.json", text, "json")
    assert str(info.value).startswith(where)


def test_json_numbers() -> None:
    doc = parse("t.json", '{"a": -1.5e3, "b": 10, "c": 1e400}', "json")
    assert doc.root.plain() == {"a": -1500.0, "b": 10, "c": float("inf")}


def test_toml_positions_and_errors() -> None:
    doc = parse("t.toml", '[train]\nmixed_precision = "bf16"\n"--optimizer" = "adamw_bf16"\n', "toml")
    node = doc.mapping()["train"].get("--optimizer")
    assert node is not None and (node.key_line, node.key_column) == (3, 1)
    with pytest.raises(InputError) as info:
        parse("t.toml", "a = \n", "toml")
    assert str(info.value).startswith("t.toml:1:")


def test_decoding() -> None:
    assert decode("x", b"\xef\xbb\xbfa: 1") == "a: 1"
    assert decode("x", "a: 1".encode("utf-16")) == "a: 1"
    with pytest.raises(InputError) as info:
        decode("x.yaml", b"a: 1\nb: \xff\n")
    assert str(info.value).startswith("x.yaml:2:4")


def test_load_refuses_binary_and_missing(tmp_path) -> None:
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"a: 1\x00\x01")
    with pytest.raises(InputError, match="binary"):
        load(binary)
    with pytest.raises(InputError, match="no such file"):
        load(tmp_path / "missing.yaml")


class _NoDirect(dict):  # type: ignore[type-arg]
    """A constructor table that offers no direct constructor: every tag through construct_object."""

    def get(self, key, default=None):  # type: ignore[no-untyped-def]
        return None


def test_yaml_scalars_built_directly_as_construct_object_builds_them() -> None:
    """``_Converter._scalar`` calls a safe tag's constructor directly: the same value (and the
    same refusal) as SafeConstructor.construct_object on every kind of scalar."""
    import yaml

    from precheck.sources.yaml_source import _Converter, _Loader, _Refused

    texts = [
        "~",
        "null",
        "",
        "yes",
        "No",
        "on",
        "OFF",
        "true",
        "False",
        "0",
        "-17",
        "+3",
        "0x1F",
        "0o17",
        "017",
        "0b101",
        "1_000",
        "190:20:30",
        "1.5",
        "-.inf",
        ".NaN",
        "6.8523015e+5",
        "1_0.5",
        "2001-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10",
        "2023-02-30",
        "text",
        "'1'",
        '"true"',
        "1e400",
    ]
    for text in texts:
        for node in yaml.compose_all(f"a: {text}\n{text or 'k'}: 1\n", Loader=_Loader):
            for key_node, value_node in node.value:
                for scalar in (key_node, value_node):
                    mine = _Converter([])
                    try:
                        got: object = mine._scalar(scalar)
                    except _Refused as refused:
                        got = ("refused", refused.message)
                    slow = _Converter([])
                    slow.constructor.yaml_constructors = _NoDirect(yaml.constructor.SafeConstructor.yaml_constructors)
                    try:
                        want: object = slow._scalar(scalar)
                    except _Refused as refused:
                        want = ("refused", refused.message)
                    assert got == want or (got != got and want != want), (text, got, want)
                    assert type(got) is type(want), text
