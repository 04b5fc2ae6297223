"""`hlo2penguin-opt`: run link #3 (and any registered MLIR pass) on MLIR, in
the manner of `mlir-opt`.

    hlo2penguin-opt in.mlir --flatten-control-dep-tuple-operands
    hlo2penguin-opt in.mlir --stablehlo-flatten-control-dep-tuple-operands --scope=all
    hlo2penguin-opt in.mlir --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,
        flatten-control-dep-tuple-operands{scope=all keep-attributes=true},canonicalize)'

Our passes are Python-defined, so MLIR's own pipeline parser does not know
their mnemonics; `build_pass_manager` splits the pipeline, adds ours as Python
passes and hands every other element to `PassManager.add` unchanged. Link #3's
flags and its element options are its dataclass fields (`passes.options`).
Exit status: 0 ok, 2 bad input or usage (one line on stderr).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

from jaxlib.mlir import ir, passmanager

from passes.control_dep import CONTROL_DEP_TARGET, is_control_dep
from passes.dialects import DIALECTS
from passes.errors import first_line
from passes.mlir import BY_MNEMONIC, FlattenControlDepTupleOperands
from passes.options import options, parse_element, split_top_level
from pipeline.reading.hints import mlir_tool_hint, with_hint
from pipeline.cli.support import (Parser, UsageError, add_option_flags, end_process, guarded, option_values,
                                  version_line, write_output)
from pipeline.xla.worker import how_it_ended
from pipeline.xla.mlir_context import make_context, register_passes
from pipeline.reading.text import read_path

PROG = "hlo2penguin-opt"
FLATTEN = FlattenControlDepTupleOperands  # link #3: both twins, its options its fields


def build_parser(flatten: type = FLATTEN) -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description="Run the control-dep flatten passes (and registered MLIR passes) on MLIR.")
    p.add_argument("input", nargs="?", default="-", metavar="INPUT",
                   help="MLIR text or bytecode file, or '-' for standard input (default)")
    p.add_argument("-o", "--output", metavar="OUT", help="write here instead of standard output")
    for mnemonic, dialect in BY_MNEMONIC.items():
        p.add_argument(f"--{mnemonic}", dest="passes", action="append_const", const=mnemonic,
                       help=f"run link #3 on {dialect.name.upper()} custom-calls")
    add_option_flags(p, options(flatten))  # --scope, --keep-attributes, --until-unchanged
    p.add_argument("--pass-pipeline", metavar="PIPELINE",
                   help="a textual pipeline, e.g. 'builtin.module(flatten-control-dep-tuple-operands,canonicalize)'")
    p.add_argument("--debug-info", action="store_true", help="print locations")
    p.add_argument("--version", action="store_true", help="print the version (and jax's) and exit")
    return p


def main(argv: list[str] | None = None) -> int:
    return guarded(PROG, lambda: _main(argv))


def entry() -> None:
    """The `hlo2penguin-opt` command: `main`, then the process ends without
    the interpreter's teardown (`pipeline.cli.support.end_process`)."""
    end_process(PROG, main)


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.version:  # before the input is read: its default is standard input
        write_output(None, version_line(PROG) + "\n")
        return 0
    if args.passes and args.pass_pipeline:
        raise UsageError("give either pass flags or --pass-pipeline, not both")
    context = make_context()
    module = parse_input(args.input, context)
    for mnemonic in dict.fromkeys(args.passes or []):
        check_dialect(module, mnemonic)
    pm = build_pass_manager(context, args.pass_pipeline, args.passes or [], **option_values(args, options(FLATTEN)))
    run(pm, module)
    write_output(args.output, module.operation.get_asm(enable_debug_info=args.debug_info) + "\n")
    return 0


def parse_input(path: str, context: ir.Context) -> ir.Module:
    name = "<stdin>" if path == "-" else path
    data = sys.stdin.buffer.read() if path == "-" else read_path(path)  # UnreadableInput: one line
    if not data.strip():
        raise UsageError(f"{name}: input is empty; expected an MLIR module")
    if data.startswith(BYTECODE_MAGIC):
        check_bytecode(data, name)
    else:  # anything else must be text
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{name}: input is neither MLIR text (not UTF-8) nor MLIR bytecode") from None
        try:
            return parse(data, name, context)
        except UsageError as err:
            raise with_hint(err, mlir_tool_hint(data)) from None
    return parse(data, name, context)


BYTECODE_MAGIC = b"ML\xefR"


def check_bytecode(data: bytes, name: str) -> None:
    """MLIR's bytecode reader aborts the process on some corrupted files (a
    heap corruption, a C++ exception thrown through the bindings): a child
    process parses it first, and only bytecode it read cleanly is parsed here."""
    done = subprocess.run([sys.executable, "-m", "pipeline.cli.opt", "--check-bytecode", name], input=data,
                          capture_output=True, check=False)
    if done.returncode == 0:
        return
    said = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode == 3 and said:  # the child's UsageError
        raise UsageError(said)
    if done.returncode < 0:
        raise UsageError(f"{name}: cannot parse MLIR: the bytecode reader aborted ({how_it_ended(done.returncode)}); "
                         "is the file corrupted?")
    raise UsageError(f"{name}: cannot parse MLIR: the bytecode reader failed ({how_it_ended(done.returncode)})")


def _check_bytecode_child(name: str) -> int:
    try:
        parse(sys.stdin.buffer.read(), name, make_context())
    except UsageError as err:
        print(err)
        return 3
    return 0


def parse(data: str | bytes, name: str, context: ir.Context) -> ir.Module:
    diagnostics: list[str] = []

    def collect(d) -> bool:
        diagnostics.append(f"{d.location}: {d.message}")
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        return ir.Module.parse(data, context=context)
    except ir.MLIRError as err:
        first = _first_diagnostic(err, diagnostics)
        raise UsageError(f"{name}: cannot parse MLIR: {first}") from None
    finally:
        handler.detach()


def _first_diagnostic(err, diagnostics: list[str]) -> str:
    details = getattr(err, "error_diagnostics", None)
    if details:
        d = details[0]
        return f"{_short_location(d.location)}: {d.message}"
    if diagnostics:
        return diagnostics[0]
    return first_line(err)


def _short_location(location) -> str:
    m = re.match(r'loc\("?([^"]*)"?:(\d+):(\d+)\)', str(location))
    return f"{m.group(2)}:{m.group(3)}" if m else str(location)


def build_pass_manager(context: ir.Context, pipeline: str | None, flags: list[str], *, flatten: type = FLATTEN,
                       **defaults) -> passmanager.PassManager:
    """A PassManager on builtin.module: our mnemonics become Python passes
    (`flatten`'s, with `defaults`, its options as the flags gave them, under
    each element's own), everything else is MLIR's own textual pipeline."""
    register_passes()
    with context:
        pm = passmanager.PassManager("builtin.module")
        elements = ([(m, None) for m in flags] if pipeline is None else _split_pipeline(pipeline))
        for element, text in elements:
            if element in BY_MNEMONIC:  # an unknown key or a bad value: OptionError, "ELEMENT: ..."
                flatten(BY_MNEMONIC[element], **{**defaults, **parse_element(flatten, text, element)}).add_to(pm)
            else:
                try:
                    pm.add(element)
                except ValueError as err:
                    raise UsageError(f"pass pipeline: {first_line(err)}") from None
    return pm


def _split_pipeline(pipeline: str) -> list[tuple[str, str | None]]:
    """'builtin.module(a,b{x=1},func.func(c))' → its top-level elements;
    our own come as (mnemonic, the text between their braces), any other
    as (element, None)."""
    m = re.fullmatch(r"builtin\.module\((.*)\)", pipeline.strip(), re.S)
    if not m:
        raise UsageError("--pass-pipeline must be anchored on the module: 'builtin.module(...)'")
    out = []
    for element in split_top_level(m.group(1)):
        name, brace, rest = element.partition("{")
        if name.strip() in BY_MNEMONIC:
            out.append((name.strip(), rest.removesuffix("}") if brace else None))
        else:
            out.append((element, None))
    return out


def control_dep_calls(module: ir.Module) -> dict[str, int]:
    """How many control-dep custom-calls the module holds, by dialect name."""
    by_op = {d.custom_call: d.name for d in DIALECTS.values()}
    found = dict.fromkeys(DIALECTS, 0)

    def visit(op):
        name = by_op.get(op.name)
        if name is not None and is_control_dep(op):
            found[name] += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def check_dialect(module: ir.Module, mnemonic: str) -> None:
    """A flatten flag for a dialect the module's control-dep calls are not
    in would change nothing, silently (the MHLO pass on StableHLO): a usage
    error that names the twin to use. A module with no control-dep call at
    all is fine: there is nothing to flatten."""
    wanted = BY_MNEMONIC[mnemonic]
    found = control_dep_calls(module)
    if found[wanted.name]:
        return
    others = [DIALECTS[name] for name, count in found.items() if count]
    if others:
        other = others[0]
        raise UsageError(f"--{mnemonic} flattens {wanted.custom_call} @{CONTROL_DEP_TARGET} calls, and the module "
                         f"has none (it has {found[other.name]} {other.custom_call} ones): "
                         f"use --{other.flatten_mnemonic}")


def run(pm: passmanager.PassManager, module: ir.Module) -> None:
    try:
        pm.run(module.operation)
    except ir.MLIRError as err:
        raise UsageError(f"pass pipeline failed: {_first_diagnostic(err, [])}") from None


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check-bytecode"]:  # check_bytecode's child process
        sys.exit(_check_bytecode_child(sys.argv[2]))
    entry()
