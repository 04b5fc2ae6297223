"""Which of the program's dep edges carry a rerouted HLO edge: the verifier
names them (`EdgeReport.carried`, the `rerouted (the program orders them
through %u -> %v)` a user reads) from the dep edges that end at the
successor or at an op reading it, never at what the successor forwards.

On the built-in example, read by XLA's parser: %scale is a constant with
the control edge %loop -> %scale, which the program carries on %scales,
the broadcast that reads it (XLA's own users of %scale say so)."""

from __future__ import annotations

import jaxlib._hlo as xla_hlo

import pipeline
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.verifier.verify import verify


def _main_users() -> dict[str, list[str]]:
    """Instruction → the names of its users, in the entry computation, as XLA's parser reads it."""
    module = xla_hlo.hlo_module_from_text(EXAMPLE_HLO)
    entry = module.computations()[-1]  # XLA lists the entry computation last
    return {i.name: [u.name for u in i.users()] for i in entry.instructions()}


def test_a_reroute_names_the_dep_edge_on_the_reader_that_carries_it(tmp_path):
    users = _main_users()
    assert users["scale"] == ["scales"]  # XLA: only the broadcast reads the constant
    result = pipeline.run(EXAMPLE_HLO, isolate=False)
    (tmp_path / "program.py").write_text(result.penguin_source)
    module = result.module()
    deps = {(p, s) for c, p, s in module.dep_edges()}
    assert ("loop", "scales") in deps and ("loop", "scale") not in deps  # the program's own dep edges
    for judged in (module, tmp_path / "program.py"):  # in this process, and in the verifier's child
        edge = next(e for e in verify(EXAMPLE_HLO, judged).edges if (e.predecessor, e.successor) == ("loop", "scale"))
        assert edge.fate == "rerouted"
        assert edge.carried == (("loop", "scales"),)
        assert edge.reason == "the program orders them through %loop -> %scales"
