"""What XLA's parser refuses, the chain refuses, in one line that names the
file and a position in the user's text, and never with an internal error.

The oracle is XLA's parser itself, on seeded one-edit mutations of the
corpus (tests/differential_hlo.py makes and judges them; XLA runs in worker
processes, and a mutant it aborts on goes through the chain isolated). The
other direction, modules XLA accepts that the chain's own reader refuses
(mostly comments where XLA allows whitespace), is the open part of the
issue "XLA's parser is the one reader of HLO": `python
tests/differential_hlo.py` counts it."""

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


def test_what_xla_refuses_the_chain_refuses_in_one_line_with_file_and_position(judged):
    mutants, results = judged
    wrong = []
    for (module, edit, _), (xla, chain, said) in zip(mutants, results):
        found = differential.classify(xla, chain, said)
        if found is not None and found != "XLA accepts, the chain refuses":
            wrong.append(f"{found}: {module}, {edit}: {said[:200] or '(accepted)'}")
    assert wrong == []


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
