"""What the chain checks of an HLO input before XLA's parser sees it: that
it is text at all. Everything about the module itself is XLA's to judge."""

from __future__ import annotations

import os

from passes.errors import ChainError


class HloSyntaxError(ChainError):
    """An input that is no HLO text: `source:line:column: message`, one line."""

    def __init__(self, message: str, line: int, column: int, source: str | None = None):
        super().__init__(f"{source}:{line}:{column}: {message}" if source else f"{line}:{column}: {message}")
        self.line, self.column = line, column


def decode(data: str | bytes, source: str | None = None) -> str:
    """The input as text: HloSyntaxError if it is not UTF-8 (a binary proto,
    say), starts with a byte-order mark, or is empty."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as err:
            head = data[: err.start]
            line = head.count(b"\n") + 1
            # Columns count characters, as everywhere else; the line's prefix is valid UTF-8.
            column = len(head[head.rfind(b"\n") + 1:].decode("utf-8")) + 1
            raise HloSyntaxError(
                f"input is not UTF-8 text (byte 0x{err.object[err.start]:02x}); "
                "HLO modules are text: pass the .txt that XLA dumped, not a binary proto",
                line, column, source) from None
    if data.startswith("\ufeff"):
        raise HloSyntaxError("the input starts with a byte-order mark (U+FEFF), which XLA's parser refuses too; "
                             "save it as UTF-8 without one", 1, 1, source)
    if not data.strip():
        raise HloSyntaxError("input is empty; expected an HLO module", 1, 1, source)
    return data


def names_a_file(source) -> bool:
    """Whether an HLO input names a file rather than holding the text: a path
    object, or a non-blank str with no line break and no `{` (every module
    has a computation body, and a file name has neither)."""
    if isinstance(source, os.PathLike):
        return True
    return isinstance(source, str) and "\n" not in source and "{" not in source and bool(source.strip())


class UnreadableInput(ChainError, OSError):
    """A path that cannot be read: `cannot read input 'PATH': REASON`, with
    the errno, strerror and filename of the OSError behind it."""

    def __init__(self, path: str, reason: OSError):
        super().__init__(f"cannot read input '{path}': {reason.strerror}")
        self.errno, self.strerror, self.filename = reason.errno, reason.strerror, path


def read_path(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise UnreadableInput(path, err) from None
