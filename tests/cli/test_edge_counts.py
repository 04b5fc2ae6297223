"""`check` and `regress` count edges with one declaration (`EdgeCounts`):
its fields are the report's totals, and each table's JSON keeps its order."""

from __future__ import annotations

import dataclasses

import pipeline
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.cli.check import ModuleRow
from pipeline.cli.regress import Row
from pipeline.verifier.report import COUNTS, EdgeCounts


def test_the_counts_are_the_reports_totals_by_name():
    assert tuple(f.name for f in dataclasses.fields(EdgeCounts)) == COUNTS
    report = pipeline.run(EXAMPLE_HLO, flatten=False, isolate=False).report
    row = ModuleRow("example.hlo", "example")
    row.count(report)
    assert row.counts() == report.totals() and row.lost == len(report.lost) and row.failed


def test_each_rows_json_keeps_its_columns_in_order():
    assert list(ModuleRow("p", "m").as_dict()) == ["path", "module", "file", "stage", *COUNTS, "error"]
    assert list(Row("p", "m", "stablehlo").as_dict()) == ["program", "module", "dialect", *COUNTS, "numerics",
                                                          "golden", "error", "jax"]


def test_sums_over_rows():
    rows = [ModuleRow("a", "a", edges=2, preserved=2), ModuleRow("b", "b", edges=1, lost=1)]
    assert EdgeCounts.summed(rows) == {"edges": 3, "preserved": 2, "rerouted": 0, "dropped": 0, "lost": 1,
                                       "spurious": 0}
