"""Random modules of elementwise ops (hypothesis): names in XLA's styles,
operands with and without shapes, metadata full of HLO punctuation, control
edges; each goes through the chain with XLA's edges and its operands."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammar_oracle import through_the_chain


_OPS = {"negate": 1, "abs": 1, "copy": 1, "exponential": 1, "add": 2, "multiply": 2, "maximum": 2}
_NAME_STYLES = ["v{}", "copy.{}", "add-{}.1", "x_{}", "fusion.{}.clone"]


@st.composite
def random_modules(draw):
    """A module of elementwise ops, names in one of XLA's styles, operands with
    and without shapes, metadata strings full of HLO punctuation, control edges."""
    n = draw(st.integers(1, 8))
    style = draw(st.sampled_from(_NAME_STYLES))
    names = ["p0"] + [style.format(i) for i in range(n)]
    lines, edges, operands = ["  %p0 = f32[4]{0} parameter(0)"], [], {}
    for i in range(1, n + 1):
        name = names[i]
        op = draw(st.sampled_from(sorted(_OPS)))
        ops = [names[draw(st.integers(0, i - 1))] for _ in range(_OPS[op])]
        operands[name] = ops
        shaped = draw(st.booleans())
        text = f"  {'ROOT ' if i == n else ''}%{name} = f32[4]{{0}} {op}(" + ", ".join(
            ("f32[4]{0} " if shaped else "") + "%" + o for o in ops) + ")"
        if draw(st.booleans()):
            op_name = draw(st.text(st.sampled_from('ab {}(),=%#"\\/é*\n'), max_size=12))
            escaped = op_name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            text += f', metadata={{op_name="{escaped}" source_line={i}}}'
        preds = draw(st.lists(st.sampled_from(names[:i]), unique=True, max_size=3))
        if preds:
            text += ", control-predecessors={" + ", ".join("%" + p for p in preds) + "}"
            edges.extend(("main", p, name) for p in preds)
        lines.append(text)
    text = "HloModule random\n\nENTRY %main (p0: f32[4]) -> f32[4] {\n" + "\n".join(lines) + "\n}\n"
    return text, edges, operands


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_modules())
def test_random_modules_go_through_the_chain(case):
    text, edges, operands = case
    result, want = through_the_chain(text, {}, edges)
    program = {i.name: i for i in result.module().instructions() if i.computation == "main"}
    for name, ops in operands.items():
        assert [o.name for o in program[name].operands] == ops, name
