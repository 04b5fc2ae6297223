"""Names from keys: after link #2 every op stays at its key location and the
chain reads HLO names through the importer's one table (`HloNames`);
locations are restored only where MLIR text is printed. Oracle: the program
printed through the table is the program printed from the same module with
its locations restored (what `import_hlo` gives), on every corpus module in
both dialects, and the restored module is what `import_hlo` makes."""

from __future__ import annotations

from pathlib import Path

import pytest

import pipeline
from passes.errors import ChainError
from passes.mlir import FlattenControlDepTupleOperands
from passes.dialects import dialect as dialect_row
from pipeline.xla import importer
from pipeline.xla.mlir_context import make_context
from pipeline.xla.isolated import readable_text
from pipeline.reading.parsed import Parsed
from printer.python_printer import print_penguin
from pipeline.xla import native
from paths import TESTS

FILES = sorted([*TESTS.glob("xla_style/*.hlo"), *TESTS.glob("pipeline_dumps/*.hlo"), *TESTS.glob("newer_xla/*.hlo")])


def _parsed(path: Path):
    try:
        return native.read(readable_text(path.read_text()), path.name)
    except ChainError:
        return None


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_the_table_names_every_op_as_the_restored_locations_do(dialect):
    compared = 0
    for path in FILES:
        parsed = _parsed(path)
        if parsed is None:
            continue
        context = make_context()
        try:
            keyed, names = importer.import_keyed(parsed, dialect, context=context, isolate=False)
        except ChainError:
            continue  # refused in this dialect (pinned by the tests of link #2)
        FlattenControlDepTupleOperands(dialect_row(dialect), "all").run(keyed)
        restored = keyed.operation.clone()
        names.restore(restored)
        with context:
            through_table = print_penguin(keyed, path.name, dialect, names=names)
            from_locations = print_penguin(restored, path.name, dialect)
        assert through_table == from_locations, path.name
        assert "h2p." not in restored.get_asm(enable_debug_info=True)  # no key left behind
        compared += 1
    assert compared >= 100


def test_the_restored_module_is_what_import_hlo_makes():
    path = TESTS / "pipeline_dumps" / sorted(p.name for p in (TESTS / "pipeline_dumps").glob("*.hlo"))[0]
    parsed = _parsed(path)
    keyed, names = importer.import_keyed(parsed, "stablehlo", context=make_context(), isolate=False)
    names.restore(keyed)
    whole = importer.import_hlo(_parsed(path), "stablehlo", context=make_context(), isolate=False)
    assert keyed.operation.get_asm(enable_debug_info=True) == whole.operation.get_asm(enable_debug_info=True)


def test_the_chain_restores_locations_only_when_mlir_text_is_asked_for(monkeypatch):
    calls = []
    real = importer._restore_locations
    monkeypatch.setattr(importer, "_restore_locations", lambda *a: (calls.append(a), real(*a))[1])
    text = ("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  a = f32[4] negate(p)\n"
            "  ROOT b = f32[4] abs(p), control-predecessors={a}\n}\n")
    result = pipeline.run(text, isolate=False)  # with the check
    assert calls == [] and result.report.ok
    assert 'loc(fused<"' in pipeline.run(text, isolate=False, debug_info=True).mlir
    assert len(calls) == 1
