"""Synthetic HLO modules for the benchmarks: long chains of elementwise ops
with while loops (tuple-shaped values) mixed in, and about 10% of
instructions carrying 1-8 control predecessors, some of them tuple-shaped;
and one successor with thousands of control predecessors (also the scale
test's module, tests/chain/test_scale.py)."""

from __future__ import annotations

import random

_BODY = """\
%body (s: (s32[], f32[8])) -> (s32[], f32[8]) {
  %s = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %v = f32[8]{0} get-tuple-element(%s), index=1
  %v1 = f32[8]{0} multiply(%v, %v)
  ROOT %t = (s32[], f32[8]{0}) tuple(%i1, %v1)
}

%cond (c: (s32[], f32[8])) -> pred[] {
  %c = (s32[], f32[8]{0}) parameter(0)
  %ci = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%ci, %n), direction=LT
}
"""

_OPS = ("add", "multiply", "subtract", "maximum", "minimum")


def synthetic_hlo(instructions: int, seed: int = 0, edge_share: float = 0.10, while_every: int = 50) -> str:
    """An HLO module with about `instructions` instructions in its entry."""
    rng = random.Random(seed)
    lines = ["HloModule synthetic, entry_computation_layout={(f32[8]{0})->f32[8]{0}}", "", _BODY,
             "ENTRY %main (x: f32[8]) -> f32[8] {", "  %x = f32[8]{0} parameter(0)",
             "  %zero = s32[] constant(0)"]
    values = ["x"]      # f32[8] values an op may read
    candidates = ["x"]  # what a control edge may start at (earlier, any shape)
    n = 2
    while n < instructions - 1:
        if n % while_every == 0:
            name = f"w{n}"
            lines.append(f"  %init{n} = (s32[], f32[8]{{0}}) tuple(%zero, %{values[-1]})")
            lines.append(f"  %{name} = (s32[], f32[8]{{0}}) while(%init{n}), condition=%cond, body=%body")
            lines.append(f"  %g{n} = f32[8]{{0}} get-tuple-element(%{name}), index=1")
            candidates += [name, f"init{n}"]
            values.append(f"g{n}")
            n += 3
            continue
        name = f"v{n}"
        a, b = values[-1], rng.choice(values[-20:])
        line = f"  %{name} = f32[8]{{0}} {rng.choice(_OPS)}(%{a}, %{b})"
        if rng.random() < edge_share and len(candidates) > 1:
            k = rng.randint(1, 8)
            preds = rng.sample(candidates[-200:-1] or candidates[:1], min(k, len(candidates[-200:-1]) or 1))
            line += ", control-predecessors={" + ", ".join(f"%{p}" for p in dict.fromkeys(preds)) + "}"
        lines.append(line)
        values.append(name)
        candidates.append(name)
        n += 1
    lines.append(f"  ROOT %out = f32[8]{{0}} negate(%{values[-1]})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def many_predecessors(n: int) -> str:
    """One successor with `n` control predecessors: mostly plain ops, a `while`
    (tuple-shaped: link #3 unpacks it) every 100th, a `tuple` every 50th."""
    lines = ["HloModule many_predecessors", "", _BODY, "ENTRY %main (x: f32[8]) -> f32[8] {",
             "  %x = f32[8]{0} parameter(0)", "  %zero = s32[] constant(0)",
             "  %init = (s32[], f32[8]{0}) tuple(%zero, %x)"]
    preds = []
    for i in range(n):
        if i % 100 == 99:
            lines.append(f"  %w.{i} = (s32[], f32[8]{{0}}) while(%init), condition=%cond, body=%body")
            preds.append(f"w.{i}")
        elif i % 50 == 49:
            lines.append(f"  %t.{i} = (f32[8]{{0}}, f32[8]{{0}}) tuple(%p.{i - 1}, %p.{i - 2})")
            preds.append(f"t.{i}")
        else:
            lines.append(f"  %p.{i} = f32[8]{{0}} negate(%x)")
            preds.append(f"p.{i}")
    lines.append("  ROOT %succ = f32[8]{0} add(%x, %x), control-predecessors={"
                 + ", ".join("%" + p for p in preds) + "}")
    return "\n".join(lines) + "\n}\n"


def fan_in(edges: int, instructions: int = 0, *, control: bool = True) -> str:
    """One `add` with `edges` control predecessors (plain `negate`s of the
    parameter), after a chain of elementwise ops that makes the entry about
    `instructions` long (at least the fan-in's own). Without `control`, the
    same module with no control edge: the fan-in's cost apart from its size."""
    lines = ["HloModule fan_in", "", "ENTRY %main (x: f32[8]) -> f32[8] {", "  %x = f32[8]{0} parameter(0)"]
    value = "x"
    for i in range(max(instructions - edges - 3, 0)):
        lines.append(f"  %c.{i} = f32[8]{{0}} {_OPS[i % len(_OPS)]}(%{value}, %x)")
        value = f"c.{i}"
    lines += [f"  %p.{i} = f32[8]{{0}} negate(%x)" for i in range(edges)]
    preds = ", control-predecessors={" + ", ".join(f"%p.{i}" for i in range(edges)) + "}" if control and edges else ""
    lines.append(f"  %succ = f32[8]{{0}} add(%{value}, %x){preds}")
    lines.append("  ROOT %out = f32[8]{0} negate(%succ)")
    return "\n".join(lines) + "\n}\n"
