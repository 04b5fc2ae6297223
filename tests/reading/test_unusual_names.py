"""An instruction named like a computation, as XLA's unit tests write HLO
(`n = … fusion(f), calls=n` beside a computation `n` whose root is `n`):
XLA renames the second `n` (`n.1`); the chain keeps the input's names, so
the report and the program say `f -> n`, every edge carried and no spurious
dep edge, in both dialects. Oracles: XLA's parser (it reads the module and
renames), the text's own control edges and the verifier."""

from __future__ import annotations

import re

import jaxlib._hlo as xla_hlo
import pytest

import pipeline

_HEAD = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*(?:\(.*\)\s*->.*)?\{\s*$")
_EDGES = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*control-predecessors=\{([^}]*)\}")


def hlo_edges(text: str) -> set[tuple[str, str, str]]:
    """(computation, predecessor, successor) as the text writes them, with or without `%`."""
    edges, current = set(), None
    for line in text.splitlines():
        if head := _HEAD.match(line):
            current = head.group(1)
        elif m := _EDGES.match(line):
            edges |= {(current, p.strip().lstrip("%"), m.group(1)) for p in m.group(2).split(",")}
    return edges

SIGILS = """HloModule named_like_computation

%n (p: f32[32,64]) -> f32[32,64] {
  %p = f32[32,64] parameter(0)
  ROOT %n = f32[32,64] negate(%p)
}

ENTRY %main (x: f32[32,64]) -> f32[32,64] {
  %x = f32[32,64] parameter(0)
  %f = f32[32,64] exponential(%x)
  ROOT %n = f32[32,64] fusion(%f), kind=kLoop, calls=%n, control-predecessors={%f}
}
"""

# The older long syntax of XLA's backend tests: no sigils, no signatures, and
# the fusion read by another instruction.
NO_SIGILS = """HloModule named_like_computation

n {
  p = f32[32,64] parameter(0)
  ROOT n = f32[32,64] negate(p)
}

ENTRY main {
  x = f32[32,64] parameter(0)
  f = f32[32,64] exponential(x)
  n = f32[32,64] fusion(f), kind=kLoop, calls=n, control-predecessors={f}
  ROOT r = f32[32,64] add(n, f), control-predecessors={n}
}
"""


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
@pytest.mark.parametrize("text", [SIGILS, NO_SIGILS], ids=["sigils", "no_sigils"])
def test_an_instruction_named_like_a_computation_keeps_its_name_and_its_edges(text, dialect):
    printed = xla_hlo.hlo_module_from_text(text).to_string()
    assert "n.1 = " in printed  # XLA renames it: the name as written is the chain's to keep
    result = pipeline.run(text, dialect=dialect, isolate=False)
    edges = hlo_edges(text)
    assert {(e.computation, e.predecessor, e.successor) for e in result.report.edges} == edges
    assert result.report.ok and result.report.spurious == []
    assert result.module().dep_edges() == edges
