"""`passes.hlo.proto`: our schema of XLA's HloModuleProto, against XLA.

Oracles: XLA's parser (it writes the proto from the text), XLA's own
`HloModule` API (names, opcodes, operands of every instruction), XLA's
printing of a proto read back (`from_serialized_hlo_module_proto`) and the
importer. Over every module of tests/xla_style (written as XLA's unit tests
write HLO), the GPU/TPU-form dumps and XLA's own CPU dumps."""

from __future__ import annotations

import re
from pathlib import Path

import jaxlib._hlo as xla_hlo
import jaxlib._jax as xla_ext
import pytest

from passes.hlo import proto
from pipeline.chain.example import EXAMPLE_HLO
from paths import TESTS

MODULES = sorted([*TESTS.glob("xla_style/*.hlo"), *TESTS.glob("pipeline_dumps/*.hlo"),
                  *TESTS.glob("newer_xla/*.hlo")])


def xla_reads(path: Path):
    try:
        return xla_hlo.hlo_module_from_text(path.read_text())
    except Exception:  # a module of the corpus written to be refused
        return None


READ = [(p, m) for p in MODULES if (m := xla_reads(p)) is not None]


def xla_reads_back(module) -> str | None:
    """XLA's printing of its own proto read back (None where XLA's proto reader
    refuses its own output: a pipelined recv-done reading a get-tuple-element).
    The proto has no module config: a `replica_count=2` of the text is gone
    here as well, so this, not the text, is what our round trip must give."""
    try:
        return xla_hlo.HloModule.from_serialized_hlo_module_proto(module.as_serialized_hlo_module_proto()).to_string()
    except Exception:
        return None


ROUND_TRIP = [(p, m, printed) for p, m in READ if (printed := xla_reads_back(m)) is not None]


def test_the_corpus_is_broad():
    assert len(READ) > 80 and len(READ) - len(ROUND_TRIP) <= 3


@pytest.mark.parametrize("path,module,printed", ROUND_TRIP, ids=[p.name for p, _, _ in ROUND_TRIP])
def test_decoded_and_written_back_xla_reads_the_same_module(path, module, printed):
    """Unknown fields (layouts, metadata, literals, backend configs, …) survive."""
    again = xla_hlo.HloModule.from_serialized_hlo_module_proto(
        proto.HloModuleProto.FromString(module.as_serialized_hlo_module_proto()).SerializeToString())
    assert again.to_string() == printed


@pytest.mark.parametrize("path,module", READ, ids=[p.name for p, _ in READ])
def test_the_named_fields_read_what_xla_says(path, module):
    decoded = proto.HloModuleProto.FromString(module.as_serialized_hlo_module_proto())
    printed_module = module.to_string()
    by_id = {i.id: i for c in decoded.computations for i in c.instructions}
    computations = {c.name: c for c in decoded.computations}
    for computation in module.computations():
        mine = computations[computation.name]
        theirs = computation.instructions()
        # Local ids count in XLA's creation order (the text's); the list is in post order.
        by_local = sorted(mine.instructions, key=lambda i: proto.local_id(i.id))
        assert [i.name for i in by_local] == [i.name for i in theirs]
        for instr, xla_instr in zip(by_local, theirs):
            assert [by_id[o].name for o in instr.operand_ids] == [o.name for o in xla_instr.operands()]
            printed = xla_instr.to_string()
            # XLA prints some async starts in a sugared form (`custom-call-start`): its enum says async-start.
            enum = re.sub(r"(?<!^)([A-Z])", r"-\1", str(xla_instr.opcode).rsplit(".k", 1)[-1]).lower()
            assert instr.opcode == enum or instr.opcode in printed.split("=", 1)[1]
            written = re.search(r"control-predecessors=\{([^}]*)\}", printed)
            expected = [n.strip().lstrip("%") for n in written.group(1).split(",")] if written else []
            assert [by_id[p].name for p in instr.control_predecessor_ids] == expected
        seen = set()
        for instr in mine.instructions:  # post order: operands come first
            assert all(o in seen for o in instr.operand_ids if by_id[o] in mine.instructions)
            seen.add(instr.id)
        assert mine.root_id in seen  # the root is one of the computation's own instructions
        block = re.search(rf"^(?:ENTRY )?%{re.escape(computation.name)} .*?^}}", printed_module, re.M | re.S)
        if block:  # XLA leaves an async-wrapped computation out of its printing
            assert re.search(rf"^\s*ROOT %{re.escape(by_id[mine.root_id].name)} = ", block.group(0), re.M)


def test_a_while_calls_its_body_then_its_condition():
    decoded = proto.HloModuleProto.FromString(xla_hlo.hlo_module_from_text(EXAMPLE_HLO).as_serialized_hlo_module_proto())
    names = {c.id: c.name for c in decoded.computations}
    (loop,) = [i for c in decoded.computations for i in c.instructions if i.opcode == "while"]
    assert [names[c] for c in loop.called_computation_ids] == ["body", "cond"]  # EXAMPLE_HLO: condition=%cond, body=%body


def test_an_edit_as_link_1_makes_it_is_read_by_xla_and_imported():
    """A control-dep call added before its successor, the successor's operand
    rewired, its control predecessors cleared, the module stamped: XLA prints
    exactly that, and its importer carries the predecessor as an operand."""
    text = """HloModule m, frontend_attributes={origin="test"}
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%p)
  %b = f32[4]{0} exponential(%p)
  ROOT %c = f32[4]{0} add(%b, %p), control-predecessors={%a}
}
"""
    module = proto.HloModuleProto.FromString(xla_hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto())
    (entry,) = module.computations
    by_name = {i.name: i for i in entry.instructions}
    a, b, c = by_name["a"], by_name["b"], by_name["c"]
    call = proto.HloInstructionProto(
        name="c.control-dep", opcode="custom-call", id=max(i.id for i in entry.instructions) + 1,
        operand_ids=[a.id, b.id], custom_call_target="AwsNeuronControlDep", custom_call_has_side_effect=True,
        custom_call_api_version=proto.API_VERSION_ORIGINAL)
    call.shape.CopyFrom(b.shape)
    order = [i for i in entry.instructions if i.name != "c"]
    rebuilt = [proto.HloInstructionProto.FromString(i.SerializeToString()) for i in order] + [call]
    kept_c = proto.HloInstructionProto.FromString(c.SerializeToString())
    kept_c.operand_ids[0] = call.id
    del kept_c.control_predecessor_ids[:]
    del entry.instructions[:]
    entry.instructions.extend(rebuilt + [kept_c])
    module.frontend_attributes.map["has_control_deps"] = "1"
    assert dict(module.frontend_attributes.map) == {"origin": "test", "has_control_deps": "1"}
    data = module.SerializeToString()
    printed = xla_hlo.HloModule.from_serialized_hlo_module_proto(data).to_string()
    assert re.search(r'%c\.control-dep = f32\[4\]\{0\} custom-call\(%a, %b\), custom_call_target="AwsNeuronControlDep", '
                     r"custom_call_has_side_effect=true", printed), printed
    assert re.search(r"ROOT %c = f32\[4\]\{0\} add\(%c\.control-dep, %p\)\n", printed), printed
    assert 'has_control_deps="1"' in printed and 'origin="test"' in printed
    mlir = xla_ext.mlir.hlo_to_stablehlo(data)
    from pipeline.xla.mlir_context import make_context
    from jaxlib.mlir import ir

    imported = str(ir.Module.parse(mlir, context=make_context()))
    assert re.search(r'stablehlo\.custom_call @AwsNeuronControlDep\(%0, %1\) \{[^}]*has_side_effect = true\}', imported), imported
