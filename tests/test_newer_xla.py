"""XLA 0.12's own dumps (tests/newer_xla/, written by capture.py with jax
0.12.0.1) through the whole chain on whichever jax runs the suite: on 0.12
its own output, on 0.10.2 a newer XLA's (with `%t#i` operands its parser does
not read, made explicit by the reader). The invariant holds on both."""

from __future__ import annotations

import pathlib
import re

import pytest

import pipeline
from passes.dialects import DIALECTS
from pipeline.versions import xla_reads_tuple_element_operands

HERE = pathlib.Path(__file__).parent / "newer_xla"
DUMPS = sorted(p.name for p in HERE.glob("*.hlo"))
RELEASE = (HERE / "RELEASE").read_text().strip()


def control_edges(text: str) -> int:
    """The text's own count: one edge per name in each control-predecessors list."""
    return sum(len(re.findall(r"%[\w.-]+", group)) for group in re.findall(r"control-predecessors=\{([^}]*)\}", text))


def test_the_dumps_are_the_newer_xla_s_with_its_own_syntax():
    assert RELEASE.startswith("0.12") and len(DUMPS) >= 30
    texts = [(HERE / name).read_text() for name in DUMPS]
    assert all(re.search(r"%[\w.-]+#\d", t) for t in texts)  # 0.12 prints `%t#i` operands
    assert sum(control_edges(t) for t in texts) > 60


@pytest.mark.parametrize("dialect", list(DIALECTS))
@pytest.mark.parametrize("name", DUMPS)
def test_a_newer_dump_keeps_every_control_edge(name, dialect):
    text = (HERE / name).read_text()
    result = pipeline.run(str(HERE / name), dialect=dialect, isolate=False)
    report = result.report
    assert report.ok, "\n".join(report.lines())
    assert len(report.edges) == control_edges(text)
    assert report.count("preserved") + report.count("rerouted") > 0
    assert "#" not in "".join(line for line in result.hlo.splitlines() if "metadata" not in line)


def test_the_reader_names_the_tuple_elements_as_the_newer_xla_does():
    # Where this XLA reads `%t#i` itself, its get-tuple-elements and ours have the same names.
    if not xla_reads_tuple_element_operands():
        pytest.skip("this jaxlib's parser does not read `%t#i`: nothing of its own to compare with")
    from passes.hlo import read_module
    from pipeline.xla import parse_with_xla

    text = (HERE / DUMPS[0]).read_text()
    xla_names = {line.split("=")[0].strip().lstrip("%") for line in parse_with_xla(text).to_string().splitlines()
                 if "get-tuple-element(" in line and "=" in line}
    ours = {i.name for _, i in read_module(text).instructions() if i.opcode == "get-tuple-element"}
    made = {n for n in xla_names if re.fullmatch(r".+_\d+", n)}
    assert made and made <= ours
