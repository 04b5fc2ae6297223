"""The one base class of the chain's errors: what went wrong and where, on
one line. Each CLI catches `ChainError` once and prints `PROG: error: LINE`
with exit status 2; every error a user can cause derives from it."""

from __future__ import annotations


class ChainError(ValueError):
    """`where: message` (or `message` where no place is known). `where` is
    `file:line:col`, `file:line`, `%name in %computation` or a stage name."""

    def __init__(self, message: str, where: str | None = None):
        self.message, self.where = message, where
        super().__init__(f"{where}: {message}" if where else message)

    def __str__(self) -> str:  # ours, also where a subclass is an OSError too
        return f"{self.where}: {self.message}" if self.where else self.message


def first_line(err: BaseException, *, with_type: bool = False) -> str:
    """An exception on one line, for a row or a message of ours: the first
    line of what it says (`Type: line` with `with_type`); the type's name
    where it says nothing."""
    text = str(err).strip()
    line = text.splitlines()[0] if text else ""
    if not line:
        return type(err).__name__
    return f"{type(err).__name__}: {line}" if with_type else line
