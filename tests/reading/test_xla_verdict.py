"""XLA's parser's verdict is the chain's: what XLA refuses, the chain
refuses, in one line that names the file and a position in the user's text;
what XLA accepts, the chain accepts; never an internal error.

The oracle is XLA's parser itself, on seeded one-edit mutations of the
corpus (tests/differential_hlo.py makes and judges them; XLA runs in worker
processes, and a mutant it aborts on goes through the chain isolated). On
this seed both directions agree on every mutant, with jax 0.10.2 and 0.12;
wider runs of `python tests/differential_hlo.py` still find about one
mutant in a thousand that XLA accepts and the chain's reader refuses (a
comment or a line break inside a shape), which the redesign of the issue
"XLA's parser is the one reader of HLO" removes with the reader."""

from __future__ import annotations

import pytest

import differential_hlo as differential

MUTANTS = 400
SEED = 20261201


@pytest.fixture(scope="module")
def judged():
    mutants = differential.make_mutants(MUTANTS, SEED)
    return mutants, differential.judge(mutants, jobs=2)


def test_the_mutants_cover_both_verdicts(judged):
    _, results = judged
    verdicts = [x for x, _, _ in results]
    assert verdicts.count("accept") > MUTANTS // 5 and verdicts.count("refuse") > MUTANTS // 5


def test_the_chain_and_xla_agree_on_every_mutant(judged):
    mutants, results = judged
    wrong = []
    for (module, edit, _), (xla, chain, said) in zip(mutants, results):
        found = differential.classify(xla, chain, said)
        if found is not None:
            wrong.append(f"{found}: {module}, {edit}: {said[:200] or '(accepted)'}")
    assert wrong == []


@pytest.mark.parametrize("operands,accepted", [
    ("%x, , %x", True), ("%x,", True), (",%x, %x", True), (",", False), ("%x %x", False)])
def test_empty_places_in_an_operand_list_as_xla_reads_them(operands, accepted):
    """XLA's parser passes over empty places in an operand list, but not a list of commas alone."""
    import pipeline

    opcode = "add" if operands.count("%x") == 2 else "negate"
    text = (f"ENTRY %m (x: f32[4]) -> f32[4] {{\n  %x = f32[4] parameter(0)\n  %a = f32[4] abs(%x)\n"
            f"  ROOT %n = f32[4] {opcode}({operands}), control-predecessors={{%a}}\n}}\n")
    (xla, chain, said), = differential.judge([("hand", operands, text)], jobs=1)
    assert xla == ("accept" if accepted else "refuse") and chain == xla
    if accepted:
        assert pipeline.run(text, isolate=False).report.ok


def test_an_edit_that_only_xla_refuses_is_refused_with_xla_s_position():
    """A GPU dump without its `HloModule` line: XLA refuses the rest, and the
    chain, which once added a header of its own, now says what XLA says."""
    text = (differential.TESTS / "pipeline_dumps" / "gpu_gemm_all_reduce.hlo").read_text()
    mutated = text.split("\n", 1)[1]
    (xla, chain, said), = differential.judge([("gpu_gemm_all_reduce.hlo", "deleted line 1", mutated)], jobs=1)
    assert (xla, chain) == ("refuse", "refuse")
    assert said.startswith(f"{differential.SOURCE}:") and ": XLA's parser: " in said and "\n" not in said


@pytest.mark.parametrize("isolate", [True, False])
def test_the_whole_chain_refuses_it_too(isolate):
    import pipeline
    from passes.errors import ChainError

    text = (differential.TESTS / "pipeline_dumps" / "gpu_gemm_all_reduce.hlo").read_text().split("\n", 1)[1]
    with pytest.raises(ChainError, match=rf"^{differential.SOURCE}:\d+:\d+: XLA's parser: "):
        pipeline.run(text, source_name=differential.SOURCE, isolate=isolate, check=False)  # link #2 says it


def test_operands_written_inline_600_deep_go_through_the_whole_chain():
    """XLA reads them; the reader recursed past Python's limit (an internal error)."""
    import jaxlib._hlo as xla_hlo

    import pipeline

    inner = "%x"
    for _ in range(600):
        inner = f"f32[4] negate({inner})"
    text = ("ENTRY %m (x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(0)\n  %a = f32[4] abs(%x)\n"
            f"  ROOT %n = f32[4] add({inner}, %x), control-predecessors={{%a}}\n}}\n")
    xla_hlo.hlo_module_from_text(text)
    report = pipeline.run(text).report
    assert report.ok and [(e.predecessor, e.successor, e.fate) for e in report.edges] == [("a", "n", "preserved")]
