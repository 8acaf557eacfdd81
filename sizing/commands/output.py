"""A command's result, on a terminal or in a file.

On stdout (`for_encoding`): the report's characters that the output's encoding cannot show (a
terminal or `PYTHONIOENCODING` of ASCII or Latin-1) are written as plain ones: the bars `█░` as
`#.`, `×` as `x`, `…` as `...`, `←` as `<-`, `≤` as `<=`, `µ` as `u`; any other (a name in the
input) as its Python escape, `\\u00e9`.

In a file (`write_atomically`: `plan --output`, `catalog refresh --output`), always UTF-8.
The text goes to a scratch file beside the target, `.<name>.<pid>-<random>.tmp`, which is then
renamed over the target: a reader, or a second run writing the same file, sees the old file or the
new one, never a mix. A target that is a symbolic link is written through (the file it points to
is replaced, the link stays). The scratch file is removed when the write fails or the command is
stopped by SIGINT or SIGTERM (sizing.interrupts); scratch files of runs killed outright are
removed by the next write to the same file.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import tempfile
from pathlib import Path

from sizing.errors import SizingInputError
from sizing.interrupts import process_alive, undo_on_stop

# What the report writes, and the plain characters it falls back to.
PLAIN_CHARACTERS = {"█": "#", "░": ".", "×": "x", "…": "...", "←": "<-", "≤": "<=", "µ": "u"}


def for_encoding(text: str, encoding: str | None) -> str:
    """`text` as `encoding` can show it: the report's own characters that it cannot encode as
    PLAIN_CHARACTERS says, any other as its backslash escape. An unknown encoding counts as UTF-8."""
    try:
        codec = codecs.lookup(encoding or "utf-8")
    except LookupError:
        return text
    try:
        codec.encode(text)
    except UnicodeEncodeError:
        pass
    else:
        return text
    shown = []
    for character in text:
        try:
            codec.encode(character)
        except UnicodeEncodeError:
            plain = PLAIN_CHARACTERS.get(character, character.encode("ascii", "backslashreplace").decode("ascii"))
            shown.append(plain)
        else:
            shown.append(character)
    return "".join(shown)


def real_target(path: Path, flag: str) -> Path:
    """The file to replace for `path`: the path itself, or where a symbolic link points."""
    if not path.is_symlink():
        return path
    target = path.resolve()
    if not target.parent.is_dir():
        raise SizingInputError(
            f"{flag} {str(path)!r} is a symbolic link to {str(target)!r}, whose folder does not exist; "
            "create it, or give another file"
        )
    return target


def check_output(path: Path, flag: str) -> Path:
    """Refuse, before any work, an output that is not a regular file or whose folder cannot take
    one; return the file that will be replaced (through a symbolic link)."""
    target = real_target(path, flag)
    if target.is_dir():
        raise SizingInputError(f"{flag} {str(path)!r} is a folder; give the path of a file to write")
    if target.exists() and not target.is_file():
        raise SizingInputError(f"{flag} {str(path)!r} is not a regular file; give the path of a file to write")
    try:
        descriptor, probe = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp")
        os.close(descriptor)
        os.unlink(probe)
    except OSError as error:
        raise SizingInputError(f"{flag} {str(path)!r}: cannot be written ({error.strerror})") from None
    return target


def write_atomically(path: Path, text: str, flag: str) -> Path:
    """Write `text` (UTF-8) to `path` whole, through a scratch file renamed over it; return the
    file replaced. The file gets the mode a new file would have (the umask's)."""
    target = check_output(path, flag)
    remove_stale_scratch(target)
    scratch: list[str] = []

    def remove() -> None:
        for name in scratch:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)

    try:
        with undo_on_stop(remove):
            descriptor, name = tempfile.mkstemp(
                dir=target.parent, prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp"
            )
            scratch.append(name)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(name, 0o666 & ~umask)
            os.replace(name, target)
    except OSError as error:
        remove()
        raise SizingInputError(f"{flag} {str(path)!r}: cannot be written ({error.strerror})") from error
    except BaseException:
        remove()
        raise
    return target


def remove_stale_scratch(target: Path) -> list[Path]:
    """Remove the scratch files beside `target` of processes no longer running; return them."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(\d+)-[A-Za-z0-9_]+\.tmp")
    removed = []
    for entry in sorted(target.parent.iterdir()):
        match = pattern.fullmatch(entry.name)
        if match is None or not entry.is_file() or entry.is_symlink() or process_alive(int(match.group(1))):
            continue
        try:
            entry.unlink()
        except FileNotFoundError:
            continue
        removed.append(entry)
    return removed
