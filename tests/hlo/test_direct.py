"""Link #1's common case on XLA's protos (`passes.hlo.direct`) against the
general rewrite it stands in for: on every corpus, the JAX dumps, synthetic
modules and seeded mutants, the two give the same serialized module, byte
for byte, and the same account of every edge.

The general rewrite is the reference here because it is the one the rest of
the suite holds to XLA and the binary (docs/design.md#link-1-what-each-edge-becomes);
this file pins that the fast lane
changes nothing (`PreserveControlDeps(direct=False)` turns it off).
"""

from __future__ import annotations

import random

import pytest

from bench.synthetic import many_predecessors, synthetic_hlo
from differential_hlo import make_mutants
from jax_programs import corpus
from passes.errors import ChainError
from passes.hlo import direct
from pipeline.reading.parsed import Parsed
from passes.hlo.preserve_control_deps import PreserveControlDeps
from passes.hlo.view import view_of, write_back
from pipeline.xla.isolated import readable_text
from pipeline.xla import native
from paths import TESTS

FILES = sorted(p for d in ("xla_style", "pipeline_dumps", "newer_xla") for p in (TESTS / d).glob("*.hlo"))


def _link1(data: bytes, text: str, use_direct: bool, bundle: bool):
    # One XLA parse for both runs: XLA numbers every module it makes, and that
    # number is in the proto (two parses of one text differ in it).
    parsed = Parsed.from_serialized(data, text)
    module = view_of(parsed)
    result = PreserveControlDeps(bundle=bundle, direct=use_direct).run(module)
    write_back(module)
    return parsed.serialized(), result.edges, result.changed


class _Count:
    """How many computations the direct lane took, so no test passes by never taking it."""

    def __init__(self, monkeypatch):
        self.taken = 0
        real = direct.rewrite

        def counting(*args):
            took = real(*args)
            self.taken += took
            return took

        monkeypatch.setattr(direct, "rewrite", counting)


def _assert_same(text: str, bundle: bool) -> None:
    data = native.read(text).serialized()
    general = _link1(data, text, use_direct=False, bundle=bundle)
    fast = _link1(data, text, use_direct=True, bundle=bundle)
    assert fast[2] == general[2]
    assert fast[1] == general[1], "the account of the edges differs"
    assert fast[0] == general[0], "the serialized module differs"


def _readable(text: str) -> str | None:
    try:
        text = readable_text(text)
        native.read(text)
    except ChainError:
        return None
    return text


@pytest.mark.parametrize("bundle", [False, True], ids=["plain", "bundle"])
def test_the_corpora_come_out_the_same(bundle, monkeypatch):
    count = _Count(monkeypatch)
    for path in FILES:
        text = _readable(path.read_text())
        if text is not None and "control-predecessors" in text:
            _assert_same(text, bundle)
    assert count.taken >= 100  # most corpus computations with edges are the common case


def test_the_jax_dumps_come_out_the_same(monkeypatch):
    count = _Count(monkeypatch)
    for _, text in corpus():
        if "control-predecessors" in text:
            _assert_same(text, bundle=True)
    assert count.taken >= 3


@pytest.mark.parametrize("seed", range(3))
def test_synthetic_modules_come_out_the_same(seed, monkeypatch):
    count = _Count(monkeypatch)
    _assert_same(synthetic_hlo(4000, seed=seed), bundle=True)
    _assert_same(synthetic_hlo(2000, seed=seed, edge_share=0.5), bundle=False)
    _assert_same(many_predecessors(600), bundle=True)
    assert count.taken == 3


def test_mutants_come_out_the_same(monkeypatch):
    """Seeded edits of the corpora that XLA still reads: renamed, reordered,
    shapes dropped, edges deleted or duplicated."""
    count = _Count(monkeypatch)
    checked = 0
    for _, _, text in make_mutants(300, seed=7):
        text = _readable(text)
        if text is not None and "control-predecessors" in text:
            for bundle in (False, True):
                _assert_same(text, bundle)
            checked += 1
    assert checked >= 100 and count.taken >= 100


def test_a_computation_with_one_uncommon_successor_goes_to_the_general_rewrite(monkeypatch):
    """One `*-done` successor (its operand is pinned: the edge goes to its
    users) sends its whole computation to the general rewrite, where the
    edits of one successor can change what the next one finds."""
    count = _Count(monkeypatch)
    text = """\
HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, p)
  b = f32[4] multiply(a, a), control-predecessors={a}
  s = (f32[4], f32[4]) copy-start(b)
  d = f32[4] copy-done(s), control-predecessors={b}
  ROOT n = f32[4] negate(d)
}
"""
    _assert_same(text, bundle=True)
    assert count.taken == 0
    _assert_same(text.replace(", control-predecessors={b}", ""), bundle=True)
    assert count.taken == 1


def test_random_orders_of_edges_come_out_the_same():
    """Predecessors listed in any order, repeated across successors, some
    tuple-shaped and some parameters (the implied ones)."""
    rng = random.Random(11)
    for _ in range(20):
        lines = ["HloModule m", "", "ENTRY e {", "  p = f32[2] parameter(0)", "  q = f32[2] parameter(1)"]
        values = ["p", "q"]
        for i in range(30):
            a, b = rng.choice(values), rng.choice(values)
            if rng.random() < 0.2:
                lines.append(f"  t{i} = (f32[2], f32[2]) tuple({a}, {b})")
                values_t = f"t{i}"
                lines.append(f"  g{i} = f32[2] get-tuple-element({values_t}), index={rng.randrange(2)}")
                values.append(f"g{i}")
                continue
            line = f"  v{i} = f32[2] add({a}, {b})"
            preds = rng.sample([v for v in values] + [ln.split()[0] for ln in lines if ln.startswith("  t")],
                               k=min(len(values), rng.randint(0, 4)))
            if preds:
                line += ", control-predecessors={" + ", ".join(dict.fromkeys(preds)) + "}"
            lines.append(line)
            values.append(f"v{i}")
        lines += [f"  ROOT r = f32[2] negate({values[-1]})", "}"]
        _assert_same("\n".join(lines) + "\n", bundle=rng.random() < 0.5)
