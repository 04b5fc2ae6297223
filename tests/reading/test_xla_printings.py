"""Forms XLA prints, and XLA's own printing of every form under each of its
print options: input the chain takes, with every edge XLA reads in the
original."""

from __future__ import annotations

import re

import jaxlib._hlo as xla_hlo
import pytest

from grammar_cases import ATTRIBUTES, FORMS, PRINTED
from grammar_oracle import (INLINE_COMPUTATION_BUG, INLINE_RENAMED, PRINT_OPTIONS, assert_link1_kept_the_rest,
                            expected, through_the_chain, xla_proto, xla_text)


@pytest.mark.parametrize("name", PRINTED)
def test_a_form_xla_prints_goes_through_the_chain(name):
    result, want = through_the_chain(PRINTED[name])
    assert want.edges  # every case has an edge to follow
    assert_link1_kept_the_rest(PRINTED[name], result, want)


REPRINTED = {**{f"form:{n}": FORMS[n][0] for n in ("names_reused_across_computations", "operands_written_inline",
                                                   "shaped_and_bare_operands", "crlf_and_tabs")},
             **{f"attributes:{n}": t for n, (t, _) in ATTRIBUTES.items()},
             **{f"printed:{n}": t for n, t in PRINTED.items()}}


def canonical_renames(text: str) -> dict[tuple[str, str], str]:
    """XLA's renames of a canonical printing: every instruction there is written
    `tmp_N`, so XLA's `tmp_N.K` is a `tmp_N` the text reuses."""
    return {(c.name, i.name): i.name.rsplit(".", 1)[0] for c in xla_proto(text).computations
            for i in c.instructions if re.fullmatch(r"tmp_[0-9]+\.[0-9]+", i.name)}


def _printings():
    """(module, printing) pairs. A canonical printing puts called computations
    inline, where the chain has a known bug (seen here outside fusion bodies)."""
    for name, text in REPRINTED.items():
        for printing in PRINT_OPTIONS:
            yield pytest.param(name, printing, id=f"{name}-{printing}",
                               marks=INLINE_COMPUTATION_BUG if printing == "canonical"
                               and (_inline(text) or name in INLINE_RENAMED) else ())


def _inline(text: str) -> bool:
    """Whether XLA's canonical printing of `text` has an inline computation no fusion calls."""
    try:
        want = expected(xla_hlo.hlo_module_from_text(xla_text(text)).to_string(PRINT_OPTIONS["canonical"]))
    except Exception:  # XLA cannot read some of its canonical printings back (see the test)
        return False
    return any(c.name.split(".")[0] == "_" and not want.fused(c.name) for c in want.proto.computations)


@pytest.mark.parametrize("name,printing", list(_printings()))
def test_xlas_printings_go_through_the_chain(name, printing):
    """XLA's own printing of a module, under each of its print options, is
    input the chain takes, with every edge XLA reads in the original."""
    text = xla_hlo.hlo_module_from_text(xla_text(REPRINTED[name])).to_string(PRINT_OPTIONS[printing])
    if printing == "canonical" and name == "printed:execution_thread_and_async":
        with pytest.raises(Exception, match="execution_thread"):  # XLA cannot read it back itself
            xla_hlo.hlo_module_from_text(text)
        return
    if printing == "canonical":
        assert re.search(r"tmp_[0-9]+ = ", text) and "control-predecessors" not in text
        through_the_chain(text, canonical_renames(text))
        return
    result, want = through_the_chain(text)
    assert len(want.edges) == len(expected(REPRINTED[name]).edges) > 0
