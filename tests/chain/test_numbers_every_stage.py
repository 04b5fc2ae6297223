"""Numbers at every stage XLA dumps. Each program of the corpus is compiled
by XLA with every pass dumped as text and as proto; every stage that
carries control edges, and the final `cpu_after_optimizations` module,
round-trips with numbers, in both dialects, against two oracles the chain
does not control: XLA:CPU on that stage's module (`assert_round_trip`'s
default), and JAX's own outputs (`expected/<name>.npz`, written by
jax.jit). Tolerance: the helper's default, rtol = atol = 1e-5 (XLA:CPU's
last bits differ between CPUs and between fusions of the same sum).

Past layout assignment XLA:CPU cannot run a module as dumped (bitcasts of
laid-out buffers, CPU fusions without their backend config); it runs the
module's runnable form (`pipeline.xla.runnable`), and `result.numerics`
says so."""

from __future__ import annotations

import glob
import os

import jax
import numpy as np
import pytest
from jax import export as jax_export

from paths import CORPUS
from pipeline.testing import assert_round_trip

NAMES = sorted(os.path.basename(p)[:-len(".jaxexport")] for p in glob.glob(str(CORPUS / "*.jaxexport")))


def _arrays(path) -> list[np.ndarray]:
    with np.load(path) as found:
        return [found[k] for k in sorted(found.files, key=lambda k: int(k.rsplit("_", 1)[1]))]


def _dump(name: str, folder: str) -> None:
    """XLA's dumps of the corpus artifact `name` at every pass, as text and as proto."""
    exported = jax_export.deserialize(bytearray((CORPUS / f"{name}.jaxexport").read_bytes()))
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in exported.in_avals]

    def call(*flat):
        args, kwargs = exported.in_tree.unflatten(flat)
        return exported.call(*args, **kwargs)

    jax.jit(call).lower(*specs).compile(compiler_options={
        "xla_dump_to": folder, "xla_dump_hlo_pass_re": ".*", "xla_dump_large_constants": True,
        "xla_dump_hlo_as_text": True, "xla_dump_hlo_as_proto": True})


def _stages(folder: str) -> list[str]:
    """The text dumps of the stages with control edges, and the final module."""
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "*.txt"))):
        if "buffer-assignment" in path or "memory-usage" in path:
            continue
        with open(path) as f:
            text = f.read()
        if "control-predecessors" in text or path.endswith("cpu_after_optimizations.txt"):
            found.append(path)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_every_stage_with_control_edges_round_trips_with_numbers(name, tmp_path):
    _dump(name, str(tmp_path))
    inputs, jax_outputs = _arrays(CORPUS / "inputs" / f"{name}.npz"), _arrays(CORPUS / "expected" / f"{name}.npz")
    stages = _stages(str(tmp_path))
    assert any(s.endswith("cpu_after_optimizations.txt") for s in stages)
    assert len(stages) >= 2, stages  # copy insertion's stages carry edges for every program of the corpus
    runnable_forms = 0
    for text_dump in stages:
        proto_dump = text_dump[:-len(".txt")] + ".hlo.pb"
        assert os.path.exists(proto_dump)
        for source in (text_dump, proto_dump):
            for dialect in ("stablehlo", "mhlo"):
                result = assert_round_trip(source, inputs=inputs, dialect=dialect)   # XLA:CPU on this stage
                assert result.numerics.startswith("XLA:CPU's numbers on the module")
                runnable_forms += "as given" not in result.numerics
                assert_round_trip(source, inputs=inputs, expected=jax_outputs, dialect=dialect)  # JAX's
    assert runnable_forms > 0  # the final module is always laid out and fused for the CPU


def test_a_dump_round_trips_as_a_jax_export_artifact_with_numbers():
    name = "while_swap_buffers"
    inputs, jax_outputs = _arrays(CORPUS / "inputs" / f"{name}.npz"), _arrays(CORPUS / "expected" / f"{name}.npz")
    artifact = CORPUS / f"{name}.jaxexport"
    result = assert_round_trip(artifact, inputs=inputs)
    assert result.report.ok and result.numerics
    assert_round_trip(artifact, inputs=inputs, expected=jax_outputs)
