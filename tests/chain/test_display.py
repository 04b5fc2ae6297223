"""Jupyter displays (issue 17): `Report` and `ChainResult` as HTML tables of
edges and fates, the Penguin `Module` as its dependency graph in SVG.

The oracles are the HLO's own control edges (as XLA's parser reads them), the
example's documented fates (`%loop -> %scale` lost at link #3 with
flatten=False) and the report's edges; the markup is parsed, not grepped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import pytest

import pipeline
from passes.control_dep import Fate
from pipeline.reading.parsed import Parsed
from pipeline.chain.result import ChainResult
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.verifier.report import EdgeReport, Report, SpuriousEdge
from printer.penguin import module as penguin_module
from children import NO_JAX
from pipeline.xla import native

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def no_flatten():
    return pipeline.run(EXAMPLE_HLO, flatten=False, isolate=False)


@pytest.fixture(scope="module")
def full():
    return pipeline.run(EXAMPLE_HLO, isolate=False)


def parse(markup: str) -> ET.Element:
    """The markup as XML: raises unless every tag is closed and every & and < escaped."""
    return ET.fromstring(f"<div>{markup}</div>")


def text(element: ET.Element) -> str:
    return "".join(element.itertext())


def rows(table: ET.Element, tbody: int = 0) -> list[ET.Element]:
    return [tr for tr in table.findall("./tbody")[tbody].findall("tr") if tr.findall("td")]


def cells(tr: ET.Element) -> tuple[str, ...]:
    return tuple(text(td) for td in tr.findall("td"))


def is_marked(tr: ET.Element) -> bool:
    """Shown as lost: its class, a coloured row and a bold fate."""
    return (tr.get("class") == "fate-lost" and "background" in tr.get("style", "")
            and tr.findall("td")[3].find("strong") is not None)


# -- Report._repr_html_ -----------------------------------------------------------


def test_report_table_has_one_row_per_hlo_edge_with_its_fate(no_flatten):
    report = no_flatten.report
    table = parse(report._repr_html_()).find("table")
    shown = [cells(tr) for tr in rows(table)]
    assert [c[:4] for c in shown] == [(e.where, f"%{e.predecessor}", f"%{e.successor}", str(e.fate))
                                      for e in report.edges]
    # Every control edge of the HLO itself, once; each named as the report's line names it.
    assert sorted((e.computation, c[1][1:], c[2][1:]) for e, c in zip(report.edges, shown)) == sorted(
        native.read(EXAMPLE_HLO).control_edges())
    assert all(str(e).startswith(f"{c[0]}: {c[1]} -> {c[2]}: {c[3]}") for e, c in zip(report.edges, shown))
    assert {c[0] for c in shown} == {"%loop (while): body", "func @main"}  # %body is the while's, %main the entry
    assert text(table.find("caption")) == report.summary()
    assert [text(th) for th in table.findall("./thead/tr/th")][:4] == ["block", "predecessor", "successor", "fate"]


def test_report_table_marks_exactly_the_lost_edges_with_where_and_why(no_flatten):
    report = no_flatten.report
    trs = rows(parse(report._repr_html_()).find("table"))
    marked = [cells(tr) for tr in trs if is_marked(tr)]
    assert [m[:3] for m in marked] == [("func @main", "%loop", "%scale")]  # documented: lost at link #3
    assert [m[:3] for m in marked] == [(e.where, f"%{e.predecessor}", f"%{e.successor}") for e in report.lost]
    (lost,) = report.lost
    assert marked[0][4] == lost.lost_at and "link #3" in marked[0][4]
    assert marked[0][5].startswith(lost.reason)
    unmarked = [tr for tr in trs if not is_marked(tr)]
    assert all(tr.get("style") is None and tr.findall("td")[3].find("strong") is None for tr in unmarked)


def test_report_table_lists_the_spurious_dep_edges_after_the_hlo_edges(no_flatten):
    report = no_flatten.report
    table = parse(report._repr_html_()).find("table")
    spurious = [cells(tr) for tr in rows(table, tbody=1)]
    assert len(spurious) == len(report.spurious) == 2
    assert [s[:4] for s in spurious] == [("func @main", f"%{s.predecessor}", f"%{s.successor}", "spurious")
                                         for s in report.spurious]
    assert {s[1] for s in spurious} == {"%loop:tuple"}
    assert not any(is_marked(tr) for tr in rows(table, tbody=1))


def test_a_clean_report_marks_nothing(full):
    table = parse(full.report._repr_html_()).find("table")
    assert full.report.ok and len(rows(table)) == len(full.report.edges) == 4
    assert not any(is_marked(tr) for tr in rows(table))
    assert len(table.findall("./tbody")) == 1  # no spurious section


def test_report_html_escapes_every_name_and_reason():
    nasty = {"computation": "comp<&>\"'", "predecessor": "a<b", "successor": "c&d"}
    report = Report([EdgeReport(**nasty, fate=Fate.LOST, reason="<script>alert(1)</script>",
                                lost_at="link #2 <x>", link1="kept & <emitted>"),
                     EdgeReport("main", "p", "s", Fate.PRESERVED)],
                    dep_edges=1, spurious=[SpuriousEdge(None, "t<", "u&", "why <not>")])
    page = parse(report._repr_html_())
    assert page.find(".//script") is None
    trs = rows(page.find("table"))
    assert cells(trs[0])[:5] == ("%comp<&>\"'", "%a<b", "%c&d", "lost", "link #2 <x>")
    assert cells(trs[0])[5] == "<script>alert(1)</script> [link #1 said: kept & <emitted>]"
    assert [is_marked(tr) for tr in trs] == [True, False]
    (spurious,) = rows(page.find("table"), tbody=1)
    assert cells(spurious)[:3] == ("", "%t<", "%u&") and cells(spurious)[5].endswith("why <not>")


def test_an_empty_report_is_a_table_that_says_so():
    table = parse(Report()._repr_html_()).find("table")
    assert text(table.find("caption")).startswith("0 HLO control edge(s)")
    assert "no HLO control edge" in text(table.find("tbody"))


# -- ChainResult._repr_html_ ------------------------------------------------------


def test_chain_result_shows_source_dialect_report_and_the_program_folded(no_flatten):
    page = parse(no_flatten._repr_html_())
    head = text(page.find(".//p"))
    assert no_flatten.source == "example" and "example" in head and "stablehlo" in head
    assert "not ok" in head
    table = page.find(".//table")
    assert table.get("class") == "hlo2penguin-report"
    assert [cells(tr)[:3] for tr in rows(table) if is_marked(tr)] == [("func @main", "%loop", "%scale")]
    details = page.find(".//details")
    assert details.get("open") is None  # collapsed
    assert text(details.find("pre")) == no_flatten.penguin_source
    assert ".add_dep_edge(Dependency.DependencyEdge(" in text(details.find("pre"))


def test_chain_result_without_check_says_there_is_no_report():
    result = pipeline.run(EXAMPLE_HLO, check=False, dialect="mhlo", isolate=False)
    page = parse(result._repr_html_())
    assert result.report is None and page.find(".//table") is None
    assert "check=False" in text(page) and "mhlo" in text(page.find(".//p"))
    assert text(page.find(".//details/pre")) == result.penguin_source


def test_chain_result_escapes_its_source_and_cuts_a_long_program():
    program = "".join(f"x{i} = '<&>'\n" for i in range(2_500))
    result = ChainResult("<hlo & text>", "stablehlo", "", None, None, program, Report())
    page = parse(result._repr_html_())
    assert "<hlo & text>" in text(page.find(".//p"))
    shown = text(page.find(".//details/pre")).splitlines()
    assert shown[:2_000] == program.splitlines()[:2_000]
    assert shown[2_000:] == ["… 500 more line(s): see result.penguin_source"]
    assert "2500 lines" in text(page.find(".//details/summary"))


# -- Module._repr_svg_ ------------------------------------------------------------


def svg_words(svg: str) -> set[str]:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return {text(t).strip() for t in root.iter(f"{SVG}text")}


@pytest.mark.parametrize("which", ["full", "no_flatten"])
def test_module_svg_names_both_ends_of_every_dep_edge(which, request):
    module = request.getfixturevalue(which).module()
    svg = module._repr_svg_()
    assert svg.startswith("<svg")
    words = svg_words(svg)
    ends = {name for _, p, s in module.dep_edges() for name in (p, s)}
    assert ends and not ends - words, sorted(ends - words)
    # Every function, nested blocks included: the while body's own edge.
    assert {"copy.buf", "copy.twice", "%loop (while): body"} <= words
    if which == "no_flatten":
        assert "loop:tuple" in words


def test_a_wide_module_is_scaled_to_the_notebook_keeping_its_proportions():
    from bench.synthetic import synthetic_hlo

    module = pipeline.run(synthetic_hlo(60), isolate=False).module()
    svg = module._repr_svg_()
    root = ET.fromstring(svg)
    width, height = (float(root.get(k).removesuffix("pt")) for k in ("width", "height"))
    _, _, view_w, view_h = (float(v) for v in root.get("viewBox").split())
    assert view_w > 720 and width == 720  # drawn wider than a notebook, shown at its width
    assert height / width == pytest.approx(view_h / view_w, rel=1e-4)


def test_a_huge_module_is_not_drawn(full, monkeypatch):
    from IPython.core.formatters import DisplayFormatter

    module = full.module()
    count = sum(1 for _ in module.instructions())
    monkeypatch.setattr(penguin_module, "_SVG_INSTRUCTIONS", count)
    assert module._repr_svg_().startswith("<svg")
    monkeypatch.setattr(penguin_module, "_SVG_INSTRUCTIONS", count - 1)
    assert module._repr_svg_() is None
    assert "image/svg+xml" not in DisplayFormatter().format(module)[0]


def test_ipython_picks_the_displays(no_flatten):
    from IPython.core.formatters import DisplayFormatter

    formatter = DisplayFormatter()
    shown = formatter.format(no_flatten)[0]
    assert shown["text/html"] == no_flatten._repr_html_()
    assert formatter.format(no_flatten.report)[0]["text/html"] == no_flatten.report._repr_html_()
    shown = formatter.format(no_flatten.module())[0]
    assert re.match(r"<svg\b", shown["image/svg+xml"]) and "image/png" not in shown


def test_the_svg_needs_no_jax(full, tmp_path):
    """The runtime draws itself where jax cannot be imported (issue 14)."""
    program = tmp_path / "program.py"
    program.write_text(full.penguin_source)
    script = NO_JAX + textwrap.dedent(f"""
        import runpy, sys
        module = runpy.run_path({str(program)!r})["module"]
        print(module._repr_svg_()[:4])
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib")))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == ["<svg", "[]"]
