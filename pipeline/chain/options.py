"""The chain's options (`pipeline.run(source, Options(...))` or keywords)."""

from __future__ import annotations

from dataclasses import dataclass

from passes.dialects import dialect
from passes.mlir import SCOPES, FlattenError


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
    text>`, or the module's name)."""

    dialect: str = "stablehlo"
    bundle: bool = False
    flatten: bool = True
    scope: str = "all"
    keep_attributes: bool = False
    reify: bool = True
    isolate: bool = True
    debug_info: bool = True
    check: bool = True
    source_name: str | None = None

    def __post_init__(self):  # before any work: UnknownDialect, FlattenError
        dialect(self.dialect)
        if self.flatten and self.scope not in SCOPES:
            raise FlattenError(f"unknown scope {self.scope!r}: choose one of {', '.join(SCOPES)}")
