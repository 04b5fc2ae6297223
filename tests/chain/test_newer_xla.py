"""XLA 0.12's own dumps (tests/newer_xla/, written by capture.py with jax
0.12.0.1) through the whole chain on whichever jax runs the suite: on 0.12
its own output, on 0.10.2 a newer XLA's (with `%t#i` operands its parser does
not read, made explicit get-tuple-elements first: `pipeline.reading.tuple_operands`).
The invariant holds on both."""

from __future__ import annotations

import re

import pytest

import pipeline
from passes.dialects import DIALECTS
from pipeline.xla.versions import xla_reads_tuple_element_operands
from paths import NEWER_XLA

HERE = NEWER_XLA
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


@pytest.mark.parametrize("name", DUMPS)
def test_the_rewrite_for_older_parsers_reads_as_the_newer_xla_reads_the_dump(name):
    # On jaxlib 0.10.2 `pipeline.xla.isolated.parse` makes each `%t#i` an explicit
    # get-tuple-element. Where this XLA reads `%t#i` itself, it reads the
    # rewritten text as the same module: the same instructions, named alike.
    if not xla_reads_tuple_element_operands():
        pytest.skip("this jaxlib's parser does not read `%t#i`: nothing of its own to compare with")
    from pipeline.reading.tuple_operands import explicit_tuple_elements
    from pipeline.xla.isolated import canonical_text

    text = (HERE / name).read_text()
    rewritten = explicit_tuple_elements(text)
    outside_strings = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', rewritten)
    assert rewritten != text and not re.search(r"%[\w.-]+#\d", outside_strings)  # what 0.10.2 reads
    assert canonical_text(rewritten) == canonical_text(text)
