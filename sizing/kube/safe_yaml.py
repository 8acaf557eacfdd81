"""YAML input read one safe way, by every door that takes YAML: stack files, workload
descriptions, Kubernetes object files, requirement files.

- Only a regular file (or a stream the caller hands over, such as stdin) is read, and at most
  `MAX_INPUT_BYTES` of it: a folder, a dangling link or a FIFO is named as such, never opened.
- The bytes must be UTF-8 text (a byte-order mark is allowed) without control characters.
- YAML's safe subset only (no Python objects). A key given twice in one map is refused with
  both lines: YAML would silently keep the last one.
- Anchors and aliases (`&base`, `*base`) are allowed, but the values aliases repeat count against
  `MAX_ALIAS_REPEATS` per document, and an alias inside its own anchor is refused: a "billion
  laughs" document is refused before it is expanded. Maps and lists nest at most `MAX_DEPTH` deep.

Every refusal is one `YamlInputError` (a `SizingInputError`) that names the input.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from sizing.errors import SizingInputError, echo

# A `kubectl get -A -o yaml` of a few thousand workloads is a few MiB; the pure-Python parser
# reads about 1 MiB in a few seconds, so this keeps any accepted input to about a minute.
MAX_INPUT_BYTES = 16 * 1024 * 1024
# Values that aliases may repeat in one document, in all (a value under an alias counts once per use).
MAX_ALIAS_REPEATS = 10_000
# Maps and lists nested in one another (a Kubernetes object nests about 15 deep).
MAX_DEPTH = 100

MERGE_TAG = "tag:yaml.org,2002:merge"
STR_TAG = "tag:yaml.org,2002:str"


class YamlInputError(SizingInputError):
    """YAML input that cannot be read: the message names the input and the place in it."""


# -- reading bytes ------------------------------------------------------------------------------


def read_file_bytes(path: Path | str, what: str, stdin_hint: bool = False) -> bytes:
    """The bytes of a regular file at `path`; `what` names it in messages ("stack file 'x'").
    stdin_hint: say, of a FIFO or device, that it may be piped to `-`."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise YamlInputError(f"{what} is a link to {os.readlink(path)!r}, which does not exist") from None
        raise YamlInputError(f"{what} cannot be read (it does not exist)") from None
    except OSError as error:
        raise YamlInputError(f"{what} cannot be read ({error.strerror or error})") from None
    if stat.S_ISDIR(info.st_mode):
        raise YamlInputError(f"{what} is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        pipe = ", or pipe it to '-' (stdin)" if stdin_hint else ""
        raise YamlInputError(
            f"{what} is a {_file_kind(info.st_mode)}, not a regular file; save its contents to a file{pipe}"
        )
    if info.st_size > MAX_INPUT_BYTES:
        raise YamlInputError(_too_large(what))
    try:
        with path.open("rb") as stream:
            return read_stream_bytes(stream, what)
    except OSError as error:
        raise YamlInputError(f"{what} cannot be read ({error.strerror or error})") from None


def read_stream_bytes(stream: IO[bytes], what: str) -> bytes:
    """At most `MAX_INPUT_BYTES` of a binary stream (stdin's buffer)."""
    try:
        data = stream.read(MAX_INPUT_BYTES + 1)
    except OSError as error:
        raise YamlInputError(f"{what} cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_INPUT_BYTES:
        raise YamlInputError(_too_large(what))
    return data


def _too_large(what: str) -> str:
    return f"{what} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB, the most a YAML input may hold"


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    )
    return next((name for test, name in kinds if test(mode)), "special file")


# -- bytes to text ------------------------------------------------------------------------------


def _printable(character: str) -> bool:
    # The characters YAML 1.1 allows in a stream (PyYAML's reader refuses every other one).
    code = ord(character)
    return (
        character in "\t\n\r\x85"
        or 0x20 <= code <= 0x7E
        or 0xA0 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


def _utf16(data: bytes) -> str | None:
    """The encoding of `data` when it reads as UTF-16 text ("UTF-16LE", "UTF-16BE"): a byte-order
    mark, or NUL bytes where ASCII text in UTF-16 has them; None otherwise."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        candidates = ["utf-16-le" if data[:2] == b"\xff\xfe" else "utf-16-be"]
        data = data[2:]
    elif len(data) >= 2 and len(data) % 2 == 0:
        # Text that is mostly ASCII has a NUL in every other byte: the high byte of each character.
        candidates = [
            encoding
            for encoding, high in (("utf-16-le", data[1::2]), ("utf-16-be", data[0::2]))
            if high.count(0) * 2 >= len(high)
        ]
    else:
        return None
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" not in text and all(_printable(character) for character in text):
            return encoding.upper().replace("UTF-16-", "UTF-16")
    return None


def _utf16_message(what: str, encoding: str, kind: str) -> str:
    return (
        f"{what} is {encoding} text, and {kind} is read as UTF-8; save it as UTF-8 (PowerShell: "
        "`Get-Content FILE | Set-Content -Encoding utf8 NEW`, or `... | Out-File -Encoding utf8 FILE`; "
        "elsewhere: `iconv -f UTF-16 -t UTF-8 FILE > NEW`)"
    )


def decode_text(data: bytes, what: str, kind: str = "YAML") -> str:
    """UTF-8 text of `data` without control characters; anything else is not a text file.
    UTF-16 text (what Windows PowerShell's `>` and `Out-File` write) is named as such, with how to
    save it as UTF-8; a byte that is not UTF-8 is named with its line and column."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        encoding = _utf16(data)
        if encoding is not None:
            raise YamlInputError(_utf16_message(what, encoding, kind)) from None
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise YamlInputError(
            f"{what} is not a text file (byte {error.start} at line {line}, column {column} is not UTF-8); "
            f"{kind} is text"
        ) from None
    text = text.removeprefix("\ufeff")
    for offset, character in enumerate(text):
        if not _printable(character):
            if character == "\x00" and (encoding := _utf16(data)) is not None:
                raise YamlInputError(_utf16_message(what, encoding, kind))
            line = text.count("\n", 0, offset) + 1
            column = offset - (text.rfind("\n", 0, offset) + 1) + 1
            raise YamlInputError(
                f"{what} is not a text file (control character U+{ord(character):04X} at line {line}, "
                f"column {column}); {kind} is text"
            )
    return text


def read_text(path: Path | str, what: str, kind: str = "YAML") -> str:
    """The text of a regular file (see `read_file_bytes` and `decode_text`)."""
    return decode_text(read_file_bytes(path, what), what, kind)


# -- parsing ------------------------------------------------------------------------------------


# Called with each map at a Kubernetes object's place (a document, or an item of a document's
# `items` list) and that place ("document 3", "document 1.items[7]"), as soon as the map is
# composed: before the rest of the stream is read and before any value is built.
# The third argument is the document's `kind` when it was read before its `items` ("DeploymentList"
# of the API's own lists, whose items carry no kind of their own), else None.
ObjectHook = Callable[[MappingNode, str, str | None], None]


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader that checks each document's node graph before building it, and hands
    each object's map to `on_object` as it is composed."""

    what = "input"
    on_object: ObjectHook | None = None

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._path: list[Any] = []
        self._documents = 0

    def compose_document(self) -> Any:
        self._documents += 1
        self._document_kind: str | None = None
        return super().compose_document()

    def compose_node(self, parent: Node | None, index: Any) -> Any:
        if self.on_object is None:
            return super().compose_node(parent, index)
        self._path.append(index.value if isinstance(index, ScalarNode) else index)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._path.pop()
        if isinstance(node, MappingNode):
            place = f"document {self._documents}"
            if not self._path:
                self.on_object(node, place, None)
            elif len(self._path) == 2 and self._path[1] == "items" and isinstance(index, int):
                self.on_object(node, f"{place}.items[{index}]", self._document_kind)
        elif self._path == [None] and isinstance(node, ScalarNode) and getattr(index, "value", None) == "kind":
            self._document_kind = node.value
        return node

    def construct_document(self, node: Node) -> Any:
        _check_nodes(node, self.what)
        return super().construct_document(node)


def load_documents(text: str, what: str, on_object: ObjectHook | None = None) -> list[Any]:
    """Every document of a YAML stream (empty ones as None); `on_object` sees each object's map
    while the stream is read (`ObjectHook`), and may refuse the input by raising."""
    return list(_load(text, what, on_object))


def load_document(text: str, what: str) -> Any:
    """The one document of a YAML text (None when empty); several documents are refused."""
    documents = load_documents(text, what)
    if len(documents) > 1:
        raise YamlInputError(f"{what} holds {len(documents)} YAML documents ('---'); one is expected")
    return documents[0] if documents else None


def _load(text: str, what: str, on_object: ObjectHook | None = None) -> Iterator[Any]:
    # A loader class of this input's own, so that its checks name the input.
    loader = type(
        "_InputLoader", (_Loader,), {"what": what, "on_object": staticmethod(on_object) if on_object else None}
    )
    try:
        yield from yaml.load_all(text, Loader=loader)
    except SizingInputError:
        raise
    except yaml.MarkedYAMLError as error:
        raise YamlInputError(f"{what}: {syntax_problem(error)}") from None
    except yaml.YAMLError as error:
        raise YamlInputError(f"{what}: not valid YAML ({' '.join(str(error).split())})") from None
    except RecursionError:
        raise YamlInputError(f"{what}: maps and lists nest more than {MAX_DEPTH} deep") from None
    except (ValueError, OverflowError) as error:
        # int() of a number of thousands of digits, a date that does not exist, ...
        if "integer string conversion" in str(error):
            raise YamlInputError(f"{what}: a number has more than {sys.get_int_max_str_digits():,} digits") from None
        raise YamlInputError(f"{what}: a value cannot be read ({' '.join(str(error).split())[:200]})") from None


def syntax_problem(error: yaml.MarkedYAMLError) -> str:
    """A PyYAML error as one line: where, what, and where the unclosed thing was opened."""
    mark = error.problem_mark or error.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    what = error.problem or "invalid YAML"
    if error.context:
        context_mark = error.context_mark
        opened = f" (opened at line {context_mark.line + 1}, column {context_mark.column + 1})" if context_mark else ""
        what = f"{what}, {error.context}{opened}"
    label = "unsupported YAML" if isinstance(error, yaml.constructor.ConstructorError) else "YAML syntax error"
    return f"{label} at {where}{what}"


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_nodes(root: Node, what: str) -> None:
    """Refuse duplicate keys, an alias inside its own anchor, too deep a nesting and aliases that
    repeat more than `MAX_ALIAS_REPEATS` values; the graph is walked once, without expanding it."""
    size: dict[int, int] = {}  # id(node) -> values under it, aliases expanded
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            children = _children(node)
            size[key] = 1 + sum(size[id(child)] for child in children)
            depth[key] = 1 + max((depth[id(child)] for child in children), default=0)
            open_nodes.discard(key)
            if depth[key] > MAX_DEPTH:
                raise YamlInputError(
                    f"{what}: maps and lists nest more than {MAX_DEPTH} deep (line {node.start_mark.line + 1})"
                )
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise YamlInputError(
                f"{what}: line {node.start_mark.line + 1}: an alias refers to a value that contains it "
                "(a recursive anchor); aliases must refer to values defined before and outside them"
            )
        open_nodes.add(key)
        if isinstance(node, MappingNode):
            _check_duplicate_keys(node, what)
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(_children(node)))
    repeated = size[id(root)] - len(size)
    if repeated > MAX_ALIAS_REPEATS:
        raise YamlInputError(
            f"{what}: the document starting at line {root.start_mark.line + 1} uses aliases (*name) that repeat "
            f"{repeated:,} values, more than the {MAX_ALIAS_REPEATS:,} a document may repeat; write the values "
            "out, or use fewer aliases"
        )


def _check_duplicate_keys(node: MappingNode, what: str) -> None:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag == MERGE_TAG:
            continue
        identity = _key_identity(key_node)
        line = key_node.start_mark.line + 1
        if identity in seen:
            raise YamlInputError(
                f"{what}: key {echo(key_node.value)} appears twice in one map, on line {seen[identity]} and "
                f"line {line}; YAML would keep only the second, so remove one"
            )
        seen[identity] = line


def _key_identity(node: ScalarNode) -> Any:
    if node.tag == STR_TAG:
        return node.value
    try:
        # `1` and `0x1`, `true` and `True` are the same key once read.
        value = yaml.SafeLoader("").construct_object(node)
    except (yaml.YAMLError, ValueError, OverflowError):
        return (node.tag, node.value)
    try:
        hash(value)
    except TypeError:
        return (node.tag, node.value)
    return (node.tag, value)
