"""The chain on modules shaped like real XLA pipeline dumps.

`pipeline_dumps/*.hlo` are hand-written in the form XLA's GPU (and TPU)
pipelines dump a module after optimization: scheduled, with
`entry_computation_layout`, fusions (`kind=kLoop/kInput/kCustom`), GPU
`backend_config` JSON, cuBLAS custom-calls returning (result, workspace)
tuples, async wrappers and async collectives, host offloading, send/recv
with tokens, nested loops, conditionals, tiled layouts, and `metadata` on
every instruction. Each control edge sits where XLA's scheduler or copy
insertion puts one. `pipeline_dumps/multi_device.py` adds XLA CPU dumps of
JAX programs on four devices (shard_map and pmap with psum, all_gather and
ppermute inside loops), captured at test time in a fresh process.

For every module, in both dialects, with and without --bundle: every HLO
control edge has one entry in the report, none is lost, and the Penguin
program's dep edges are exactly the ones the report says were emitted. Where
XLA itself refuses the module, the chain raises one specific exception with
one line naming the cause.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys

import pytest

import pipeline
from passes.hlo.proto import local_id
from pipeline.cli import hlo2penguin as cli
from pipeline.xla.importer import ImportFailed
from pipeline.xla.isolated import XlaRejected, abort_reason, first_said, parse, parse_with_xla
from xla_refusals import REFUSED
from paths import PIPELINE_DUMPS, REPO

HERE = PIPELINE_DUMPS
FILES = sorted(p.name for p in HERE.glob("*.hlo"))
DIALECTS = ("stablehlo", "mhlo")
BUNDLES = pytest.mark.parametrize("bundle", [False, True], ids=["flat", "bundle"])

def xla_words(message: str) -> str:
    """The message with XLA's source position cut to the file's name: the
    line number and the build path (`external/xla/xla/...:545`, `external/
    xla+/xla/...:568`) change from one jaxlib to the next, the words do not."""
    return re.sub(r"\((?:[\w.+-]+/)*([\w.-]+\.cc):\d+\)", r"(\1)", message)
WORKING = [name for name in FILES if name not in REFUSED]

# Collectives whose asynchronous form imports as stablehlo.async_start, which
# MHLO's legalization (stablehlo-legalize-to-hlo) refuses.
_COLLECTIVES = ("all-reduce", "all-gather", "collective-permute", "reduce-scatter", "all-to-all")


def text_of(name: str) -> str:
    return (HERE / name).read_text()


_COMPUTATION_HEAD = re.compile(r"^(?:ENTRY\s+)?%([\w.\-]+)\s*[({]", re.M)
_DEFINITION = re.compile(r"^\s+(?:ROOT\s+)?%([\w.\-]+)\s*=", re.M)


class Hlo:
    """A module as XLA's parser reads it (`pipeline.xla.isolated.parse`), by the names
    as written: what these tests ask of the HLO itself."""

    def __init__(self, text: str):
        self.parsed = parse(text)
        self.by_id = {c.id: c for c in self.parsed.proto.computations}

    def control_edges(self) -> list[tuple[str, str, str]]:
        return self.parsed.control_edges()

    def instructions(self):
        """(computation, instruction as written, its proto, the computation's protos by id), in text order."""
        for comp in self.parsed.proto.computations:
            by_id = {i.id: i for i in comp.instructions}
            for instr in sorted(comp.instructions, key=lambda i: local_id(i.id)):
                yield comp.name, self.parsed.name(comp.name, instr.name), instr, by_id

    def written(self) -> set[tuple[str, str]]:
        """(computation, instruction) of every definition line of the text (not
        the instructions XLA's parser makes, as for an async start's sugared form)."""
        text, found = self.parsed.text, set()
        heads = list(_COMPUTATION_HEAD.finditer(text))
        for head, after in zip(heads, heads[1:] + [None]):
            body = text[head.end():after.start() if after else len(text)]
            found |= {(head.group(1), m.group(1)) for m in _DEFINITION.finditer(body)}
        return found

    def root_opcode(self, computation_id: int) -> str:
        comp = self.by_id[computation_id]
        return next(i.opcode for i in comp.instructions if i.id == comp.root_id)


def first_async_collective(module: Hlo) -> tuple[str, str] | None:
    """(computation, instruction) of the module's first asynchronous collective."""
    for computation, name, instr, _ in module.instructions():
        opcode = instr.opcode
        if opcode == "async-start":
            opcode = module.root_opcode(instr.called_computation_ids[0]) + "-start"
        if opcode in tuple(f"{c}-start" for c in _COLLECTIVES):
            return computation, name
    return None


def as_imported(module: Hlo, computation: str, name: str) -> str:
    """XLA's importer folds send/send-done (recv/recv-done) into one op named
    after the send (recv): an edge from a done comes out under the start's name."""
    for comp, written, instr, by_id in module.instructions():
        if comp == computation and written == name and instr.opcode in ("send-done", "recv-done"):
            return module.parsed.name(comp, by_id[instr.operand_ids[0]].name)
    return name


# Edges no program can carry, found by the verifier (pipeline.verifier.verify), not by
# link #1: in gpu_send_recv_loop's P2P chain recv → send → tanh → recv-done →
# send-done, a done standing in for its start would come after the successor
# (a cycle), and send-done's token is read by nothing. Link #1 says so and
# drops them; the verifier, judging the program alone, calls them lost.
KNOWN_LOST = {
    "gpu_send_recv_loop.hlo": {("body", "send.12", "loop_tanh_fusion")},
}


def check_invariant(result, module, name: str | None = None) -> None:
    report = result.report
    lost = {(e.computation, e.predecessor, e.successor) for e in report.lost}
    assert lost == KNOWN_LOST.get(name, set()), [str(e) for e in report.lost]
    assert all("link #1" in e.lost_at and e.link1.startswith("dropped") for e in report.lost)
    assert report.spurious == [], [str(e) for e in report.spurious]
    keys = collections.Counter((e.computation, e.predecessor, e.successor) for e in report.edges)
    assert keys == collections.Counter(module.control_edges())  # one entry per HLO edge
    for edge in report.edges:
        assert edge.fate in ("preserved", "rerouted", "dropped", "lost") and (edge.fate == "preserved" or edge.reason)
        if edge.fate == "preserved":
            pair = (as_imported(module, edge.computation, edge.predecessor),
                    as_imported(module, edge.computation, edge.successor))
            assert pair in edge.carried, edge
    program = result.module()
    emitted = {(e.computation, as_imported(module, e.computation, p), s)
               for e in report.edges for p, s in e.emitted}
    assert program.dep_edges() == emitted
    assert report.dep_edges == len(program.dependencies) == len(emitted)  # each edge once
    program.schedule()  # no cycle: a ScheduleError would name it
    parse_with_xla(result.hlo)  # link #1 wrote real XLA


def run(name: str, **options):
    path = HERE / name
    return pipeline.run(str(path), isolate=False, **options)


# --------------------------------------------------------------------------
# Every module, both dialects, bundle on and off
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_every_module_is_real_xla_with_metadata_on_every_instruction(name):
    text = text_of(name)
    module = Hlo(text)
    assert module.control_edges()
    written = module.written()
    read = [(c, name, i) for c, name, i, _ in module.instructions() if (c, name) in written]
    assert len(read) == len(written) == text.count(" = ")  # each definition line, read by XLA
    missing = [f"%{c}: %{name}" for c, name, i in read if not i.metadata.ListFields()]
    assert missing == []  # link #2 must name Penguin nodes after instructions, not op_names


MHLO_REFUSED = [n for n in WORKING if first_async_collective(Hlo(text_of(n)))]
CASES = [(n, d) for n in WORKING for d in DIALECTS if not (d == "mhlo" and n in MHLO_REFUSED)]


@BUNDLES
@pytest.mark.parametrize("name,dialect", CASES, ids=[f"{n[:-4]}-{d}" for n, d in CASES])
def test_edges_in_equal_edges_out(name, dialect, bundle):
    check_invariant(run(name, dialect=dialect, bundle=bundle), Hlo(text_of(name)), name)


@pytest.mark.parametrize("reify,bundle", [(True, False), (True, True), (False, False)],
                         ids=["flat", "bundle", "without-link-1"])
@pytest.mark.parametrize("name", MHLO_REFUSED)
def test_mhlo_refuses_async_collectives_in_one_line_naming_the_first(name, reify, bundle):
    computation, start = first_async_collective(Hlo(text_of(name)))
    path = str(HERE / name)
    with pytest.raises(ImportFailed) as err:
        pipeline.run(path, dialect="mhlo", bundle=bundle, reify=reify, isolate=False)
    assert str(err.value) == (
        f"{path}: link #2 (symbol-dce, stablehlo-legalize-to-hlo) failed: %{start} in %{computation}: "
        "failed to legalize operation 'stablehlo.async_start' that was explicitly marked illegal; "
        "--dialect stablehlo keeps the module as imported")


@BUNDLES
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_modules_xla_refuses_give_one_line(name, dialect, bundle):
    path = str(HERE / name)
    with pytest.raises((ImportFailed, XlaRejected)) as err:
        pipeline.run(path, dialect=dialect, bundle=bundle)  # isolate=True: what the CLI does
    assert xla_words(str(err.value)) == f"{path}: {REFUSED[name]}"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refusals_are_xlas_own_not_caused_by_link_1(name):
    path = str(HERE / name)
    with pytest.raises((ImportFailed, XlaRejected)) as err:
        pipeline.run(path, reify=False, isolate=False)
    assert xla_words(str(err.value)) == f"{path}: {REFUSED[name]}"


def test_cli_refusal_is_one_line_on_stderr_and_exit_2(capsys):
    path = str(HERE / "gpu_combined_all_reduce.hlo")
    assert cli.main([path, "--emit", "report", "--check"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert xla_words(captured.err) == f"hlo2penguin: error: {path}: {REFUSED['gpu_combined_all_reduce.hlo']}\n"


def test_cli_check_passes_on_a_dump_with_preserved_and_rerouted_edges(capsys):
    assert cli.main([str(HERE / "gpu_async_streams_offload.hlo"), "--emit", "report", "--json", "--check"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert totals["lost"] == 0 and totals["preserved"] and totals["rerouted"]


# --------------------------------------------------------------------------
# What each module is there for
# --------------------------------------------------------------------------


def fates(result) -> dict[tuple[str, str], tuple[str, tuple]]:
    return {(e.predecessor, e.successor): (e.fate, e.emitted) for e in result.report.edges}


def test_collective_start_orders_overlapped_work_and_a_tuple_shaped_gemm_is_one_node():
    result = run("gpu_gemm_all_reduce.hlo")
    edge = fates(result)
    # all-reduce-start imports as a !stablehlo.future value: it is the predecessor itself.
    assert edge[("all-reduce-start", "loop_bias_relu_fusion")][0] == "preserved"
    assert edge[("all-reduce-start", "gemm_fusion")][0] == "preserved"
    # The cuBLAS call's (result, workspace) tuple is one op, not two predecessors.
    assert edge[("custom-call.4", "input_row_max_fusion")][0] == "preserved"
    # all-reduce-done must read its start: the op that reads the done carries the edge.
    assert edge[("gemm_fusion", "all-reduce-done")] == ("rerouted", (("gemm_fusion", "bitcast.20"),))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_async_and_copy_starts_hand_their_edges_to_their_dones(dialect):
    result = run("gpu_async_streams_offload.hlo", dialect=dialect)
    edge = fates(result)
    # async-start and copy-start have no value after import; their done stands in.
    assert edge[("copy-start", "loop_exp_fusion")] == ("rerouted", (("copy-done", "loop_exp_fusion"),))
    assert edge[("loop_scale_fusion.2", "input_reduce_fusion")] == (
        "rerouted", (("loop_scale_fusion.3", "input_reduce_fusion"),))
    # A constant takes no operand: the broadcast that reads it carries the edge.
    assert edge[("loop_exp_fusion", "constant.26")] == ("rerouted", (("loop_exp_fusion", "broadcast.27"),))
    # The fusion the async-start wraps keeps its own name and computation
    # (regression: it carried the async-done's, see the next test).
    wrapped = [i for i in result.module().instructions() if i.name == "loop_scale_fusion.1"]
    assert [i.computation for i in wrapped] == ["async_computation"]


def test_async_reduce_scatter_and_all_to_all_keep_the_names_of_their_dones():
    # Regression: XLA's importer gives the op an async-start wraps the location
    # of the matching done. Printed first, the wrapped op took the done's name,
    # the done became `reduce-scatter-done.async_done`, and every edge from a
    # done (own or standing in for its start) was lost, blamed on link #4.
    result = run("gpu_async_reduce_scatter_all_to_all.hlo")
    program = result.module()
    ops = {i.name: i for i in program.instructions()}
    assert ops["reduce-scatter-done"].opcode == ops["all-to-all-done"].opcode == "stablehlo.async_done"
    assert ops["all-to-all.9"].opcode == "stablehlo.all_to_all"  # the root of `calls=`
    assert ops["all-to-all.9"].computation == "all-to-all.clone"
    assert ops["reduce-scatter-start:reduce_scatter"].opcode == "stablehlo.reduce_scatter"  # no `calls=`
    assert ("main.30", "reduce-scatter-done", "copy.10") in program.dep_edges()
    assert ("main.30", "all-to-all-done", "bitcast.11") in program.dep_edges()


def test_send_recv_edges_come_back_under_the_send_and_recv_names():
    result = run("gpu_send_recv_loop.hlo")
    edge = fates(result)
    # send has no value after import; link #1 has its send-done stand in, and
    # the importer folds send-done into the send op, which keeps the send's
    # name: the program has the edge itself.
    assert edge[("send.25", "copy.31")] == ("preserved", (("send-done.26", "copy.31"),))
    assert ("main.40", "send.25", "copy.31") in result.module().dep_edges()
    # In the P2P chain recv → send → tanh → recv-done → send-done, a done
    # standing in for its start would come after the successor: a cycle.
    fate, emitted = edge[("send.12", "loop_tanh_fusion")]
    assert fate == "lost" and emitted == ()
    said = {(e.predecessor, e.successor): e.link1 for e in result.report.edges}
    assert said[("send.12", "loop_tanh_fusion")].startswith("dropped") and "(a cycle)" in said[
        ("send.12", "loop_tanh_fusion")]
    assert said[("recv.11", "send.12")].startswith("dropped") and "(a cycle)" in said[("recv.11", "send.12")]
    # send-done's token is read by nothing: its start, the send, carries the
    # edge into it (send-done waits for the send). The importer folds each
    # pair into one op named after its start, so the program's recv -> send
    # orders both recv-done -> send-done and recv -> send.
    assert said[("recv-done.13", "send-done.14")].startswith("rerouted")
    for pred, succ in [("recv-done.13", "send-done.14"), ("recv.11", "send.12")]:
        fate, emitted = edge[(pred, succ)]
        assert fate == "preserved" and ("recv.11", "send.12") in {
            (p, s) for p, s in next(e.carried for e in result.report.edges
                                    if (e.predecessor, e.successor) == (pred, succ))}
    assert ("body", "recv.11", "send.12") in result.module().dep_edges()


def test_nested_loops_keep_copy_edges_and_a_while_successor_gets_each_edge_once():
    result = run("gpu_nested_while_collectives.hlo")
    edge = fates(result)
    assert edge[("copy.15", "copy.18")][0] == edge[("copy.14", "copy.19")][0] == "preserved"  # inner body
    assert edge[("copy.50", "copy.51")][0] == "preserved"  # entry
    # A condition's get-tuple-element of its parameter is ready before anything in it.
    for pred, succ in [("get-tuple-element.22", "compare.25"), ("get-tuple-element.46", "constant.47")]:
        assert edge[(pred, succ)][0] == "dropped"
    # Regression: the inner while reads its operand tuple as three values, and
    # the printer wrote each of its two edges three times.
    into_loop = [(d.predecessor.name, d.successor.name) for d in result.module().dependencies
                 if d.successor.name == "while.38"]
    assert sorted(into_loop) == [("all-reduce-start.34", "while.38"), ("collective-permute-start.31", "while.38")]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_tokens_barriers_and_zero_operand_ids(dialect):
    result = run("gpu_tokens_barriers_rng.hlo", dialect=dialect)
    edge = fates(result)
    # Tuple-shaped predecessors (infeed, rng-bit-generator, opt-barrier) are one node each.
    for pred, succ in [("infeed.14", "rng-bit-generator.18"), ("rng-bit-generator.18", "opt-barrier.22"),
                       ("opt-barrier.22", "loop_select_fusion"), ("outfeed.25", "loop_multiply_fusion"),
                       ("opt-barrier.22", "add-dependency.26")]:
        assert edge[(pred, succ)] == ("preserved", ((pred, succ),))
    # partition-id and replica-id take no operand: their readers carry the edges.
    assert edge[("loop_select_fusion", "partition-id.27")] == ("rerouted", (("loop_select_fusion", "add.31"),))
    assert edge[("partition-id.27", "replica-id.28")] == ("rerouted", (("partition-id.27", "multiply.30"),))
    # A get-tuple-element is no op after import: the rng-bit-generator behind it stands in.
    assert edge[("get-tuple-element.19", "add.31")] == ("rerouted", (("rng-bit-generator.18", "add.31"),))


def test_edges_inside_every_branch_reach_the_program_under_the_branch():
    result = run("gpu_conditional_branches.hlo")
    by_computation = collections.defaultdict(set)
    for computation, pred, succ in result.module().dep_edges():
        by_computation[computation].add((pred, succ))
    assert by_computation["branch_0"] == {("copy.10", "loop_relu_fusion")}
    assert by_computation["branch_1"] == {("copy.15", "copy.16")}
    assert by_computation["on_true"] == {("negate.25", "abs.26")}
    assert ("copy.32", "conditional.34") in by_computation["main.50"]  # on its branch index
    # A branch's ROOT tuple is the branch's end: an edge into it is implied.
    fate, _ = fates(result)[("copy.16", "tuple.17")]
    assert fate == "dropped"


def test_tiled_layouts_survive_link_1_verbatim():
    result = run("tpu_tiled_layouts.hlo", dialect="mhlo")
    for shape in ("bf16[512,256]{1,0:T(8,128)(2,1)S(1)}", "f32[256,256]{1,0:T(8,128)}", "s32[]{:T(128)}"):
        assert shape in result.hlo
    assert fates(result)[("copy-start.21", "all-reduce.24")] == ("rerouted", (("copy-done.22", "all-reduce.24"),))


@BUNDLES
def test_command_buffer_call_needs_scope_all_and_the_report_says_so(bundle):
    # The command buffer is a function of its own: with scope=main (the pass's
    # own default, not the chain's) what stays bundled there is lost, blamed on
    # link #3 with the fix.
    # Regression: a tuple the importer made for a multi-result predecessor
    # carries that instruction's name, and the loss was blamed on link #4.
    path = str(HERE / "gpu_command_buffer_call.hlo")
    report = pipeline.run(path, bundle=bundle, scope="main", isolate=False).report
    # Flat, only a predecessor with several results comes back as a tuple;
    # bundled, every predecessor in the called computation does: a dep edge
    # from the tuple is spurious, and where data do not order the pair the
    # HLO edge is lost (custom-call.16's reader also reads it by data).
    assert {e.predecessor for e in report.lost} == {"rng-bit-generator.18"}
    assert all(e.computation == "command_buffer" and "link #3" in e.lost_at and "try scope=all" in e.reason
               for e in report.lost)
    spurious = {(e.predecessor, e.successor) for e in report.spurious}
    assert spurious == ({("loop_add_fusion.control-dep-bundle", "loop_add_fusion"),
                         ("loop_select_fusion.control-dep-bundle", "loop_select_fusion")} if bundle
                        else {("rng-bit-generator.18:tuple", "loop_add_fusion")})
    assert all("link #3" in e.at for e in report.spurious)
    assert pipeline.run(path, bundle=bundle, isolate=False).report.lost == []  # the chain's default: all


def test_two_calls_carrying_the_same_pair_give_one_dep_edge():
    # Two constants ordered after %a are both read by %s: two control-dep
    # calls, one pair (a, s). Regression: the printer wrote it twice.
    text = """\
HloModule same_pair

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %k1 = f32[4]{0} constant({1, 2, 3, 4}), control-predecessors={%a}
  %k2 = f32[4]{0} constant({5, 6, 7, 8}), control-predecessors={%a}
  ROOT %s = f32[4]{0} add(%k1, %k2)
}
"""
    result = pipeline.run(text, isolate=False)
    assert [e.emitted for e in result.report.edges] == [(("a", "s"),), (("a", "s"),)]
    assert result.penguin_source.count("add_dep_edge(") == result.report.dep_edges == 1


# What XLA's importer prints on a RET_CHECK failure (trimmed), in November and in May.
_LOGGED = """\
E1129 22:41:57.883276   10205 status_macros.cc:58] INTERNAL: RET_CHECK failure (hlo_instruction.cc:545) RecvDone
*** Begin stack trace ***
\t
\tPyObject_Vectorcall
\t_PyEval_EvalFrameDefault
*** End stack trace ***

INTERNAL: RET_CHECK failure (hlo_instruction.cc:545) RecvDone
"""


@pytest.mark.parametrize("month", ["11", "05"])
def test_xla_log_lines_and_stack_traces_are_not_the_message_in_any_month(month):
    # Regression: glog lines were recognised by "E0"/"F0"/… only, so from
    # October to December the timestamped log line was the message, and from
    # January to September a stack frame ("PyObject_Vectorcall") was.
    logged = _LOGGED.replace("E11", f"E{month}")
    assert first_said(logged) == abort_reason(logged) == "INTERNAL: RET_CHECK failure (hlo_instruction.cc:545) RecvDone"
    only_logged = logged.split("*** Begin")[0]  # an abort may print nothing else
    assert abort_reason(only_logged) == "INTERNAL: RET_CHECK failure (hlo_instruction.cc:545) RecvDone"


# --------------------------------------------------------------------------
# XLA CPU dumps of JAX programs on four devices
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def multi_device_dumps():
    # A fresh process: the device count is fixed when JAX starts.
    done = subprocess.run([sys.executable, str(HERE / "multi_device.py")], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_multi_device_dumps_are_partitioned_programs_with_collectives_in_loops(multi_device_dumps):
    programs = {d["program"] for d in multi_device_dumps}
    assert programs == {"ring_fori", "scan_collectives", "cond_in_fori", "pmap_while"}
    for dump in multi_device_dumps:
        header = dump["hlo"].split("\n", 1)[0]
        assert "num_partitions=4" in header or "replica_count=4" in header, header
        assert " while(" in dump["hlo"]
        assert any(f" {c}(" in dump["hlo"] for c in ("all-reduce", "collective-permute", "all-gather")), dump["name"]
    # Copy insertion's edges survive to the scheduled module where carries swap or rotate.
    scheduled = [d for d in multi_device_dumps if d["stage"] == "cpu_after_optimizations"]
    assert {d["program"] for d in scheduled} >= {"ring_fori", "pmap_while"}
    assert all("is_scheduled=true" in d["hlo"].split("\n", 1)[0] for d in scheduled)


@BUNDLES
@pytest.mark.parametrize("dialect", DIALECTS)
def test_multi_device_dumps_edges_in_equal_edges_out(multi_device_dumps, dialect, bundle):
    for dump in multi_device_dumps:
        module = Hlo(dump["hlo"])
        result = pipeline.run(dump["hlo"], dialect=dialect, bundle=bundle, isolate=False,
                              source_name=dump["name"])
        check_invariant(result, module)


# --------------------------------------------------------------------------
# Async wrappers: which starts are values after import
# --------------------------------------------------------------------------

# The op an `async-start, calls=` wraps → the MLIR type its start imports as
# (measured with jaxlib 0.10.2), and the op's HLO text in the wrapped computation.
WRAPPED = {
    "reduce-scatter": ("future", "f32[4]", "reduce-scatter(f32[8] %p), channel_id=1, replica_groups={{0,1}}, "
                                           "dimensions={0}, to_apply=%add"),
    "all-to-all": ("future", "f32[8]", "all-to-all(f32[8] %p), channel_id=1, replica_groups={{0,1}}, dimensions={0}"),
    "collective-broadcast": ("future", "f32[8]", "collective-broadcast(f32[8] %p), channel_id=1, "
                                                 "replica_groups={{0,1}}"),
    "all-reduce": ("async_bundle", "f32[8]", "all-reduce(f32[8] %p), channel_id=1, replica_groups={{0,1}}, "
                                             "to_apply=%add"),
    "collective-permute": ("async_bundle", "f32[8]", "collective-permute(f32[8] %p), channel_id=1, "
                                                     "source_target_pairs={{0,1},{1,0}}"),
    "fusion": ("async_bundle", "f32[8]", "fusion(f32[8] %p), kind=kLoop, calls=%fused"),
}


def async_wrapper_module(kind: str) -> str:
    """%start wraps `kind`; %y runs after %start, %z after %done."""
    _, shape, op = WRAPPED[kind]
    return f"""HloModule wrapped_{kind.replace("-", "_")}

%add (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}}

%fused (fp: f32[8]) -> f32[8] {{
  %fp = f32[8] parameter(0)
  ROOT %fn = f32[8] negate(%fp)
}}

%wrapped (p: f32[8]) -> {shape} {{
  %p = f32[8] parameter(0)
  ROOT %op = {shape} {op}
}}

ENTRY %main (x: f32[8]) -> ({shape}, f32[8]) {{
  %x = f32[8] parameter(0)
  %start = ((f32[8]), {shape}) async-start(f32[8] %x), calls=%wrapped
  %y = f32[8] exponential(%x), control-predecessors={{%start}}
  %done = {shape} async-done(%start)
  %z = f32[8] negate(%y), control-predecessors={{%done}}
  ROOT %t = ({shape}, f32[8]) tuple(%done, %z)
}}
"""


@BUNDLES
@pytest.mark.parametrize("kind", list(WRAPPED))
def test_an_async_start_that_imports_as_a_future_keeps_its_edge(kind, bundle):
    # A start that imports as a future is an operand like any other: its edge
    # into %y is kept as it is. One that imports as an async bundle has no
    # value: its done stands in (a stronger order; where the done comes after
    # %y that would be a cycle and the edge is dropped: gpu_send_recv_loop).
    text = async_wrapper_module(kind)
    parse_with_xla(text)
    imported_type, _, _ = WRAPPED[kind]
    result = pipeline.run(text, bundle=bundle, isolate=False)
    assert f"!stablehlo.{imported_type}<" in result.mlir or f"!mhlo.{imported_type}<" in result.mlir
    check_invariant(result, Hlo(text))
    edges = {(e.predecessor, e.successor): e for e in result.report.edges}
    assert edges[("done", "z")].fate == "preserved"
    start_y = edges[("start", "y")]
    if imported_type == "future":
        assert start_y.fate == "preserved"
        assert ("main", "start", "y") in result.module().dep_edges()
    else:
        assert start_y.fate == "rerouted" and start_y.emitted == (("done", "y"),)
        assert "its %done stands in" in start_y.link1
        assert ("main", "done", "y") in result.module().dep_edges()
