"""The HLO names in MLIR locations: link #2 writes them, link #3's errors,
link #4 and the chain's accounting read them. One module does both.

Two forms:
- the key: link #2 hands XLA's importer each instruction with its metadata
  replaced by `op_name="h2p.N"` (the importer names an op after its
  instruction only when there is no op_name); the op comes back at
  `loc("h2p.N")`;
- the HLO location it then gets, `fused<"computation">["instruction",
  original metadata location]`: the HLO name, the computation as the fused
  location's metadata, and the source position XLA would have given it.
"""

from __future__ import annotations

import re

from jaxlib.mlir import ir

_KEY_PREFIX = "h2p."


def key_name(index: int) -> str:
    """The op_name that keys instruction `index`."""
    return f"{_KEY_PREFIX}{index}"


def key_of(location) -> int | None:
    """The index a key location carries, None for any other location."""
    name = getattr(location, "name_str", None)  # only a NameLoc has one
    if name is None and type(location) is ir.Location:  # not downcast (a diagnostic's)
        name = hlo_name(location)[0]
    if name is None or not name.startswith(_KEY_PREFIX):
        return None
    index = name[len(_KEY_PREFIX):]
    return int(index) if index.isdigit() else None


def hlo_location(instruction: str, computation: ir.Attribute, original: ir.Location | None) -> ir.Location:
    """The location of an op made from `instruction` of `computation` (a
    StringAttr, shared by the computation's ops), `original` being what XLA
    made of its metadata. Needs an active context."""
    parts = [ir.Location.name(instruction)]
    if original is not None:
        parts.append(original)
    return ir.Location.fused(parts, metadata=computation)


_LOCATION_TEXT = re.compile(r'^loc\((?:fused(?:<"((?:[^"\\]|\\.)*)">)?\[)?"((?:[^"\\]|\\.)*)"')


def hlo_name(location) -> tuple[str | None, str | None]:
    """(instruction name, computation) of a location link #2 made; a plain
    `loc("name")` gives no computation. Read through the location classes
    (3x faster than matching printed text)."""
    if isinstance(location, ir.FusedLoc):
        parts = location.locations
        name = getattr(parts[0], "name_str", None) if parts else None
        return name, _string(location.metadata)
    if type(location) is ir.Location:  # not downcast (e.g. a diagnostic's): read the text
        m = _LOCATION_TEXT.match(str(location))
        return (m.group(2), m.group(1)) if m else (None, None)
    return getattr(location, "name_str", None), None


def describe(location) -> str:
    """For people: `file:line:col` (`line:col` for MLIR parsed from a
    string), `%name in %computation` for an HLO location, else MLIR's own
    printing."""
    if isinstance(location, ir.FileLineColLoc):
        where = f"{location.start_line}:{location.start_col}"
        return where if location.filename == "-" else f"{location.filename}:{where}"
    name, computation = hlo_name(location) if isinstance(location, (ir.FusedLoc, ir.NameLoc)) else (None, None)
    if name is None:
        return str(location)
    return f"%{name}" + (f" in %{computation}" if computation else "")


def _string(attr) -> str | None:
    """A StringAttr's value (the bindings hand metadata back as a plain Attribute)."""
    if attr is None:
        return None
    try:
        return ir.StringAttr(attr).value
    except ValueError:
        return None
