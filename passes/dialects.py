"""The op names of the MLIR dialects the chain meets, in one table.

Link #2 (the importer), link #3 (the flatten twins), link #4 (the printer),
the chain's accounting and the Penguin executor read op names from here; no
other module spells `"stablehlo.tuple"` (as MLIR's ODS declares each op once).
Pure data: the Penguin runtime imports it on a machine without jaxlib.

    from passes.dialects import DIALECTS, TUPLE_OPS
    DIALECTS["mhlo"].custom_call      # 'mhlo.custom_call'
    kind("stablehlo.add")             # 'add': what the executor's rules are keyed by
"""

from __future__ import annotations

from dataclasses import dataclass

from passes.errors import ChainError


@dataclass(frozen=True)
class Dialect:
    """One dialect links #2-#4 can work in: its ops that the chain looks at
    by name, and the passes that concern it."""

    name: str
    custom_call: str
    tuple: str
    get_tuple_element: str
    return_: str
    while_: str
    if_: str
    async_done: str
    # Link #3's twin for this dialect (its command-line mnemonic).
    flatten_mnemonic: str
    # The MLIR passes that take XLA's importer's output (StableHLO) into it.
    from_stablehlo: tuple[str, ...]


STABLEHLO = Dialect(
    name="stablehlo",
    custom_call="stablehlo.custom_call",
    tuple="stablehlo.tuple",
    get_tuple_element="stablehlo.get_tuple_element",
    return_="stablehlo.return",
    while_="stablehlo.while",
    if_="stablehlo.if",
    async_done="stablehlo.async_done",
    flatten_mnemonic="stablehlo-flatten-control-dep-tuple-operands",
    from_stablehlo=(),
)

MHLO = Dialect(
    name="mhlo",
    custom_call="mhlo.custom_call",
    tuple="mhlo.tuple",
    get_tuple_element="mhlo.get_tuple_element",
    return_="mhlo.return",
    while_="mhlo.while",
    if_="mhlo.if",
    async_done="mhlo.async_done",
    flatten_mnemonic="flatten-control-dep-tuple-operands",
    # Measured with jaxlib 0.10.2: it refuses the async ops of collectives.
    from_stablehlo=("stablehlo-legalize-to-hlo",),
)

# The dialects of links #2-#3, in the order the CLIs offer them (the first is the default).
DIALECTS: dict[str, Dialect] = {d.name: d for d in (STABLEHLO, MHLO)}
BY_MNEMONIC: dict[str, Dialect] = {d.flatten_mnemonic: d for d in DIALECTS.values()}

# The func dialect, which holds the functions of every imported module.
FUNC = "func"
FUNC_FUNC = "func.func"
FUNC_RETURN = "func.return"

# The namespaces whose ops the Penguin executor runs, by kind.
EXECUTABLE = (*DIALECTS, FUNC)


def _of_every_dialect(field: str) -> frozenset[str]:
    return frozenset(getattr(d, field) for d in DIALECTS.values())


CUSTOM_CALL_OPS = _of_every_dialect("custom_call")
TUPLE_OPS = _of_every_dialect("tuple")
GET_TUPLE_ELEMENT_OPS = _of_every_dialect("get_tuple_element")
# Ops that only pack or unpack values: XLA's importer makes them for tuple shapes.
STRUCTURAL_OPS = TUPLE_OPS | GET_TUPLE_ELEMENT_OPS
RETURN_OPS = _of_every_dialect("return_") | {FUNC_RETURN}
WHILE_OPS = _of_every_dialect("while_")
IF_OPS = _of_every_dialect("if_")
ASYNC_DONE_OPS = _of_every_dialect("async_done")


class UnknownDialect(ChainError):
    """A dialect the table does not have was asked for."""


def dialect(name: str) -> Dialect:
    """The table's row for `name`; UnknownDialect names the choices."""
    try:
        return DIALECTS[name]
    except (KeyError, TypeError):
        choices = " or ".join(repr(d) for d in DIALECTS)
        raise UnknownDialect(f"unknown dialect {name!r}: choose {choices}") from None


def namespace(op_name: str) -> str:
    """'stablehlo' for 'stablehlo.add'."""
    return op_name.partition(".")[0]


def kind(op_name: str) -> str:
    """'add' for 'stablehlo.add' and 'mhlo.add': the same op in every dialect."""
    return op_name.partition(".")[2]
