"""The chain's options (`pipeline.run(source, Options(...))` or keywords)."""

from __future__ import annotations

import dataclasses
import inspect
import textwrap
import typing
from collections.abc import Mapping
from dataclasses import dataclass

from passes.dialects import DIALECTS, dialect
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.mlir import FlattenControlDepTupleOperands
from passes.options import OptionTypeError, check_types, option, pass_option, pass_values

_DIALECT = next(iter(DIALECTS))  # the table's first
_DOC = "doc"


def keyword(default, doc: str):
    """A field of `Options` that is a keyword of `pipeline.run` and no
    command-line flag: `doc` says what it does in `run`'s help."""
    return dataclasses.field(default=default, metadata={_DOC: doc})


@dataclass(frozen=True)
class Options:
    """How the chain runs: `pipeline.run(source, Options(...))`, or the same
    names as keywords (`pipeline.run(source, dialect="mhlo")`).

    The fields made by `option` or `pass_option` are also the flags of
    `hlo2penguin` and `hlo2penguin check`, in this order
    (`pipeline.cli.support.add_chain_options`); those of a pass are that
    pass's declaration, with the chain's own default where it differs (the
    chain's link #3 walks every function: after link #2's symbol-dce that
    is `main` and the functions it calls, a GPU command buffer or XLA
    CPU's outlined loops; with "main", the pass's own default, a
    tuple-shaped predecessor in a called function stays bundled). The
    fields made by `keyword` are the API's alone."""

    flatten: bool = option(True, help="skip link #3, to see which edges it saves")
    dialect: str = option(_DIALECT, choices=tuple(DIALECTS), help=f"dialect of links #2-#4 (default: {_DIALECT})")
    scope: str = pass_option(
        FlattenControlDepTupleOperands, "scope", default="all",
        help="functions link #3 walks: all (default: after symbol-dce, main and the functions it calls), "
             "main (the pass's own default), first (the binary's reading)")
    keep_attributes: bool = pass_option(FlattenControlDepTupleOperands, "keep_attributes", link="link #3")
    bundle: bool = pass_option(PreserveControlDeps, "bundle", link="link #1")
    verify_each: bool = option(
        False, help="check each link's output as it is handed on: XLA reads link #1's output back, MLIR's "
                    "verifier checks links #2 and #3's (also on with HLO2PENGUIN_VERIFY_EACH=1)")
    reify: bool = keyword(True, "False skips link #1, to show what it prevents (the importer drops "
                               "control-predecessors)")
    isolate: bool = keyword(True, "XLA's parser and importer run in a child process (XLA aborts the process "
                                  "on some input)")
    debug_info: bool = keyword(True, "locations (the HLO names) in the MLIR the result prints")
    check: bool = keyword(True, "False stops at the Penguin source: no execution, no report (the "
                                "benchmarks' P3)")
    source_name: str | None = keyword(None, "the input's name in errors (default: the path, `<hlo text>`, or "
                                            "the module's name)")

    def __post_init__(self):  # before any work: OptionTypeError, UnknownDialect, FlattenError
        check_types(self)
        row = dialect(self.dialect)
        if self.flatten:  # the pass holds its options to their declarations
            FlattenControlDepTupleOperands(row, **pass_values(self, FlattenControlDepTupleOperands))


def resolve(options=None, overrides: Mapping | None = None) -> Options:
    """The `Options` that `options` (an `Options`, a mapping of its fields, or
    None for the defaults) and the keywords `overrides` make (keywords win):
    where options enter the chain, each held to its declaration."""
    if options is None:
        options = Options()
    elif isinstance(options, Mapping):
        options = Options(**_known(options))
    elif not isinstance(options, Options):
        raise OptionTypeError(f"options: give a pipeline.Options(...) or a mapping of its fields (a dict), "
                              f"not a {type(options).__name__}")
    return dataclasses.replace(options, **_known(overrides)) if overrides else options


def _known(values: Mapping) -> Mapping:
    names = [f.name for f in dataclasses.fields(Options)]
    unknown = [str(k) for k in values if k not in names]
    if unknown:
        raise OptionTypeError(f"unknown option(s) {', '.join(map(repr, unknown))}: the options are {', '.join(names)}")
    return values


def option_lines() -> list[str]:
    """Each field of `Options` as `name: type = default`, then what it does."""
    hints = typing.get_type_hints(Options)
    lines = []
    for f in dataclasses.fields(Options):
        kind = getattr(hints[f.name], "__name__", None) or str(hints[f.name]).replace("typing.", "")
        said = f.metadata.get("help")
        if said is not None and f.default is True:  # the help is its --no-NAME flag's
            said = f"False: {said}"
        lines.append(f"    {f.name}: {kind} = {f.default!r}")
        lines += textwrap.wrap(said or f.metadata[_DOC], 96, initial_indent=" " * 8, subsequent_indent=" " * 8)
    return lines


def takes_options(fn):
    """`fn`, whose `**overrides` are the fields of `Options`, with those
    fields in its signature (by name, typed, with their defaults) and listed
    in its docstring: `help(pipeline.run)` shows them, from this one
    declaration."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(Options)
    taken = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    names = {p.name for p in taken}
    taken += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=hints[f.name])
              for f in dataclasses.fields(Options) if f.name not in names]
    fn.__signature__ = signature.replace(parameters=taken)
    fn.__doc__ = (inspect.cleandoc(fn.__doc__ or "") + "\n\nOptions (keywords, or fields of `Options`):\n"
                  + "\n".join(option_lines()) + "\n")
    return fn
