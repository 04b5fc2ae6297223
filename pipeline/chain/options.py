"""The chain's options (`pipeline.run(source, Options(...))` or keywords)."""

from __future__ import annotations

from dataclasses import dataclass

from passes.dialects import DIALECTS, dialect
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.mlir import FlattenControlDepTupleOperands
from passes.options import option, pass_option, pass_values

_DIALECT = next(iter(DIALECTS))  # the table's first


@dataclass(frozen=True)
class Options:
    """How the chain runs.

    `reify=False` skips link #1 and `flatten=False` skips link #3, to show
    what each prevents. `scope` is the functions link #3 walks: the chain
    walks "all" of them, which after link #2's symbol-dce are `main` and the
    functions it calls (a GPU command buffer, XLA CPU's outlined loops); with
    "main", the pass's own default, a tuple-shaped predecessor in a called
    function stays bundled. `keep_attributes`: link #3 keeps the rebuilt
    calls' attributes. `isolate`: XLA's parser and importer run in a child
    process (XLA aborts the process on some input). `debug_info` prints
    locations (the HLO names) in the MLIR artifacts. `check=False` stops at
    the Penguin source: no execution, no report (the benchmarks' P3).
    `source_name` names the input in errors (default: the path, `<hlo
    text>`, or the module's name).

    The fields made by `option` or `pass_option` are the flags of
    `hlo2penguin` and `hlo2penguin check`, in this order
    (`pipeline.cli.support.add_chain_options`); those of a pass are that
    pass's declaration, with the chain's own default where it differs."""

    flatten: bool = option(True, help="skip link #3, to see which edges it saves")
    dialect: str = option(_DIALECT, choices=tuple(DIALECTS), help=f"dialect of links #2-#4 (default: {_DIALECT})")
    scope: str = pass_option(
        FlattenControlDepTupleOperands, "scope", default="all",
        help="functions link #3 walks: all (default: after symbol-dce, main and the functions it calls), "
             "main (the pass's own default), first (the binary's reading)")
    keep_attributes: bool = pass_option(FlattenControlDepTupleOperands, "keep_attributes", link="link #3")
    bundle: bool = pass_option(PreserveControlDeps, "bundle", link="link #1")
    reify: bool = True
    isolate: bool = True
    debug_info: bool = True
    check: bool = True
    source_name: str | None = None

    def __post_init__(self):  # before any work: UnknownDialect, FlattenError
        row = dialect(self.dialect)
        if self.flatten:  # the pass holds its options to their declarations
            FlattenControlDepTupleOperands(row, **pass_values(self, FlattenControlDepTupleOperands))
