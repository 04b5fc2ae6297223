"""One name for the block where a control edge lives, everywhere it is
shown: the report's lines (`hlo2penguin --emit report`, run as a user runs
it), the report's HTML table (`Report._repr_html_`) and the panels of
`--plot`'s SVG name it alike (`printer.penguin.titles.block_title`).

The oracle is the HLO text alone, read here with a few regular expressions:
each computation's caller (the while that names it `condition=` or `body=`,
the conditional that names it `true_computation=`, `false_computation=` or
in `branch_computations=`), the ENTRY computation, and the computation each
`control-predecessors=` edge is written in. From those, the documented
format (docs/cli.md): `%CALLER (while): body [%COMPUTATION]`, `(if):
true|false`, `(case): regionN`, `func @main [%ENTRY]`, XLA's name in
brackets where it is not the block's own, `+N more caller(s)` where several
ops call the computation."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

import pipeline
from paths import NEWER_XLA, PIPELINE_DUMPS
from pipeline.chain.example import EXAMPLE_HLO
from printer.penguin.titles import block_title

SCRIPT = shutil.which("hlo2penguin", path=os.path.dirname(sys.executable))
STAGE = "copy-insertion.after_adding_copies_to_resolve_interference"
MODULES = [
    NEWER_XLA / f"while_many_buffers.{STAGE}.hlo",        # JAX: a while whose body copy insertion ordered
    NEWER_XLA / f"nested_scan.{STAGE}.hlo",               # JAX: a scan in a scan, edges in both bodies
    PIPELINE_DUMPS / "gpu_nested_while_collectives.hlo",  # a while in a while, async ops in the outer body
    PIPELINE_DUMPS / "gpu_all_gather_scan_offload.hlo",   # the importer nests an async op's region, and makes
                                                          # functions, of the body's own computation
    PIPELINE_DUMPS / "gpu_conditional_branches.hlo",      # an index conditional (case) and a pred one (if)
]
SVG = "{http://www.w3.org/2000/svg}"

# Two whiles call one body: the report names it by the first and says how many more call it.
TWO_LOOPS = "HloModule two_loops\n\n" + EXAMPLE_HLO[EXAMPLE_HLO.index("%body "):EXAMPLE_HLO.index("ENTRY")] + """ENTRY %main.9 (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(%zero, %x)
  %first = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
  %second = (s32[], f32[4]{0}) while(%first), condition=%cond, body=%body
  %a = f32[4]{0} get-tuple-element(%first), index=1
  %b = f32[4]{0} get-tuple-element(%second), index=1
  ROOT %pair = (f32[4]{0}, f32[4]{0}) tuple(%a, %b)
}
"""


# -- the oracle: the HLO text ------------------------------------------------------

_HEAD = re.compile(r"^(ENTRY )?%(\S+) \(")
_DEFINED = re.compile(r"^\s*(?:ROOT )?%(\S+) = ")


def hlo_facts(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """(computation → the name the format gives it, [(computation, predecessor,
    successor)] of every control edge), from the HLO text."""
    callers: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # computation → (op, opcode, block)
    edges, entry, current = [], None, None
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head and line.rstrip().endswith("{"):
            current = head.group(2)
            entry = current if head.group(1) else entry
            continue
        defined = _DEFINED.match(line)
        if not defined:
            continue
        op = defined.group(1)
        if re.search(r" while\(", line):
            callers[re.search(r"condition=%([^,\s]+)", line).group(1)].append((op, "while", "cond"))
            callers[re.search(r"body=%([^,\s]+)", line).group(1)].append((op, "while", "body"))
        if re.search(r" conditional\(", line):
            if "true_computation=" in line:
                callers[re.search(r"true_computation=%([^,\s]+)", line).group(1)].append((op, "if", "true"))
                callers[re.search(r"false_computation=%([^,\s]+)", line).group(1)].append((op, "if", "false"))
            else:
                branches = re.search(r"branch_computations=\{([^}]*)\}", line).group(1).split(",")
                for i, branch in enumerate(branches):
                    callers[branch.strip().lstrip("%")].append((op, "case", f"region{i}"))
        found = re.search(r"control-predecessors=\{([^}]*)\}", line)
        if found:
            edges += [(current, p.strip().lstrip("%"), op) for p in found.group(1).split(",")]
    names = {entry: "func @main" + (f" [%{entry}]" if entry != "main" else "")}
    for computation, calls in callers.items():
        op, opcode, block = calls[0]
        name = f"%{op} ({opcode}): {block}" + (f" [%{computation}]" if computation != block else "")
        more = len({c[0] for c in calls}) - 1
        names[computation] = name + (f" +{more} more caller{'s' if more > 1 else ''}" if more else "")
    return names, edges


def hlo2penguin(*args, cwd) -> str:
    done = subprocess.run([SCRIPT, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def panel_titles(svg: Path) -> list[str]:
    return ["".join(t.itertext()) for t in ElementTree.parse(svg).iter(f"{SVG}text") if t.get("class") == "title"]


@dataclass
class Shown:
    """What the HLO says and what each place shows, for one module."""

    names: dict[str, str]                  # computation → its name, from the HLO text
    edges: list[tuple[str, str, str]]      # (computation, predecessor, successor), from the HLO text
    lines: list[str]                       # `hlo2penguin --emit report`
    data: dict                             # `hlo2penguin --emit report --json`
    every: list[str]                       # the panel titles of `--plot --plot-nested all`
    default: list[str]                     # the panel titles of `--plot`
    rows: list[tuple[str, ...]]            # the cells of `Report._repr_html_`'s rows


@pytest.fixture(scope="module", params=MODULES, ids=lambda p: p.name.split(".")[0])
def shown(request, tmp_path_factory) -> Shown:
    path = request.param
    names, edges = hlo_facts(path.read_text())
    assert edges, path
    tmp = tmp_path_factory.mktemp("titles")
    lines = hlo2penguin(path, "--emit", "report", "-q", cwd=tmp).splitlines()
    data = json.loads(hlo2penguin(path, "--emit", "report", "--json", "-q", cwd=tmp))
    hlo2penguin(path, "-q", "-o", tmp / "out.py", "--plot", tmp / "all.svg", "--plot-nested", "all", cwd=tmp)
    hlo2penguin(path, "-q", "-o", tmp / "out.py", "--plot", tmp / "default.svg", cwd=tmp)
    page = ElementTree.fromstring(f"<div>{pipeline.run(str(path), isolate=False).report._repr_html_()}</div>")
    rows = [tuple("".join(td.itertext()) for td in tr.findall("td")) for tr in page.iter("tr")
            if tr.findall("td")]
    return Shown(names, edges, lines, data, panel_titles(tmp / "all.svg"), panel_titles(tmp / "default.svg"), rows)


def test_each_report_line_names_its_edge_by_the_op_that_calls_its_computation(shown):
    for computation, pred, succ in shown.edges:
        start = f"{shown.names[computation]}: %{pred} -> %{succ}: "
        assert sum(line.startswith(start) for line in shown.lines) == 1, (start, shown.lines)
    assert len([line for line in shown.lines if " -> %" in line]) == len(shown.edges)


def test_the_json_gives_xlas_computation_and_the_blocks_name(shown):
    assert sorted((e["computation"], e["block"], e["predecessor"], e["successor"])
                  for e in shown.data["edges"]) == sorted((c, shown.names[c], p, s) for c, p, s in shown.edges)


def test_the_html_table_names_each_edge_as_the_report_does(shown):
    want = sorted((shown.names[c], f"%{p}", f"%{s}") for c, p, s in shown.edges)
    assert sorted(row[:3] for row in shown.rows) == want


def test_the_picture_titles_each_block_as_the_report_names_it(shown):
    assert not set(shown.names.values()) - set(shown.every), sorted(set(shown.names.values()) - set(shown.every))
    # The default picture: the blocks with a dep edge, among them each block where the report puts a
    # preserved edge (a dep edge of the program carries it there).
    held = {line.split(": %")[0] for line in shown.lines if line.endswith(": preserved")}
    assert held and held <= set(shown.default)


def test_a_body_two_whiles_call_is_named_by_the_first_and_counted(tmp_path):
    (tmp_path / "two.hlo").write_text(TWO_LOOPS)
    names, edges = hlo_facts(TWO_LOOPS)
    assert names["body"] == "%first (while): body +1 more caller"
    lines = hlo2penguin("two.hlo", "--emit", "report", "-q", cwd=tmp_path).splitlines()
    assert lines[0] == f"{names['body']}: %copy.buf -> %copy.twice: preserved"
    hlo2penguin("two.hlo", "-q", "-o", "out.py", "--plot", "two.svg", "--plot-nested", "all", cwd=tmp_path)
    # Each while has its own copy of the body in the program, a panel each, named as the report names
    # the computation where an edge lives in it: by its op, and how many more ops call it.
    assert panel_titles(tmp_path / "two.svg") == ["func @main [%main.9]", "%first (while): cond +1 more caller",
                                                  "%first (while): body +1 more caller",
                                                  "%second (while): cond +1 more caller",
                                                  "%second (while): body +1 more caller"]


@pytest.mark.parametrize("args, title", [
    (("body", "region_2.10"), {"caller": ("while.16", "stablehlo.while")}),
    (("main", "main.5"), {}),
    (("main", "main"), {}),
    (("region0", "fused_computation"), {"caller": ("fusion.3", "mhlo.fusion"), "more_callers": 2}),
])
def test_the_format_is_the_documented_one(args, title):
    said = block_title(*args, **title)
    assert said == {("body", "region_2.10"): "%while.16 (while): body [%region_2.10]",
                    ("main", "main.5"): "func @main [%main.5]",
                    ("main", "main"): "func @main",
                    ("region0", "fused_computation"): "%fusion.3 (fusion): region0 [%fused_computation] "
                                                      "+2 more callers"}[args]
