"""The chain on HLO modules written the way XLA's own C++ unit tests write them.

`xla_style/*.hlo` are hand-written in the forms of the HLO strings in XLA's
tests (copy insertion, call inliner, latency hiding scheduler, collective
pipeliner, tuple simplifier, CSE, while-loop unroller, send/recv combiner,
async collectives, the HLO parser's own tests): no `HloModule` line (the
text starts at a computation or at `ENTRY main {`) or a header with
attributes; shapes left for XLA to infer (`t = tuple(a, b)`); operands
written inline as nested instructions (`add(p0, s32[] constant(2))`); names
with and without `%`; the same names in several computations, which XLA's
parser renames (`a` -> `a.1`) and the chain must not. Each module has at
least one control edge, and its first line says what it exercises.

Edges are counted twice without the chain's reader: by XLA's parser (its
printing lists each instruction's `control-predecessors`), and from the text
as written (names as the user wrote them). For every module, in both dialects,
with and without --bundle, the report has one entry per edge, under the
written names, and loses none. Where XLA itself refuses, the chain raises one
specific exception whose one-line message is pinned here.
"""

from __future__ import annotations

import collections
import functools
import re
from dataclasses import dataclass, field

import jaxlib._hlo as xla_hlo
import jaxlib._jax as xla_ext
import pytest
from jaxlib.mlir import ir, passmanager

import pipeline
from pipeline.xla.importer import ImportFailed, import_hlo
from pipeline.xla.mlir_context import make_context, register_passes
from paths import XLA_STYLE as HERE

FILES = sorted(p.name for p in HERE.glob("*.hlo"))
DIALECTS = ("stablehlo", "mhlo")
BUNDLES = pytest.mark.parametrize("bundle", [False, True], ids=["flat", "bundle"])

# Modules whose ORIGINAL text XLA's importer (`hlo_to_stablehlo`) refuses:
# name -> the chain's message after `name: `. Every module of the corpus imports.
REFUSED: dict[str, str] = {}

# What MHLO's legalization (jaxlib's `stablehlo-legalize-to-hlo`) refuses:
# an async collective imports as `stablehlo.async_start`, which it marks
# illegal. The chain's one line, after `name: `, naming the first such start.
_ILLEGAL = ("failed to legalize operation 'stablehlo.async_start' that was explicitly marked illegal; "
            "--dialect stablehlo keeps the module as imported")
_LEGALIZE = "link #2 (symbol-dce, stablehlo-legalize-to-hlo) failed: "
MHLO_REFUSED = {
    "17_all_gather_start_done.hlo": f"{_LEGALIZE}%ag-start in %main: {_ILLEGAL}",
    "18_all_reduce_start_done.hlo": f"{_LEGALIZE}%ars in %main: {_ILLEGAL}",
    "19_collective_permute_start_done.hlo": f"{_LEGALIZE}%cp-start in %main: {_ILLEGAL}",
    "35_async_reduce_scatter.hlo": f"{_LEGALIZE}%rs-start in %main: {_ILLEGAL}",
    "36_async_all_to_all.hlo": f"{_LEGALIZE}%a2a-start in %main: {_ILLEGAL}",
    "60_collective_broadcast_async.hlo": f"{_LEGALIZE}%cb-start in %main: {_ILLEGAL}",
    "68_all_gather_start_in_loop.hlo": f"{_LEGALIZE}%ags in %body: {_ILLEGAL}",
    "76_all_reduce_start_in_branch.hlo": f"{_LEGALIZE}%start in %reduce_branch: {_ILLEGAL}",
}


@functools.cache
def text_of(name: str) -> str:
    return (HERE / name).read_text()


# --------------------------------------------------------------------------
# The oracles: XLA's parser and importer, and the text as written
# --------------------------------------------------------------------------

_PREDS = re.compile(r"control-predecessors=\{([^}]*)\}")


@functools.cache
def xla_edge_count(name: str) -> int:
    """Control edges of the module as XLA's parser reads it: the names in
    each `control-predecessors={...}` of its printing."""
    printed = xla_hlo.hlo_module_from_text(text_of(name)).to_string()
    return sum(len([p for p in preds.split(",") if p.strip()]) for preds in _PREDS.findall(printed))


@functools.cache
def xla_imports(name: str) -> str | None:
    """None if XLA's importer takes the original module, else its first line."""
    proto = xla_hlo.hlo_module_from_text(text_of(name)).as_serialized_hlo_module_proto()
    try:
        xla_ext.mlir.hlo_to_stablehlo(proto)
    except Exception as err:  # jaxlib's own error type
        return str(err).strip().splitlines()[0]
    return None


@functools.cache
def mhlo_legalization_refuses(name: str) -> bool:
    """jaxlib's `stablehlo-legalize-to-hlo` on XLA's import of the original."""
    proto = xla_hlo.hlo_module_from_text(text_of(name)).as_serialized_hlo_module_proto()
    module = ir.Module.parse(xla_ext.mlir.hlo_to_stablehlo(proto), context=make_context())
    register_passes()
    with module.context:
        try:
            passmanager.PassManager.parse("builtin.module(stablehlo-legalize-to-hlo)").run(module.operation)
        except ir.MLIRError:
            return True
    return False


@dataclass
class Instr:
    name: str
    opcode: str
    root: bool
    rest: str  # the text after `name = `
    preds: list[str] = field(default_factory=list)


@dataclass
class Computation:
    name: str
    entry: bool
    instrs: list[Instr] = field(default_factory=list)


_DEF = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s+=\s+(.*)")
_OPCODE = re.compile(r"(?<![\w\-.%])([a-z][a-z0-9\-]*)\(")


def _opcode(rest: str) -> str:
    m = _OPCODE.search(rest)
    return m.group(1) if m else ""


@functools.cache
def written(name: str) -> tuple[Computation, ...]:
    """The module as its text is written, without XLA or the chain's reader:
    computations, their instructions (names as written), opcodes and control
    predecessors. Instructions span lines; a computation written inline
    (`to_apply={ ... }`) is a computation of its own named `<inline>`."""
    comps: list[Computation] = []
    stack: list[tuple[Instr, Computation]] = []  # instructions whose inline computation is open
    current: Instr | None = None
    comp: Computation | None = None

    def finish():
        nonlocal current
        if current is not None:
            for preds in _PREDS.findall(current.rest):
                current.preds += [p.strip().lstrip("%") for p in preds.split(",") if p.strip()]
            current = None

    text = re.sub(r"/\*.*?\*/", "", text_of(name), flags=re.S)
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("//") or s.startswith("HloModule"):
            continue
        m = _DEF.fullmatch(line)
        if m:
            finish()
            current = Instr(m.group(2), _opcode(m.group(3)), bool(m.group(1)), m.group(3))
            comp.instrs.append(current)
        elif s.startswith("}") and stack:  # the end of an inline computation
            finish()
            current, comp = stack.pop()
            current.rest += s  # closes its `={`
        elif s == "}":
            finish()
            comp = None
        elif s.endswith("{") and current is None:  # a computation's header
            header = s.removeprefix("ENTRY").strip()
            comp = Computation(header.split()[0].lstrip("%").rstrip("{"), s.startswith("ENTRY"))
            comps.append(comp)
        else:
            current.rest += " " + s
        if current is not None and current.rest.rstrip().endswith("={"):  # an inline computation opens
            stack.append((current, comp))
            current, comp = None, Computation("<inline>", False)
            comps.append(comp)
    finish()
    return tuple(comps)


_ANONYMOUS = re.compile(r"[a-z][a-z0-9\-]*\.anon(\.\d+)?")


def written_edges(name: str) -> collections.Counter:
    """(predecessor, successor) of every control edge, names as written."""
    return collections.Counter((p, i.name) for c in written(name) for i in c.instrs for p in i.preds)


# --------------------------------------------------------------------------
# The chain, once per module, dialect and bundle
# --------------------------------------------------------------------------


@functools.cache
def chain(name: str, dialect: str, bundle: bool):
    """pipeline.run's result, or the exception it raised."""
    try:
        return pipeline.run(text_of(name), dialect=dialect, bundle=bundle, source_name=name, isolate=False)
    except Exception as err:  # noqa: BLE001 - the tests say which exception is expected
        return err


def result_of(name: str, dialect: str, bundle: bool):
    result = chain(name, dialect, bundle)
    if isinstance(result, Exception):
        raise result
    return result


# --------------------------------------------------------------------------
# 1. Every module is real XLA
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_every_module_is_accepted_by_xlas_parser_and_has_a_control_edge(name):
    text = text_of(name)
    xla_hlo.hlo_module_from_text(text)  # raises on refusal
    assert text.startswith("// "), "the first line says what the module exercises"
    assert xla_edge_count(name) >= 1
    # The text model agrees with XLA on how many edges there are.
    assert sum(written_edges(name).values()) == xla_edge_count(name)


@pytest.mark.parametrize("name", FILES)
def test_xlas_importer_takes_the_original_unless_recorded_as_refused(name):
    if name in REFUSED:
        assert xla_imports(name) is not None
    else:
        assert xla_imports(name) is None


def test_mhlo_refusals_are_exactly_what_jaxlibs_legalization_refuses_on_the_original():
    assert {n for n in FILES if mhlo_legalization_refuses(n)} == set(MHLO_REFUSED)


# --------------------------------------------------------------------------
# 2. One report entry per HLO edge, none lost; MHLO refuses only what jaxlib does
# --------------------------------------------------------------------------

CASES = [(n, d) for n in FILES if n not in REFUSED for d in DIALECTS
         if not (d == "mhlo" and n in MHLO_REFUSED)]


# What no Penguin program can carry, from XLA's own graph of the original
# (not from the chain): a predecessor with no value after import (a generic or
# copy start, send, recv, async-update) whose `*-done` already depends on the
# successor (standing in would make a cycle), or a successor whose operand XLA
# pins (a `*-done`, an async-update), not the ROOT, whose readers (if any) are
# pinned too.
_NO_VALUE = {"kCopyStart", "kSend", "kRecv", "kAsyncUpdate"}
_FUTURE_ROOTS = {"kReduceScatter", "kAllToAll", "kCollectiveBroadcast"}
_DONES = {"kAsyncDone", "kCopyDone", "kSendDone", "kRecvDone", "kAllReduceDone", "kAllGatherDone",
          "kCollectivePermuteDone"}
_PINNED = _DONES | {"kAsyncUpdate"}


def _kind(instr) -> str:
    return str(instr.opcode).rsplit(".", 1)[-1]


def _has_no_value(instr) -> bool:
    if _kind(instr) == "kAsyncStart":
        return _kind(instr.async_wrapped_root()) not in _FUTURE_ROOTS
    return _kind(instr) in _NO_VALUE


def _reaches(start, goal, control: dict) -> bool:
    """`goal` comes after `start` by data or control edges."""
    seen, stack = set(), [start]
    while stack:
        instr = stack.pop()
        if instr.name == goal.name:
            return True
        if instr.name not in seen:
            seen.add(instr.name)
            stack += instr.users() + control.get(instr.name, [])
    return False


@functools.cache
def xla_opcodes(name: str) -> dict:
    from pipeline.verifier.verify import read_hlo
    return read_hlo(text_of(name))


@functools.cache
def uncarriable(name: str) -> frozenset:
    """(computation, pred, succ) by XLA's names, which equal the written ones
    in the modules where this applies (asserted by the caller)."""
    found = set()
    for comp in xla_hlo.hlo_module_from_text(text_of(name)).computations():
        by_name = {i.name: i for i in comp.instructions()}
        root = comp.instructions()[-1].name  # XLA's parser keeps the written order
        edges = []
        for succ in comp.instructions():
            m = _PREDS.search(succ.to_string())
            edges += [(by_name[n.strip().lstrip("%")], succ) for n in (m.group(1).split(",") if m else ())
                      if n.strip()]
        control: dict = {}
        for pred, succ in edges:
            control.setdefault(pred.name, []).append(succ)
        for pred, succ in edges:
            pname = pred.name
            if _has_no_value(pred):
                done = pred
                while _kind(done) not in _DONES and done.users():
                    done = done.users()[0]
                if _kind(done) in _DONES and _reaches(succ, done, control):
                    found.add((comp.name, pname, succ.name))
            if _kind(succ) in _PINNED and all(_kind(u) in _PINNED for u in succ.users()) and succ.name != root:
                # Nothing can read it: its start carries the edge (S waits for
                # it), unless the start comes before p already (a cycle).
                start = succ.operands()[0]
                while _kind(start) in _PINNED:
                    start = start.operands()[0]
                if not start.operands() or _reaches(start, pred, control):
                    found.add((comp.name, pname, succ.name))
    return frozenset(found)


@BUNDLES
@pytest.mark.parametrize("name,dialect", CASES, ids=[f"{n[:-4]}-{d}" for n, d in CASES])
def test_one_report_entry_per_edge_and_only_what_no_program_can_carry_lost(name, dialect, bundle):
    result = result_of(name, dialect, bundle)
    report = result.report
    assert len(report.edges) == xla_edge_count(name)
    lost = {(e.computation, e.predecessor, e.successor) for e in report.lost}
    assert lost <= uncarriable(name), [str(e) for e in report.lost]
    # The importer folds a send-done (recv-done) into its send (recv) op, so an
    # edge into one can still be ordered through that op: the only ones kept.
    opcodes = {(c, i.name): i.opcode for c, instrs in xla_opcodes(name).items() for i in instrs}
    assert all(opcodes[(c, s)] in ("send-done", "recv-done") for c, _, s in uncarriable(name) - lost)
    assert all("link #1" in e.lost_at and e.link1.startswith("dropped") for e in report.lost)
    assert report.spurious == []
    result.module().schedule()  # the emitted order has no cycle (a ScheduleError would name it)
    for edge in report.edges:
        assert edge.fate in ("preserved", "rerouted", "dropped", "lost"), edge
        if edge.fate != "preserved":
            assert edge.reason, edge


def test_the_uncarriable_oracle_finds_each_kind():
    # Cycles through a copy-start, a generic async-start, a send/recv chain,
    # and a pinned successor with no reader: each kind is in the corpus.
    kinds = {name: uncarriable(name) for name in FILES}
    assert kinds["20_copy_start_done.hlo"] and kinds["21_async_start_update_done.hlo"]
    assert kinds["74_recv_done_after_send.hlo"] and kinds["66_async_fusion_with_update.hlo"]
    assert sum(len(v) for v in kinds.values()) >= 8


@BUNDLES
@pytest.mark.parametrize("name", sorted(MHLO_REFUSED))
def test_mhlo_refuses_async_collectives_in_one_line(name, bundle):
    err = chain(name, "mhlo", bundle)
    assert isinstance(err, ImportFailed), err
    assert str(err) == f"{name}: {MHLO_REFUSED[name]}"


@pytest.mark.parametrize("name", sorted(MHLO_REFUSED))
def test_mhlo_refusal_is_the_same_without_link_1(name):
    with pytest.raises(ImportFailed) as err:
        pipeline.run(text_of(name), dialect="mhlo", reify=False, source_name=name, isolate=False)
    assert str(err.value) == f"{name}: {MHLO_REFUSED[name]}"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_modules_xlas_importer_refuses_give_one_line(dialect):
    # Empty while every module of the corpus imports: the place to pin a refusal.
    for name, message in REFUSED.items():
        for bundle in (False, True):
            err = chain(name, dialect, bundle)
            assert isinstance(err, ImportFailed), (name, err)
            assert str(err) == f"{name}: {message}"


# --------------------------------------------------------------------------
# 3. The report's names are the names as written
# --------------------------------------------------------------------------


@BUNDLES
@pytest.mark.parametrize("name,dialect", CASES, ids=[f"{n[:-4]}-{d}" for n, d in CASES])
def test_report_names_are_the_names_as_written(name, dialect, bundle):
    report = result_of(name, dialect, bundle).report
    got = collections.Counter((e.predecessor, e.successor) for e in report.edges)
    assert got == written_edges(name)
    # What the edges landed on: instructions as written, or an operand written
    # inline, which has no name of its own and takes XLA's `<opcode>.anon`.
    defined = {i.name for c in written(name) for i in c.instrs}
    for edge in report.edges:
        for op in (n for pair in edge.emitted for n in pair):
            assert op in defined or _ANONYMOUS.fullmatch(op), edge


# --------------------------------------------------------------------------
# 4. Link #1 never creates an importer failure
# --------------------------------------------------------------------------


@BUNDLES
@pytest.mark.parametrize("name", [n for n in FILES if n not in REFUSED])
def test_link_1_output_imports_wherever_the_original_does(name, bundle):
    assert xla_imports(name) is None
    hlo = result_of(name, "stablehlo", bundle).hlo
    parsed = xla_hlo.hlo_module_from_text(hlo)
    xla_ext.mlir.hlo_to_stablehlo(parsed.as_serialized_hlo_module_proto())  # raises on refusal
    for dialect in DIALECTS:
        if dialect == "mhlo" and name in MHLO_REFUSED:  # refused on the original too (test above)
            with pytest.raises(ImportFailed):
                import_hlo(hlo, dialect, isolate=False, source_name=name)
            continue
        import_hlo(hlo, dialect, isolate=False, source_name=name)


# --------------------------------------------------------------------------
# The default (isolated) chain, once
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_smoke_isolated_chain_on_a_headerless_module_with_reused_names(dialect):
    name = "13_conditional_predicated_same_names.hlo"
    result = pipeline.run(str(HERE / name), dialect=dialect)  # isolate=True: what the CLI does
    assert result.report.lost == []
    assert collections.Counter((e.predecessor, e.successor) for e in result.report.edges) == written_edges(name)
    assert ("on_true", "a", "b") in result.module().dep_edges()
    assert ("on_false", "a", "b") in result.module().dep_edges()


# --------------------------------------------------------------------------
# 5. The corpus covers the forms of XLA's tests
# --------------------------------------------------------------------------


def _files_where(predicate) -> list[str]:
    return [n for n in FILES if predicate(n)]


def _instrs(name: str):
    return [(c, i) for c in written(name) for i in c.instrs]


def _reused(name: str, comps: set[str] | None = None) -> set[str]:
    """Names defined in more than one computation (of `comps`, if given)."""
    seen = collections.Counter(i.name for c in written(name) if comps is None or c.name in comps
                               for i in {x.name: x for x in c.instrs}.values())
    return {n for n, k in seen.items() if k > 1}


def _edges(name: str):
    """(computation, predecessor Instr, successor Instr) as written."""
    for c in written(name):
        by_name = {i.name: i for i in c.instrs}
        for i in c.instrs:
            for p in i.preds:
                yield c, by_name[p], i


def _tuple_shaped(instr: Instr) -> bool:
    return instr.rest.startswith("(") or instr.opcode in ("tuple", "while")


def _callees(name: str, attribute: str) -> set[str]:
    return {m for _, i in _instrs(name) for m in re.findall(rf"\b{attribute}=%?([\w.\-]+)", i.rest)}


def _async_callees(name: str) -> set[str]:
    return {m for _, i in _instrs(name) if i.opcode == "async-start"
            for m in re.findall(r"\bcalls=%?([\w.\-]+)", i.rest)}


def _header(name: str) -> str:
    return next((line for line in text_of(name).splitlines() if line.startswith("HloModule")), "")


def _body(name: str) -> str:
    return "\n".join(line for line in text_of(name).splitlines() if not line.lstrip().startswith("//"))


_SHAPELESS = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+ = (tuple|add|get-tuple-element|copy|multiply|negate)\(", re.M)
_NESTED = re.compile(r"[(,]\s*[a-z]+\d*\[[\d,]*\](?:\{[^}]*\})? [a-z\-]+\(")

FORMS = {
    # headers
    "no HloModule line": lambda n: not _header(n),
    "no HloModule line, text starts at ENTRY main {": lambda n: _body(n).lstrip().startswith("ENTRY main {"),
    "no HloModule line, text starts at a computation": lambda n: not _header(n) and not _body(
        n).lstrip().startswith(("ENTRY", "HloModule")),
    "HloModule with is_scheduled=true": lambda n: "is_scheduled=true" in _header(n),
    "HloModule with entry_computation_layout": lambda n: "entry_computation_layout=" in _header(n),
    "HloModule with num_partitions or replica_count": lambda n: re.search(r"num_partitions=|replica_count=",
                                                                          _header(n)) is not None,
    "HloModule with input_output_alias": lambda n: "input_output_alias=" in _header(n),
    "HloModule without an ENTRY keyword": lambda n: _header(n) and "ENTRY" not in _body(n),
    # shapes and operands
    "shape-less tuple": lambda n: any(m.group(1) == "tuple" for m in _SHAPELESS.finditer(text_of(n))),
    "shape-less add": lambda n: any(m.group(1) == "add" for m in _SHAPELESS.finditer(text_of(n))),
    "shape-less get-tuple-element": lambda n: any(m.group(1) == "get-tuple-element"
                                                  for m in _SHAPELESS.finditer(text_of(n))),
    "shape-less copy": lambda n: any(m.group(1) == "copy" for m in _SHAPELESS.finditer(text_of(n))),
    "nested inline constant operand": lambda n: re.search(r"[(,]\s*[a-z]+\d*\[\]\s+constant\(", text_of(n)),
    "nested inline non-constant operand": lambda n: any(not m.group(0).endswith("constant(")
                                                        for m in _NESTED.finditer(text_of(n))),
    "nested operand without a shape": lambda n: re.search(r"[(,]\s*[a-z][a-z\-]*\(", _body(n)),
    "inline computation (to_apply={...})": lambda n: any(c.name == "<inline>" for c in written(n)),
    "names without %": lambda n: re.search(r"^\s*(ROOT\s+)?[A-Za-z_][\w.\-]* = ", text_of(n), re.M),
    "names with %": lambda n: re.search(r"^\s*(ROOT\s+)?%[\w.\-]+ = ", text_of(n), re.M),
    "// comment first line": lambda n: text_of(n).startswith("// "),
    "/* */ comment": lambda n: "/*" in text_of(n),
    # names reused
    "a and b in both branches of a conditional": lambda n: {"a", "b"} <= _reused(
        n, _callees(n, "true_computation") | _callees(n, "false_computation")),
    "n in a while condition and its caller": lambda n: any(
        "n" in _reused(n, {cond, c.name}) for cond in _callees(n, "condition") for c, i in _instrs(n)
        if i.opcode == "while" and re.search(rf"condition=%?{re.escape(cond)}\b", i.rest)),
    "a name in a called computation and the entry": lambda n: any(
        _reused(n, {callee} | {c.name for c in written(n) if c.entry}) for callee in _callees(n, "to_apply")
        if any(i.opcode == "call" for _, i in _instrs(n))),
    "XLA renames a reused name (a -> a.1)": lambda n: any(
        f"%{r}.1 = " in xla_hlo.hlo_module_from_text(text_of(n)).to_string() for r in _reused(n)),
    # async pairs and collectives
    **{f"{op}": (lambda op: lambda n: any(i.opcode == op for _, i in _instrs(n)))(op) for op in (
        "all-gather-start", "all-gather-done", "all-reduce-start", "all-reduce-done", "collective-permute-start",
        "collective-permute-done", "copy-start", "copy-done", "async-start", "async-update", "async-done",
        "send", "recv", "send-done", "recv-done", "after-all", "all-reduce", "all-gather", "reduce-scatter",
        "all-to-all", "collective-permute", "call", "fusion", "while", "conditional", "custom-call",
        "custom-call-start", "iota", "constant", "parameter")},
    "async-start with calls=": lambda n: any(i.opcode == "async-start" and "calls=" in i.rest for _, i in _instrs(n)),
    "send-done as successor": lambda n: any(s.opcode == "send-done" for _, _, s in _edges(n)),
    "send-done as predecessor": lambda n: any(p.opcode == "send-done" for _, p, _ in _edges(n)),
    "recv-done as successor": lambda n: any(s.opcode == "recv-done" for _, _, s in _edges(n)),
    "recv-done as predecessor": lambda n: any(p.opcode == "recv-done" for _, p, _ in _edges(n)),
    "replica_groups list form": lambda n: "replica_groups={{" in text_of(n),
    "replica_groups iota form": lambda n: re.search(r"replica_groups=\[[\d,]+\]<=\[", text_of(n)),
    "channel_id": lambda n: "channel_id=" in text_of(n),
    # control flow
    "fusion kind=kLoop with calls=": lambda n: re.search(r"fusion\([^)]*\), kind=kLoop, calls=", text_of(n)),
    "nested while loops": lambda n: any(i.opcode == "while" for c, i in _instrs(n)
                                        if c.name in _callees(n, "body")),
    "predicated conditional": lambda n: "true_computation=" in text_of(n),
    "indexed conditional": lambda n: "branch_computations=" in text_of(n),
    # where the edges are
    "edge in a while body": lambda n: any(c.name in _callees(n, "body") for c, _, _ in _edges(n)),
    "edge in a while condition": lambda n: any(c.name in _callees(n, "condition") for c, _, _ in _edges(n)),
    "edge in a conditional branch": lambda n: any(
        c.name in _callees(n, "true_computation") | _callees(n, "false_computation")
        | {b for m in re.findall(r"branch_computations=\{([^}]*)\}", text_of(n)) for b in re.split(r",\s*", m)}
        for c, _, _ in _edges(n)),
    "edge in a called computation": lambda n: any(c.name in _callees(n, "to_apply") and any(
        i.opcode == "call" for _, i in _instrs(n)) for c, _, _ in _edges(n)),
    "edge in an async computation": lambda n: any(c.name in _async_callees(n) for c, _, _ in _edges(n)),
    "shape-less instruction in an async computation": lambda n: any(
        c.name in _async_callees(n) and not re.match(r"[a-z]+\d*\[|\(", i.rest) for c, i in _instrs(n)),
    "edge in a fused computation": lambda n: any(c.name in _callees(n, "calls") and any(
        i.opcode == "fusion" for _, i in _instrs(n)) for c, _, _ in _edges(n)),
    **{f"edge into a {op}": (lambda op: lambda n: any(s.opcode == op for _, _, s in _edges(n)))(op)
       for op in ("call", "fusion", "while", "conditional")},
    **{f"edge out of a {op}": (lambda op: lambda n: any(p.opcode == op for _, p, _ in _edges(n)))(op)
       for op in ("call", "fusion", "while", "conditional")},
    **{f"{op} as successor": (lambda op: lambda n: any(s.opcode == op for _, _, s in _edges(n)))(op)
       for op in ("constant", "parameter", "iota", "after-all", "partition-id", "replica-id")},
    "ROOT tuple as successor": lambda n: any(s.root and s.opcode == "tuple" for _, _, s in _edges(n)),
    **{f"tuple-shaped {op} as predecessor": (lambda op: lambda n: any(
        p.opcode == op and _tuple_shaped(p) for _, p, _ in _edges(n)))(op)
       for op in ("while", "tuple", "custom-call", "fusion", "parameter", "rng-bit-generator", "infeed")},
    "several predecessors on one successor": lambda n: any(len(i.preds) > 1 for _, i in _instrs(n)),
    "six predecessors on one successor": lambda n: any(len(i.preds) >= 6 for _, i in _instrs(n)),
}


def test_corpus_has_at_least_65_modules_covering_every_form():
    assert len(FILES) >= 65
    missing = [form for form, has in FORMS.items() if not _files_where(has)]
    assert missing == []
