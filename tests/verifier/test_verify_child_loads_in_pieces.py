"""The verifier's child runs a program with the chain's one loader
(`pipeline.verifier.program`): a long program runs in pieces there as in
the chain, and the module it sends back is judged as the chain judged its
own. (The child's work, `sandbox._run`, is called here in this process so
that the loader's calls can be counted.)"""

from __future__ import annotations

import json

import pipeline
from bench.synthetic import synthetic_hlo
from pipeline.verifier import program, sandbox
from pipeline.verifier.verify import verify
from pipeline.verifier.wire import rebuild


def test_the_child_loads_a_long_program_as_the_chain_does(tmp_path, monkeypatch):
    hlo = synthetic_hlo(8000)
    chained = pipeline.run(hlo, check=True, isolate=False)
    source = chained.penguin_source
    assert source.count("\n") > 10_000 and len(program.compiled(source, "long")) > 1  # long enough for pieces
    loads = []
    real = program.compiled
    monkeypatch.setattr(program, "compiled", lambda s, f, helper=None: loads.append(f) or real(s, f, helper))
    answer = sandbox._run(source, "long.py")
    assert loads == ["long.py"]
    report = verify(hlo, rebuild(json.loads(answer)["module"]))
    assert report.ok and report.lines() == chained.report.lines() and report.dep_edges > 1000
    path = tmp_path / "long.py"
    path.write_text(source)
    assert verify(hlo, path).lines() == chained.report.lines()  # and through the real child
