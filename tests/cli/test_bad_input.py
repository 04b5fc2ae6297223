"""Bad input, one row per case: the tables of docs/bad-input.md.

Each row runs a CLI (`hlo2penguin` or `hlo2penguin-opt`) twice: once with a
fresh `-o` file, once with an existing one (once, for the rows whose `-o` is
the bad part, and for accepted inputs). A bad input must give exactly one
line on stderr (`PROG: error: MESSAGE`, the place first), exit status 2, no
traceback, nothing on stdout, and leave the directory as it was: the fresh
file not created, the existing one untouched (same bytes, same inode, same
mtime), no `.hlo2penguin-*.tmp`. Rows marked `script` make their first run
through the installed console script in a subprocess, where an XLA abort or a
crash would show as a signal; the others call `pipeline.cli.hlo2penguin.main` /
`pipeline.cli.opt.main` in-process (capturing file descriptor 2, where C++
diagnostics go).

Through the Python API (`pipeline.run`, `pipeline.reading.text.decode`,
`pipeline.xla.isolated.parse`, `pipeline.xla.importer.import_hlo`; the flatten pass and
the printer for MLIR) the same input raises a specific exception type whose
message is the CLI's line without its `PROG: error: ` prefix. Rows with
`message=None` are inputs accepted on purpose (as XLA, or link #3 as the
binary does, accepts them: docs/link3-contract.md#walk-filter-which-calls-are-rebuilt): exit 0,
the output written.

XLA's parser is the chain's one reader: beyond the text checks (not UTF-8,
a byte-order mark, empty: `HloSyntaxError`), every HLO input it refuses is
refused with XLA's own words and position. Those rows (`message=XLA`) take
their expected line from XLA itself at test time (`xla_verdict`: jaxlib's
parser in a child process, where it may abort), so they hold for whichever
jaxlib runs them: `in.hlo:L:C: XLA's parser: MSG` where XLA says `was parsing
L:C: error: MSG` first, or `in.hlo: XLA's parser aborted (signal N): ...`
where it kills the process (then only the isolated APIs are asked).

The other test files cover the success paths and more spellings of some of
these errors (tests/cli/test_cli.py, tests/cli/test_opt_cli.py, tests/reading/test_xla_verdict.py);
this one is the contract, row by row.
"""

from __future__ import annotations

import functools
import glob
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable

import pytest
from jaxlib.mlir import ir

import pipeline
from passes.control_dep import CONTROL_DEP_TARGET, ControlDepError, is_control_dep
from pipeline.reading.parsed import Parsed
from pipeline.reading.text import HloSyntaxError, decode
from passes.mlir import STABLEHLO, FlattenControlDepTupleOperands, FlattenResult
from pipeline.cli import hlo2penguin as cli
from pipeline.cli import opt
from pipeline.reading.binary import BadBinary
from pipeline.reading.text import UnreadableInput
from pipeline.xla.importer import ImportFailed, UnknownDialect, import_hlo
from pipeline.xla.mlir_context import make_context
from pipeline.xla.isolated import XlaRejected, parse, parse_with_xla
from printer import print_penguin
from pipeline.xla import native
from paths import DOCS

BIN = os.path.dirname(sys.executable)
SCRIPTS = {prog: shutil.which(prog, path=BIN) for prog in ("hlo2penguin", "hlo2penguin-opt")}
MAINS = {"hlo2penguin": cli.main, "hlo2penguin-opt": opt.main}
HLO, MLIR = "in.hlo", "in.mlir"  # input file names, relative to the test's directory
KEEP = b"an existing output file: keep me\n"

# A good module; the rows below break it in one place each.
GOOD = """\
HloModule m
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %b = f32[4]{0} exponential(%x), metadata={op_name="jit(f)/exp" source_file="f.py" source_line=3}
  ROOT %s = f32[4]{0} add(%b, %x), control-predecessors={%a}
}
"""
TWO_COMPUTATIONS = """\
HloModule m
%helper (y: f32[4]) -> f32[4] {
  %y = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%y)
}
%main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  ROOT %s = f32[4]{0} add(%a, %x), control-predecessors={%a}
}
"""


def entry(*lines: str, name: str = "m") -> str:
    body = "".join(f"  {line}\n" for line in lines)
    return f"HloModule {name}\nENTRY %main (x: f32[4]) -> f32[4] {{\n  %x = f32[4]{{0}} parameter(0)\n{body}}}\n"


def control_dep_call(*operands: str) -> str:
    return f'%c = f32[4]{{0}} custom-call({", ".join(operands)}), custom_call_target="{CONTROL_DEP_TARGET}"'


# The head of a serialized HloModuleProto (jaxlib 0.10.2's, of GOOD): binary, not UTF-8.
PROTO = b"\n\x01m\x12\x04main\x1a\x80\x02\n\x04main\x12(\n\x01x\x12\tparameter\x1a\x10\x10\x0b\x1a\x01"
PROTO_CUT = PROTO.index(b"\x1a")  # its computations field (3, length 256: 0x80 0x02), cut short

CALL_NO_OPERANDS = f"""\
func.func @main(%d: tensor<4xf32>) -> tensor<4xf32> {{
  %c = stablehlo.custom_call @{CONTROL_DEP_TARGET}() {{has_side_effect = true}} : () -> tensor<4xf32>
  %r = stablehlo.add %c, %d : tensor<4xf32>
  return %r : tensor<4xf32>
}}
"""
CALL_DATA_ONLY = f"""\
func.func @main(%d: tensor<4xf32>) -> tensor<4xf32> {{
  %c = stablehlo.custom_call @{CONTROL_DEP_TARGET}(%d) {{has_side_effect = true}} : (tensor<4xf32>) -> tensor<4xf32>
  %r = stablehlo.add %c, %d : tensor<4xf32>
  return %r : tensor<4xf32>
}}
"""


def corrupted_bytecode() -> bytes:
    """CALL_DATA_ONLY as MLIR bytecode, its producer string no longer
    terminated: MLIR's reader throws a C++ exception through the bindings
    (the process aborts) when it reads that file in-process."""
    buffer = io.BytesIO()
    ir.Module.parse(CALL_DATA_ONLY, context=make_context()).operation.write_bytecode(buffer)
    data = buffer.getvalue()
    end = data.index(b"\x00", 5)  # magic, version, then the producer string "MLIR…git\0"
    return data[:end] + b"\xff" + data[end + 1:]


# --------------------------------------------------------------------------
# The API side of each row: callables on the input's bytes and the row's
# places (run in the test's directory). For a bad input each must raise the row's exception type with
# the CLI's message; for an accepted one, check what it returns.
# --------------------------------------------------------------------------


def via_decode(data, places):
    decode(data, HLO)


def via_parse(data, places):
    parse(data.decode(), HLO)


def via_parse_isolated(data, places):
    parse(data.decode(), HLO, isolate=True)


def via_run(data, places):
    pipeline.run(HLO, isolate=False)


def via_run_isolated(data, places):
    pipeline.run(HLO)


def via_import(data, places):
    import_hlo(data.decode(), source_name=HLO, isolate=False)  # the importer takes text (or a Parsed)


def via_import_isolated(data, places):
    import_hlo(data.decode(), source_name=HLO)


def via_printer_unflattened(data, places):
    pipeline.run(HLO, isolate=False, flatten=False)  # link #4 meets the call without link #3


# What the chain checks of the text before XLA: the input as a str where it is one.
TEXT = (via_decode, via_run, via_run_isolated)
TEXT_STR = (*TEXT, via_import)
# XLA's parser refuses the input: every API, in this process or in a child.
XLA_REFUSES = (via_parse, via_parse_isolated, via_run, via_run_isolated, via_import, via_import_isolated)
# XLA's parser kills the process it runs in: only the APIs that run it in a child.
XLA_ABORTS = (via_parse_isolated, via_run_isolated, via_import_isolated)


def parse_mlir(data: bytes) -> ir.Module:
    return ir.Module.parse(data.decode(), context=make_context())


def calls(module: ir.Module) -> list:
    found = []
    module.operation.walk(lambda op: (found.append(op) if is_control_dep(op) else None) or ir.WalkResult.ADVANCE)
    return found


def accepts_data_only_call(data, places):
    """Only the data operand: no edge; the call aliases its operand."""
    result = pipeline.run(HLO, isolate=False)
    assert result.report.totals()["edges"] == 0 and result.report.dep_edges == 0
    assert "add_dep_edge" not in result.penguin_source
    assert re.search(r"\('stablehlo\.add', 's', \[x, x\]", result.penguin_source)  # %s reads %x through the call


def accepts_no_entry(data, places):
    """XLA takes the last computation as the entry; so do we."""
    assert native.read(data.decode(), HLO).proto.entry_computation_name == "main"
    assert parse_with_xla(data.decode()).to_string().count("ENTRY %main") == 1
    result = pipeline.run(HLO, isolate=False)
    assert result.report.count("preserved") == 1 and not result.report.lost
    assert [(e.computation, e.predecessor, e.successor) for e in result.report.edges] == [("main", "a", "s")]


def accepts_names_repeated_across_computations(data, places):
    """Names are per computation: `%n` of main is not `%n` of helper (XLA may
    rename one, `n.1`), and the edge names main's `%n` as written."""
    parsed = native.read(data.decode(), HLO)
    written = {comp.name: {parsed.name(comp.name, i.name): i.id for i in comp.instructions}
               for comp in parsed.proto.computations}
    assert written["helper"]["n"] != written["main"]["n"]
    assert parsed.control_edges() == [("main", "n", "s")]
    result = pipeline.run(HLO, isolate=False)
    assert result.report.count("preserved") == 1
    assert [(e.computation, e.predecessor, e.successor) for e in result.report.edges] == [("main", "n", "s")]


def flatten_leaves_call_without_operands_and_printer_refuses(data, places):
    """The binary's walk filter skips a call with no operands
    (docs/link3-contract.md#walk-filter-which-calls-are-rebuilt); the printer,
    which must give its result a value, refuses it."""
    module = parse_mlir(data)
    assert FlattenControlDepTupleOperands(STABLEHLO).run(module) == FlattenResult(False, 0, 0)
    with pytest.raises(ControlDepError) as info:
        print_penguin(module)
    assert str(info.value) == (f"2:8: an {CONTROL_DEP_TARGET} custom-call with no operands is not a control "
                               "dependency: it needs at least the data operand its result stands for")


def flatten_and_printer_accept_data_only_call(data, places):
    module = parse_mlir(data)
    assert FlattenControlDepTupleOperands(STABLEHLO).run(module) == FlattenResult(False, 0, 0)
    [call] = calls(module)
    assert len(call.operands) == 1
    source = print_penguin(module)
    assert "add_dep_edge" not in source
    assert re.search(r"\('stablehlo\.add', '[^']*', \[arg0, arg0\]", source)  # the add reads %d through the call


def run_with_dialect_typo(data, places):
    pipeline.run(HLO, dialect="stablhlo")


def run_missing_with_dialect_typo(data, places):
    pipeline.run("nope.hlo", dialect="stablhlo")  # the dialect is checked before the input is read


def import_with_dialect_typo(data, places):
    import_hlo(data, "stablhlo", source_name=HLO)


def run_path(path: str) -> Callable:
    def run_path(data, places):
        pipeline.run(fill(path, places))
    return run_path


# --------------------------------------------------------------------------
# XLA's verdict, asked of XLA itself
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class FromXla:
    """A row's message is XLA's parser's own verdict on `text` (the row's
    input when None; a callable is asked at test time), and the row's API
    side is XLA_REFUSES, or XLA_ABORTS where XLA kills the process."""

    text: str | Callable[[], str] | None = None


XLA = FromXla()

# jaxlib's parser on stdin, in a child: it may abort. Its complaint on stdout, exit 1.
JUDGE = """\
import sys
import jaxlib._hlo as xla_hlo
try:
    xla_hlo.hlo_module_from_text(sys.stdin.buffer.read().decode("utf-8"))
except Exception as err:
    sys.stdout.write(str(err))
    sys.exit(1)
"""


@functools.cache
def xla_verdict(text: str) -> tuple[str, bool]:
    """(the CLI's message, whether XLA aborted) for `text` in `in.hlo`, from
    what jaxlib's parser itself says of it in a child process: its first
    `was parsing L:C: error: MSG` (and the next, if the first is a lead-in
    ending in `:` at the same place), or the signal that killed it and its failed
    CHECK (with the `ERROR:` line XLA prints after it), if it printed one."""
    done = subprocess.run([sys.executable, "-c", JUDGE], input=text.encode(), capture_output=True, timeout=300)
    said, log = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    if done.returncode < 0:
        check = re.search(r"\] (Check failed: .*?) *$(?:\nERROR: (.*)$)?", log, re.M)
        reason = "no message" if check is None else check[1] + (f" ({check[2]})" if check[2] else "")
        return f"{HLO}: XLA's parser aborted (signal {-done.returncode}): {reason}", True
    assert done.returncode == 1, f"XLA's parser does not refuse this row's input (exit {done.returncode}): {log}"
    errors = re.findall(r"was parsing (\d+):(\d+): error: (.*)", said)
    assert errors, said
    (line, column, first), message = errors[0], errors[0][2].strip()
    if message.endswith(":") and len(errors) > 1 and errors[1][:2] == (line, column):
        message += " " + errors[1][2].strip()  # a lead-in line: what XLA says next, at the same place
    return f"{HLO}:{line}:{column}: XLA's parser: {message}", False


@functools.cache
def xla_reads_tuple_element_operands() -> bool:
    """Whether this jaxlib's parser reads `%t#i` (0.12 does, 0.10.2 not), asked of it here."""
    try:
        parse_with_xla(entry("%t = (f32[4]{0}) tuple(%x)", "ROOT %r = f32[4]{0} negate(%t#0)"))
    except XlaRejected:
        return False
    return True


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    id: str
    prog: str
    data: bytes | None        # the input file's contents (HLO or MLIR); None: no input file
    message: str | FromXla | None  # the line after "PROG: error: "; None: accepted, exit 0
    args: tuple = ()          # argv; default: the input file. "{denied}" and "{unwritable}" are filled in
    api: tuple = ()           # callables on `data`, see above
    error: type | None = None  # what the API raises
    api_message: str | None = None  # when the API's message differs from the CLI's (a usage error)
    script: bool = False      # first run through the installed console script
    output: bool = True       # add -o (fresh, then existing); False when args hold their own -o


def hlo(id, data, message, **kw) -> Row:
    data = data.encode() if isinstance(data, str) else data
    if message is XLA:
        message = FromXla(data.decode())
    return Row(id, "hlo2penguin", data, message, **kw)


def expected(row: Row) -> tuple[str | None, tuple, type | None]:
    """The row's message, API callables and exception type; XLA's verdict asked where the row says XLA."""
    if not isinstance(row.message, FromXla):
        return row.message, row.api, row.error
    text = row.message.text() if callable(row.message.text) else row.message.text
    message, aborted = xla_verdict(text)
    return message, (XLA_ABORTS if aborted else XLA_REFUSES), XlaRejected


def mlir(id, data, message, **kw) -> Row:
    data = data.encode() if isinstance(data, str) else data
    return Row(id, "hlo2penguin-opt", data, message, args=kw.pop("args", (MLIR,)), **kw)


NOT_UTF8 = "input is not UTF-8 text (byte 0x{:02x}); HLO modules are text: pass the .txt that XLA dumped, not a binary proto"
CALL_NO_OPERANDS_MESSAGE = (f"%c: an {CONTROL_DEP_TARGET} custom-call with no operands is not a control "
                            "dependency: it needs at least the data operand its result stands for")

# `%t#2` past the arity of `%t`. jaxlib 0.12's parser reads `%t#i` (and refuses this one); for 0.10.2's,
# which does not, the chain reads it as 0.12 does, a get-tuple-element of `%t` (its shape left to XLA):
# XLA's verdict on that is the chain's.
TUPLE_ELEMENT_PAST_ARITY = entry("%t = (f32[4]{0}, f32[4]{0}) tuple(%x, %x)", "ROOT %r = f32[4]{0} add(%t#0, %t#2)")
TUPLE_ELEMENT_PAST_ARITY_WRITTEN_OUT = entry("%t = (f32[4]{0}, f32[4]{0}) tuple(%x, %x)",
                                             "%t_0 = get-tuple-element(%t), index=0",
                                             "%t_2 = get-tuple-element(%t), index=2",
                                             "ROOT %r = f32[4]{0} add(%t_0, %t_2)")


def tuple_element_past_arity_as_this_xla_reads_it() -> str:
    return (TUPLE_ELEMENT_PAST_ARITY if xla_reads_tuple_element_operands()
            else TUPLE_ELEMENT_PAST_ARITY_WRITTEN_OUT)


ROWS = [
    # -- hlo2penguin: no HLO text, refused before XLA's parser ------------------
    hlo("empty", b"", "in.hlo:1:1: input is empty; expected an HLO module",
        api=TEXT_STR, error=HloSyntaxError, script=True),
    # Told apart by content: a proto's head, cut inside its first computation (the proto's own bytes say where).
    hlo("binary-proto", PROTO, "in.hlo: a truncated or corrupted proto (and no jax.export artifact): protobuf "
        f"decoding fails at byte {PROTO_CUT} of {len(PROTO)} bytes: field 3 needs 256 bytes, "
        f"{len(PROTO) - PROTO_CUT - 3} remain (truncated); dump it again, or give HLO text, XLA's "
        "*.hlo.pb or snapshot, a serialized HloModuleProto, or a jax.export artifact",
        api=(via_run, via_run_isolated), error=BadBinary, script=True),
    hlo("byte-order-mark", b"\xef\xbb\xbf" + GOOD.encode(),
        "in.hlo:1:1: the input starts with a byte-order mark (U+FEFF), which XLA's parser refuses too; "
        "save it as UTF-8 without one", api=TEXT_STR, error=HloSyntaxError),
    hlo("not-utf8-text", GOOD.replace("jit(f)/exp", "jit(f)/\xe9xp").encode("latin-1"),
        "in.hlo:5:61: " + NOT_UTF8.format(0xe9), api=TEXT, error=HloSyntaxError),
    # -- hlo2penguin: what XLA's parser refuses, in its words (asked of XLA: `xla_verdict`) --
    hlo("binary-garbage-utf8", b"\x00\x01\x02PK\x03\x04 garbage", XLA),
    hlo("cut-mid-instruction", GOOD[:GOOD.index("exponential") + 5], XLA),
    hlo("cut-mid-computation", GOOD[:GOOD.index("  ROOT")], XLA),
    hlo("cut-mid-attribute-string", GOOD[:GOOD.index("jit(f)")], XLA, script=True),
    hlo("undefined-operand", GOOD.replace("add(%b, %x)", "add(%b, %nope)"), XLA),
    hlo("undefined-control-predecessor", GOOD.replace("{%a}", "{%nope}"), XLA),
    # XLA's words, then the hint (pipeline.reading.hints): the predecessor is defined on a later line
    hlo("control-predecessor-defined-below", entry("%a = f32[4]{0} negate(%x), control-predecessors={%b}",
                                                   "%b = f32[4]{0} exponential(%x)", "ROOT %s = f32[4]{0} add(%a, %b)"),
        "in.hlo:4:54: XLA's parser: instruction 'b' is not defined; 'b' is defined below, on line 5: XLA's parser "
        "needs each control predecessor defined above its successor (a cycle of control edges cannot be written)",
        api=(via_run, via_run_isolated), error=XlaRejected),
    hlo("mlir-given-to-hlo2penguin", CALL_DATA_ONLY,
        "in.hlo:1:10: XLA's parser: expects '=' in instruction; this is MLIR, and hlo2penguin reads HLO text: "
        "for MLIR use hlo2penguin-opt", api=(via_run, via_run_isolated), error=XlaRejected),
    hlo("predecessor-list-unclosed", entry("%a = f32[4]{0} negate(%x)",
                                           "%b = f32[4]{0} exponential(%x), control-predecessors={%a",
                                           "ROOT %s = f32[4]{0} add(%b, %x)"), XLA),
    hlo("duplicate-instruction", GOOD.replace("%b = ", "%a = ").replace("add(%b", "add(%a"), XLA),
    hlo("duplicate-computation", TWO_COMPUTATIONS.replace("%main (", "%helper ("), XLA),
    hlo("tuple-element-past-arity", TUPLE_ELEMENT_PAST_ARITY, FromXla(tuple_element_past_arity_as_this_xla_reads_it),
        script=True),  # jaxlib 0.10.2's parser aborts on it, written out
    hlo("get-tuple-element-past-arity", entry("%t = (f32[4]{0}, f32[4]{0}) tuple(%x, %x)",
                                              "%g = f32[4]{0} get-tuple-element(%t), index=2",
                                              "ROOT %r = f32[4]{0} negate(%x)"),
        XLA, script=True),  # XLA's parser segfaults on it
    hlo("unknown-opcode", GOOD.replace("exponential", "frobnicate"),
        "in.hlo:5:18: XLA's parser: expects opcode but sees: frobnicate, error: Unknown opcode: frobnicate",
        api=(via_run, via_import, via_run_isolated), error=XlaRejected, script=True),
    hlo("xla-parser-aborts", entry("ROOT %p = f32[4]{0} parameter(5)"),
        "in.hlo: XLA's parser aborted (signal 6): Check failed: param_no >= 0 && param_no < parameter_count "
        "(invalid parameter number. Expected [0, 2), got 5)",
        api=(via_run_isolated, via_import_isolated), error=XlaRejected, script=True),
    hlo("xla-importer-aborts", entry("%t = token[] after-all()",
                                     "%start = (f32[4]{0}, u32[], token[]) recv(%t), channel_id=1",
                                     "%g = f32[4]{0} get-tuple-element(%start), index=0",
                                     "%done = (f32[4]{0}, token[]) recv-done(%start), channel_id=1",
                                     "ROOT %neg = f32[4]{0} negate(%x)", name="aborts"),
        "in.hlo:6: %g reads a tuple element of %start (recv) directly; XLA's importer aborts on this. "
        "Read it through the matching recv-done instead",
        api=(via_run_isolated, via_import_isolated), error=ImportFailed, script=True),
    # -- hlo2penguin: control-dep calls already in the input -------------------
    hlo("control-dep-call-no-operands", entry(control_dep_call(), "ROOT %s = f32[4]{0} add(%c, %x)"),
        f"in.hlo:4: {CALL_NO_OPERANDS_MESSAGE}",
        api=(via_run, via_printer_unflattened), error=ControlDepError, script=True),
    hlo("control-dep-call-data-only", entry(control_dep_call("%x"), "ROOT %s = f32[4]{0} add(%c, %x)"), None,
        api=(accepts_data_only_call,)),
    # -- hlo2penguin: accepted, as XLA accepts them ------------------------------
    hlo("no-entry", TWO_COMPUTATIONS, None, api=(accepts_no_entry,)),
    hlo("same-name-in-two-computations", TWO_COMPUTATIONS.replace("%a", "%n"), None,
        api=(accepts_names_repeated_across_computations,)),
    # -- hlo2penguin: usage and paths ------------------------------------------
    hlo("dialect-typo", GOOD, "argument --dialect: invalid choice: 'stablhlo' (choose from 'stablehlo', 'mhlo') "
        "(see 'hlo2penguin --help')", args=(HLO, "--dialect", "stablhlo"),
        api=(run_with_dialect_typo, run_missing_with_dialect_typo, import_with_dialect_typo), error=UnknownDialect,
        api_message="unknown dialect 'stablhlo': choose 'stablehlo' or 'mhlo'", script=True),
    hlo("input-missing", None, "cannot read input 'nope.hlo': No such file or directory", args=("nope.hlo",),
        api=(run_path("nope.hlo"),), error=UnreadableInput, script=True),
    hlo("input-is-a-directory", None, "cannot read input 'adir': Is a directory; for every module in a folder "
        "(an XLA dump): hlo2penguin check adir", args=("adir",),
        api=(run_path("adir"),), error=UnreadableInput, api_message="cannot read input 'adir': Is a directory"),
    hlo("input-permission-denied", None, "cannot read input '{denied}': Permission denied", args=("{denied}",),
        api=(run_path("{denied}"),), error=UnreadableInput),
    hlo("output-is-the-input", GOOD, "-o 'in.hlo' is the input: give another output file, or the input is lost",
        args=(HLO, "-o", HLO), output=False),
    hlo("output-directory-missing", GOOD, "cannot write output 'no/such/out.txt': No such file or directory",
        args=(HLO, "--emit", "hlo", "-o", "no/such/out.txt"), output=False),
    hlo("output-parent-is-a-file", GOOD, "cannot write output 'afile/out.txt': Not a directory",
        args=(HLO, "--emit", "hlo", "-o", "afile/out.txt"), output=False),
    hlo("output-is-a-directory", GOOD, "cannot write output 'adir': Is a directory",
        args=(HLO, "--emit", "hlo", "-o", "adir"), output=False),
    hlo("output-permission-denied", GOOD, "cannot write output '{unwritable}': Permission denied",
        args=(HLO, "--emit", "hlo", "-o", "{unwritable}"), output=False, script=True),
    # -- hlo2penguin-opt ----------------------------------------------------------
    mlir("mlir-empty", b"", "in.mlir: input is empty; expected an MLIR module"),
    mlir("mlir-binary-garbage", PROTO, "in.mlir: input is neither MLIR text (not UTF-8) nor MLIR bytecode"),
    mlir("mlir-corrupted-bytecode", corrupted_bytecode(),
         "in.mlir: cannot parse MLIR: the bytecode reader aborted (signal 6); is the file corrupted?", script=True),
    mlir("mlir-unknown-dialect", 'func.func @main() {\n  "frob.nicate"() : () -> ()\n  return\n}\n',
         "in.mlir: cannot parse MLIR: 2:16: operation being parsed with an unregistered dialect. If this is "
         "intended, please use -allow-unregistered-dialect with the MLIR tool used", script=True),
    mlir("mlir-syntax-error", "func.func @main( {\n", "in.mlir: cannot parse MLIR: 1:17: expected non-function type",
         script=True),
    mlir("hlo-given-to-hlo2penguin-opt", GOOD, "in.mlir: cannot parse MLIR: 1:1: custom op 'HloModule' is unknown "
         "(tried 'builtin.HloModule' as well); this is HLO text, and hlo2penguin-opt reads MLIR: for HLO use hlo2penguin"),
    mlir("mlir-control-dep-call-no-operands", CALL_NO_OPERANDS, None,
         args=(MLIR, "--stablehlo-flatten-control-dep-tuple-operands"),
         api=(flatten_leaves_call_without_operands_and_printer_refuses,)),
    mlir("mlir-control-dep-call-data-only", CALL_DATA_ONLY, None,
         args=(MLIR, "--stablehlo-flatten-control-dep-tuple-operands"),
         api=(flatten_and_printer_accept_data_only_call,)),
    mlir("mlir-pass-flag-typo", CALL_DATA_ONLY,
         "unrecognized arguments: --stablehlo-flaten-control-dep-tuple-operands (see 'hlo2penguin-opt --help')",
         args=(MLIR, "--stablehlo-flaten-control-dep-tuple-operands")),
    mlir("mlir-input-missing", None, "cannot read input 'nope.mlir': No such file or directory",
         args=("nope.mlir",)),
    mlir("mlir-output-parent-is-a-file", CALL_DATA_ONLY, "cannot write output 'afile/out.mlir': Not a directory",
         args=(MLIR, "-o", "afile/out.mlir"), output=False),
]


# --------------------------------------------------------------------------
# Places that cannot be read or written, even by root
# --------------------------------------------------------------------------


def denied_input(tmp_path) -> str:
    """A file open() refuses with EACCES. Root reads any file whatever its
    mode, but not a write-only sysfs attribute (the kernel refuses the open)."""
    if os.geteuid() != 0:
        path = tmp_path / "denied.hlo"
        path.write_text(GOOD)
        path.chmod(0)
        return str(path)
    for path in sorted(glob.glob("/sys/bus/*/drivers_probe")) + ["/sys/bus/pci/rescan"]:
        try:
            open(path, "rb").close()
        except PermissionError:
            return path
        except OSError:
            continue
    pytest.skip("running as root, and no write-only sysfs attribute to stand for an unreadable file")


def unwritable_output(tmp_path) -> str:
    """A path in a directory where creating a file fails with EACCES: a
    read-only directory, or for root (which ignores modes) sysfs."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        return str(ro / "out.txt")
    try:
        fd, probe = tempfile.mkstemp(dir="/sys")
    except PermissionError:
        return "/sys/out.txt"
    except OSError:
        pass
    else:
        os.close(fd)
        os.unlink(probe)
    pytest.skip("running as root, and /sys accepts new files here: no directory refuses root")


# --------------------------------------------------------------------------
# Running a row
# --------------------------------------------------------------------------


def fill(text: str, places: dict) -> str:
    for key, value in places.items():
        text = text.replace("{%s}" % key, value)
    return text


def snapshot(directory) -> dict:
    """Every entry under `directory`: name → (inode, size, mtime, bytes)."""
    found = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            data = open(path, "rb").read() if os.path.isfile(path) and os.access(path, os.R_OK) else None
            found[os.path.relpath(path, directory)] = (st.st_ino, st.st_size, st.st_mtime_ns, data)
    return found


def invoke(prog: str, argv: list[str], capfd, script: bool):
    if script:
        assert SCRIPTS[prog], f"the {prog} console script is not installed next to {sys.executable}"
        done = subprocess.run([SCRIPTS[prog], *argv], capture_output=True, stdin=subprocess.DEVNULL, timeout=300)
        return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    capfd.readouterr()
    status = MAINS[prog](argv)
    out, err = capfd.readouterr()
    return status, out, err


def assert_refused(row: Row, message: str, status: int, out: str, err: str) -> None:
    assert "Traceback" not in err, err
    assert err.splitlines() == [f"{row.prog}: error: {message}"], err
    assert err.endswith("\n")
    assert (status, out) == (2, "")


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_bad_input(row: Row, tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)  # messages name the input as given: "in.hlo"
    places = {}
    if row.data is not None:
        (tmp_path / (MLIR if row.prog == "hlo2penguin-opt" else HLO)).write_bytes(row.data)
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_bytes(b"a file, not a directory\n")
    if "{denied}" in row.args:
        places["denied"] = denied_input(tmp_path)
    if "{unwritable}" in row.args:
        places["unwritable"] = unwritable_output(tmp_path)
    argv = [fill(a, places) for a in (row.args or (HLO,))]
    message, api, error = expected(row)
    message = fill(message, places) if message else None

    if message is None:  # accepted: the output is written, the summary (hlo2penguin) is all of stderr
        (tmp_path / "existing.out").write_bytes(KEEP)
        status, out, err = invoke(row.prog, [*argv, "-o", "existing.out"], capfd, row.script)
        assert (status, out) == (0, ""), err
        assert "Traceback" not in err and "error" not in err and "warning" not in err, err
        summary = [line for line in err.splitlines() if not line.startswith("hlo2penguin: note: ")]
        assert len(summary) == (1 if row.prog == "hlo2penguin" else 0), err
        if row.prog == "hlo2penguin":  # a module without control edges: one note says where XLA adds them
            assert len(err.splitlines()) == 1 + summary[0].startswith("hlo2penguin: chain: 0 HLO control edge(s)")
        written = (tmp_path / "existing.out").read_text()
        assert written != KEEP.decode() and ("module = Module(" in written or "func.func @main" in written)
        assert not [n for n in os.listdir(tmp_path) if n.startswith(".hlo2penguin-")]
    elif not row.output:  # the row's own -o is the bad part
        before = snapshot(tmp_path)
        status, out, err = invoke(row.prog, argv, capfd, row.script)
        assert_refused(row, message, status, out, err)
        assert snapshot(tmp_path) == before
    else:
        (tmp_path / "existing.out").write_bytes(KEEP)
        before = snapshot(tmp_path)
        for i, target in enumerate(["fresh.out", "existing.out"]):
            status, out, err = invoke(row.prog, [*argv, "-o", target], capfd, row.script and i == 0)
            assert_refused(row, message, status, out, err)
            assert snapshot(tmp_path) == before  # no fresh.out, existing.out untouched, no temporary file

    for call in api:
        if message is None:
            call(row.data, places)
            continue
        with pytest.raises(error) as info:
            call(row.data, places)
        assert str(info.value) == (row.api_message or message), call.__name__
        if isinstance(info.value, OSError):  # UnreadableInput keeps the OSError's fields
            assert info.value.errno is not None and info.value.filename == argv[0]


def test_the_rows_break_a_good_module():
    """GOOD and TWO_COMPUTATIONS are valid, for XLA and so for the chain:
    each row's failure is its own change."""
    for text in (GOOD, TWO_COMPUTATIONS):
        parse_with_xla(text)
        assert parse(text, HLO, isolate=True).control_edges() == [("main", "a", "s")]
    assert len({row.id for row in ROWS}) == len(ROWS)


def test_the_docs_table_has_one_row_per_test_row():
    """docs/bad-input.md's tables and ROWS say the same: each row of the page
    whose message is in backticks is one refused row of the same program
    (`…` abbreviates; the rows' {placeholders} are filled at run time), and
    each accepted row of the page ("accepted", "left alone") is an accepted one."""
    table = (DOCS / "bad-input.md").read_text()
    prog, documented = "hlo2penguin", []
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) < 2 or set(cells[0]) <= {"-"}:
            continue
        if cells[1].startswith("message after"):
            prog = re.search(r"`(\S+): error: `", cells[1]).group(1)
            continue
        message = re.match(r"`([^`]*)`", cells[1])  # an explanation may follow
        documented.append((prog, message.group(1).replace("\\|", "|") if message else None))

    def pattern(readme_message: str) -> re.Pattern:
        return re.compile(".*".join(re.escape(part) for part in readme_message.split("…")))

    tested = [(row.prog, expected(row)[0]) for row in ROWS]
    assert len(documented) == len(tested)
    unmatched = list(tested)
    for prog, message in documented:
        for i, (row_prog, row_message) in enumerate(unmatched):
            if row_prog != prog or (message is None) != (row_message is None):
                continue
            if message is None or pattern(message).fullmatch(row_message) or \
                    re.fullmatch(re.sub(r"\\\{\w+\\\}", ".*", re.escape(row_message)), message):
                del unmatched[i]
                break
        else:
            pytest.fail(f"docs/bad-input.md row with no test row: {prog}: {message}")
    assert unmatched == []
