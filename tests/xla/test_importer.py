"""Link #2, `pipeline.xla.importer.import_hlo`: XLA's real importer, the names it
would lose, the dead copies it leaves, and the inputs that make it abort.

Each `import_hlo` call with the default `isolate=True` starts a child
process (~0.5 s), so most tests import with `isolate=False` and the
isolation itself has its own tests.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import jaxlib._hlo as xla_hlo
import jaxlib._jax as xla_ext
import pytest
from jaxlib.mlir import ir

from mlir_ops import functions, ops
from pipeline.reading.parsed import Parsed
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.hlo.view import view_of
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.xla.importer import DIALECTS, ImportFailed, XlaWorker, _run_importer, import_hlo
from pipeline.xla.mlir_context import make_context
from pipeline.xla import native

BOTH = pytest.mark.parametrize("dialect", DIALECTS)

# A location link #2 writes: fused<"computation">["instruction", original...]
FUSED = re.compile(r'^loc\(fused<"([^"]*)">\["([^"]*)"(.*)\]\)$')


def hlo(text: str) -> str:
    text = textwrap.dedent(text).lstrip("\n")
    xla_hlo.hlo_module_from_text(text)  # real XLA syntax
    return text


def callees(module: ir.Module) -> set[str]:
    return {ir.FlatSymbolRefAttr(op.attributes["callee"]).value for op in ops(module) if op.name == "func.call"}


def origin(op) -> tuple[str, str, str]:
    """(computation, instruction, rest of the fused location)."""
    m = FUSED.match(str(op.location))
    assert m, f"{op.name} has no link #2 location: {op.location}"
    return m.group(1), m.group(2), m.group(3)


def after_link_1(text: str, bundle: bool = False) -> Parsed:
    """XLA's parse of `text` with link #1's edits made in its proto."""
    parsed = native.read(text)
    module = view_of(parsed)
    PreserveControlDeps(bundle=bundle).run(module)
    return parsed


# A computation's head (`[ENTRY] %name (` or `%name {`) and an instruction's definition line.
_COMPUTATION_HEAD = re.compile(r"^\s*(?:ENTRY\s+)?%([\w.\-]+)\s*[({]", re.M)
_DEFINITION = re.compile(r"^\s*(?:ROOT\s+)?%([\w.\-]+)\s*=", re.M)


def written_instructions(text: str) -> set[tuple[str, str]]:
    """(computation, instruction) for every definition line of `text`, names as written."""
    found = set()
    heads = list(_COMPUTATION_HEAD.finditer(text))
    for head, after in zip(heads, heads[1:] + [None]):
        body = text[head.end():after.start() if after else len(text)]
        found |= {(head.group(1), m.group(1)) for m in _DEFINITION.finditer(body)}
    return found


def structural(op) -> bool:
    """Ops no HLO instruction stands for: functions and region terminators."""
    return op.name in ("func.func", "func.return", "stablehlo.return", "mhlo.return")


# Metadata on every kind of instruction; names that repeat across
# computations; a fusion, a call, a conditional and a while.
PROGRAM = hlo("""
    HloModule program, entry_computation_layout={(f32[4]{0}, s32[])->f32[4]{0}}

    %fused (p: f32[4]) -> f32[4] {
      %p = f32[4]{0} parameter(0)
      ROOT %add = f32[4]{0} add(%p, %p), metadata={op_name="jit(f)/add" source_file="/src/f.py" source_line=7}
    }

    %helper (h: f32[4]) -> f32[4] {
      %h = f32[4]{0} parameter(0)
      ROOT %add = f32[4]{0} multiply(%h, %h), metadata={op_name="jit(f)/helper/mul" source_file="/src/f.py" source_line=11}
    }

    %br0 (b0: f32[4]) -> f32[4] {
      %b0 = f32[4]{0} parameter(0)
      ROOT %neg = f32[4]{0} negate(%b0)
    }

    %br1 (b1: f32[4]) -> f32[4] {
      %b1 = f32[4]{0} parameter(0)
      ROOT %neg = f32[4]{0} abs(%b1), metadata={op_name="jit(f)/abs"}
    }

    %body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
      %s = (s32[], f32[4]{0}) parameter(0)
      %i = s32[] get-tuple-element(%s), index=0
      %one = s32[] constant(1)
      %add = s32[] add(%i, %one), metadata={op_name="jit(f)/while/body/add" source_file="/src/f.py" source_line=21}
      %v = f32[4]{0} get-tuple-element(%s), index=1
      %neg = f32[4]{0} negate(%v)
      ROOT %t = (s32[], f32[4]{0}) tuple(%add, %neg)
    }

    %cond (c: (s32[], f32[4])) -> pred[] {
      %c = (s32[], f32[4]{0}) parameter(0)
      %ci = s32[] get-tuple-element(%c), index=0
      %lim = s32[] constant(3)
      ROOT %lt = pred[] compare(%ci, %lim), direction=LT
    }

    ENTRY %main (x: f32[4], k: s32[]) -> f32[4] {
      %x = f32[4]{0} parameter(0), metadata={op_name="x"}
      %k = s32[] parameter(1)
      %f = f32[4]{0} fusion(%x), kind=kLoop, calls=%fused, metadata={op_name="jit(f)/mul" source_file="/src/f.py" source_line=3}
      %c = f32[4]{0} call(%f), to_apply=%helper
      %cnd = f32[4]{0} conditional(%k, %c, %c), branch_computations={%br0, %br1}
      %zero = s32[] constant(0)
      %init = (s32[], f32[4]{0}) tuple(%zero, %cnd)
      %loop = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body, metadata={op_name="jit(f)/while" source_file="/src/f.py" source_line=20}
      %res = f32[4]{0} get-tuple-element(%loop), index=1
      ROOT %add = f32[4]{0} add(%res, %x), metadata={op_name="jit(f)/final_add" source_file="/src/f.py" source_line=9}
    }
""")


@pytest.fixture(scope="module")
def imported() -> dict[tuple[str, bool], ir.Module]:
    """PROGRAM imported once per dialect, without and with the dead copies."""
    return {(d, keep): import_hlo(PROGRAM, d, isolate=False, keep_dead_copies=keep)
            for d in DIALECTS for keep in (False, True)}


# --------------------------------------------------------------------------
# The module verifies, in the dialect asked for
# --------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("keep", [False, True], ids=["live", "keep-dead-copies"])
def test_imported_module_verifies(imported, dialect, keep):
    assert imported[dialect, keep].operation.verify()


def test_mhlo_has_no_stablehlo_op_left(imported):
    """stablehlo-legalize-to-hlo converts every op; MHLO lacks none of the
    ones the importer makes (measured on PROGRAM, the example and the JAX
    corpus)."""
    for keep in (False, True):
        names = {op.name for op in ops(imported["mhlo", keep])}
        assert not {n for n in names if n.startswith("stablehlo.")}, names
        assert {"mhlo.fusion", "mhlo.case", "mhlo.while", "mhlo.add"} <= names


def test_mhlo_example_with_control_deps_has_no_stablehlo_op():
    names = {op.name for op in ops(import_hlo(after_link_1(EXAMPLE_HLO, bundle=True), "mhlo", isolate=False))}
    assert not {n for n in names if n.startswith("stablehlo.")}
    assert {"mhlo.custom_call", "mhlo.tuple", "mhlo.while"} <= names


def test_stablehlo_keeps_the_mhlo_ops_stablehlo_lacks(imported):
    """XLA's importer writes StableHLO, except for what StableHLO has no op
    for: a fusion stays `mhlo.fusion` (and a copy `mhlo.copy`)."""
    names = {op.name for op in ops(imported["stablehlo", False])}
    assert {n for n in names if n.startswith("mhlo.")} == {"mhlo.fusion", "mhlo.return"}
    assert {"stablehlo.case", "stablehlo.while", "stablehlo.add"} <= names


def test_a_context_can_be_given():
    context = make_context()
    module = import_hlo(PROGRAM, "stablehlo", context=context, isolate=False)
    assert module.context is context


def test_a_parse_and_its_text_import_the_same():
    text = import_hlo(PROGRAM, "mhlo", isolate=False).operation.get_asm(enable_debug_info=True)
    parsed = import_hlo(native.read(PROGRAM), "mhlo", isolate=False).operation.get_asm(enable_debug_info=True)
    assert text == parsed


# --------------------------------------------------------------------------
# Names: instruction and computation in every location
# --------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("keep", [False, True], ids=["live", "keep-dead-copies"])
def test_every_op_carries_its_instruction_and_computation(imported, dialect, keep):
    known = written_instructions(PROGRAM)
    assert len(known) == PROGRAM.count(" = ")  # every definition line, each pair once
    seen = set()
    for op in ops(imported[dialect, keep]):
        if structural(op):
            continue
        computation, instruction, _ = origin(op)
        assert (computation, instruction) in known, (op.name, str(op.location))
        seen.add((computation, instruction))
    # Instructions with metadata are among them (the importer alone drops their names).
    assert {("main", "f"), ("main", "loop"), ("main", "add"), ("body", "add"), ("fused", "add"),
            ("helper", "add"), ("br1", "neg")} <= seen


@BOTH
def test_function_arguments_carry_their_parameter(imported, dialect):
    main = functions(imported[dialect, False])["main"]
    args = main.regions[0].blocks[0].arguments
    assert [str(a.location) for a in args] == ['loc(fused<"main">["x"])', 'loc(fused<"main">["k"])']


@BOTH
def test_metadata_survives_in_the_fused_location(imported, dialect):
    by_origin = {origin(op)[:2]: str(op.location) for op in ops(imported[dialect, False]) if not structural(op)}
    assert by_origin["main", "f"] == 'loc(fused<"main">["f", "jit(f)/mul"("/src/f.py":3:0)])'
    assert by_origin["main", "add"] == 'loc(fused<"main">["add", "jit(f)/final_add"("/src/f.py":9:0)])'
    assert by_origin["fused", "add"] == 'loc(fused<"fused">["add", "jit(f)/add"("/src/f.py":7:0)])'
    assert by_origin["body", "add"] == 'loc(fused<"body">["add", "jit(f)/while/body/add"("/src/f.py":21:0)])'
    assert by_origin["br1", "neg"] == 'loc(fused<"br1">["neg", "jit(f)/abs"])'  # op_name without a position
    assert by_origin["br0", "neg"] == 'loc(fused<"br0">["neg"])'  # no metadata at all


def test_xla_importer_alone_loses_names_under_metadata():
    """Why link #2 does more than call the importer: with metadata, the
    importer names the op after op_name, and the HLO name is gone."""
    proto = xla_hlo.hlo_module_from_text(PROGRAM).as_serialized_hlo_module_proto()
    module = ir.Module.parse(xla_ext.mlir.hlo_to_stablehlo(proto), context=make_context())
    final = [op for op in ops(functions(module)["main"]) if op.name == "stablehlo.add"][-1]
    assert "final_add" in str(final.location) and '"add"' not in str(final.location)


@BOTH
def test_names_repeated_across_computations_keep_their_spelling(imported, dialect):
    """XLA's parser renames %add to %add.1, %add.2…; Penguin names must be the
    names the user wrote, told apart by computation."""
    adds = sorted(origin(op)[:2] for op in ops(imported[dialect, True])
                  if not structural(op) and origin(op)[1] == "add")
    assert {c for c, _ in adds} == {"main", "fused", "helper", "body"}
    negs = {origin(op)[:2] for op in ops(imported[dialect, True]) if not structural(op) and origin(op)[1] == "neg"}
    assert negs == {("br0", "neg"), ("br1", "neg"), ("body", "neg")}
    text = imported[dialect, True].operation.get_asm(enable_debug_info=True)
    assert not re.search(r'"(add|neg)\.\d+"', text)


def test_stack_frame_metadata_becomes_a_file_position():
    """Real dumps give positions as stack_frame_id into the module's
    FileNames/FileLocations/StackFrames tables. XLA prints a frame's
    parent_frame_id one past its proto's (a frame with no parent: 1) and its
    parser subtracts one: `parent_frame_id=0` is invalid to XLA, which then
    drops the tables with only a warning."""
    text = hlo("""
        HloModule frames, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

        FileNames
        1 "/src/model.py"

        FunctionNames
        1 "step"

        FileLocations
        1 {file_name_id=1 function_name_id=1 line=42 end_line=42 column=5 end_column=9}

        StackFrames
        1 {file_location_id=1 parent_frame_id=1}

        ENTRY %main (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          ROOT %y = f32[4]{0} negate(%x), metadata={op_name="jit(step)/neg" stack_frame_id=1}
        }
    """)
    module = import_hlo(text, "stablehlo", isolate=False)
    [neg] = [op for op in ops(module) if op.name == "stablehlo.negate"]
    assert str(neg.location) == 'loc(fused<"main">["y", "jit(step)/neg"("/src/model.py":42:5)])'


def test_entry_becomes_main_and_keeps_its_computation_name():
    """XLA's importer names the entry function `main` (link #3's default
    scope relies on it); the locations still say which computation it was."""
    text = hlo("""
        HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

        ENTRY %compute (x: f32[4]) -> f32[4] {
          %x = f32[4]{0} parameter(0)
          ROOT %y = f32[4]{0} negate(%x), metadata={op_name="jit(g)/neg"}
        }
    """)
    module = import_hlo(text, "mhlo", isolate=False)
    assert set(functions(module)) == {"main"}
    [neg] = [op for op in ops(module) if op.name == "mhlo.negate"]
    assert str(neg.location) == 'loc(fused<"compute">["y", "jit(g)/neg"])'


# --------------------------------------------------------------------------
# Dead copies
# --------------------------------------------------------------------------


@BOTH
def test_dead_copies_are_gone_by_default(imported, dialect):
    module = imported[dialect, False]
    assert set(functions(module)) == {"main"} | callees(module) == {"main", "helper"}
    # Each live instruction once: the while body, branches and fusion are inlined only.
    seen = [origin(op)[:2] for op in ops(module) if not structural(op)]
    for key in [("body", "add"), ("br0", "neg"), ("br1", "neg"), ("fused", "add"), ("helper", "add")]:
        assert seen.count(key) == 1, key


@BOTH
def test_keep_dead_copies_keeps_them(imported, dialect):
    module = imported[dialect, True]
    assert set(functions(module)) == {"main", "helper", "fused", "br0", "br1", "body", "cond"}
    seen = [origin(op)[:2] for op in ops(module) if not structural(op)]
    assert seen.count(("body", "add")) == 2  # inlined in the while, and the private copy


@BOTH
def test_dead_copies_of_the_example_with_control_deps(dialect):
    module = after_link_1(EXAMPLE_HLO)
    live = import_hlo(module, dialect, isolate=False)
    assert set(functions(live)) == {"main"}
    every = import_hlo(module, dialect, isolate=False, keep_dead_copies=True)
    assert set(functions(every)) == {"main", "body", "cond"}
    calls = lambda m: sum(1 for op in ops(m) if op.name.endswith("custom_call"))  # noqa: E731
    assert calls(live) == 3 and calls(every) == 4  # the body's call twice: inlined and the copy


# --------------------------------------------------------------------------
# Known aborts and isolation
# --------------------------------------------------------------------------


def tuple_element_of(start: str) -> str:
    """An HLO module where %g reads a tuple element of a send/recv/copy-start."""
    instrs = {
        "recv": ["%tok = token[] after-all()",
                 "%start = (f32[4]{0}, u32[], token[]) recv(%tok), channel_id=1",
                 "%g = f32[4]{0} get-tuple-element(%start), index=0",
                 "%done = (f32[4]{0}, token[]) recv-done(%start), channel_id=1"],
        "send": ["%tok = token[] after-all()",
                 "%start = (f32[4]{0}, u32[], token[]) send(%x, %tok), channel_id=2",
                 "%g = u32[] get-tuple-element(%start), index=1",
                 "%done = token[] send-done(%start), channel_id=2"],
        "copy-start": ["%start = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(%x)",
                       "%g = f32[4]{0} get-tuple-element(%start), index=1",
                       "%done = f32[4]{0} copy-done(%start)"],
    }[start]
    body = "\n".join("  " + i for i in instrs)
    return hlo(f"""\
HloModule aborts, entry_computation_layout={{(f32[4]{{0}})->f32[4]{{0}}}}

ENTRY %main (x: f32[4]) -> f32[4] {{
  %x = f32[4]{{0}} parameter(0)
{body}
  ROOT %neg = f32[4]{{0}} negate(%x)
}}
""")


@pytest.mark.parametrize("start", ["recv", "send", "copy-start"])
def test_gte_of_an_async_start_is_refused_with_one_line(start):
    text = tuple_element_of(start)
    with pytest.raises(ImportFailed) as info:
        import_hlo(text, "stablehlo", isolate=False, source_name="aborts.hlo")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("aborts.hlo:")
    assert "%g" in message and "%start" in message and f"({start})" in message
    assert "-done" in message  # what to do instead
    # Isolated (the chain's default), the refusal is the same: it comes before XLA's importer runs.
    with pytest.raises(ImportFailed, match=f"^{re.escape(message)}$"):
        import_hlo(text, "stablehlo", source_name="aborts.hlo")


def test_refusal_names_the_computation_without_a_source():
    with pytest.raises(ImportFailed, match=r"^%main: %g reads a tuple element of %start \(copy-start\)"):
        import_hlo(tuple_element_of("copy-start"), "mhlo", isolate=False)


def test_refusal_does_not_crash_the_process():
    """In a fresh interpreter with no isolation at all: the pre-check is what
    stands between the user and XLA's abort."""
    code = textwrap.dedent(f"""
        from pipeline.xla.importer import import_hlo, ImportFailed
        try:
            import_hlo({tuple_element_of("copy-start")!r}, isolate=False)
        except ImportFailed as err:
            print("refused:", err)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: %main: %g reads a tuple element of %start")


def test_importer_abort_in_the_child_becomes_import_failed():
    """Bypass the pre-check: XLA's parser takes the module, its importer
    aborts ("LLVM ERROR: Failed to infer result type(s)") and only the child
    process dies."""
    proto = xla_hlo.hlo_module_from_text(tuple_element_of("copy-start")).as_serialized_hlo_module_proto()
    worker = XlaWorker()
    try:
        with pytest.raises(ImportFailed) as info:
            _run_importer(proto, "x", worker)
    finally:
        worker.close()
    message = str(info.value)
    assert message.startswith("x: link #2 (XLA's importer) aborted")
    assert "\n" not in message
    assert "Failed to infer result type" in message


def test_importer_refusal_in_the_child_becomes_import_failed():
    """Not an abort: XLA's importer raises on a proto it cannot read; the
    child reports it and exits non-zero."""
    worker = XlaWorker()
    try:
        with pytest.raises(ImportFailed) as info:
            _run_importer(b"\x08\xff\xff not a proto", "junk", worker)
    finally:
        worker.close()
    message = str(info.value)
    assert message.startswith("junk: link #2 (XLA's importer): ")
    assert "aborted" not in message and "\n" not in message


def test_isolated_import_equals_in_process_import():
    isolated = import_hlo(PROGRAM, "mhlo", source_name="p.hlo")
    direct = import_hlo(PROGRAM, "mhlo", isolate=False)
    assert (isolated.operation.get_asm(enable_debug_info=True)
            == direct.operation.get_asm(enable_debug_info=True))


# --------------------------------------------------------------------------
# Usage errors
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["tosa", "MHLO", "", "hlo"])
def test_unknown_dialect(dialect):
    with pytest.raises(ValueError, match="unknown dialect") as info:
        import_hlo(PROGRAM, dialect, isolate=False)
    assert not isinstance(info.value, ImportFailed)
