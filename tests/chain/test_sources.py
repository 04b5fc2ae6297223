"""pipeline/reading/capture.py, dumps.py: HLO modules with control edges from a JAX function, a
jax.export artifact (the corpus in tests/corpus/) or an XLA dump folder."""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pipeline
from pipeline import sources
from pipeline.reading.dumps import Captured, CapturedModule
import paths

CORPUS = str(paths.CORPUS)
INTERFERENCE = "copy-insertion.after_adding_copies_to_resolve_interference"


def _load_programs():
    spec = importlib.util.spec_from_file_location("hlo2penguin_corpus_programs", os.path.join(CORPUS, "programs.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


PROGRAMS = _load_programs().PROGRAMS
NAMES = [p.name for p in PROGRAMS]


def fori_inplace(x):
    return jax.lax.fori_loop(1, x.shape[0], lambda i, x: x.at[i].set(x[i - 1] * 2.0), x)


def while_swap(a, b):
    return jax.lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[2], s[1] + s[2]), (jnp.int32(0), a, b))


X4 = np.arange(4, dtype=np.float32)


@functools.lru_cache(maxsize=None)
def captured_export(name: str) -> Captured:
    return sources.from_export(os.path.join(CORPUS, name + ".jaxexport"))


# --------------------------------------------------------------------------
# from_jax
# --------------------------------------------------------------------------


def test_from_jax_returns_modules_with_edges_and_removes_its_dumps(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    captured = sources.from_jax(fori_inplace, X4)
    assert os.listdir(tmp_path) == []  # the dump folder is gone
    assert captured.modules and all(isinstance(m, CapturedModule) for m in captured.modules)
    assert all(m.edges > 0 for m in captured.modules)
    assert [m.stage for m in captured.modules] == [INTERFERENCE]
    module = captured.modules[0]
    assert module.name == f"jit_fori_inplace:{INTERFERENCE}"
    assert module.hlo_text.lstrip().startswith("HloModule jit_fori_inplace")
    assert "control-predecessors" in module.hlo_text
    assert set(captured.modules) <= set(captured.all)
    assert captured.edges == sum(m.edges for m in captured.modules)


def test_from_jax_captures_every_hlo_dump_and_no_report():
    captured = sources.from_jax(fori_inplace, X4)
    stages = [m.stage for m in captured.all]
    assert stages[0] == "before_optimizations" and stages[-1] == "cpu_after_optimizations"
    assert INTERFERENCE in stages
    assert not any(marker in s for s in stages for marker in ("buffer-assignment", "memory-usage", "live-range"))
    assert all(m.hlo_text.lstrip().startswith("HloModule") for m in captured.all)
    pre = captured.pre_optimization
    assert pre is not None and pre.stage == "before_optimizations" and pre.edges == 0
    assert pre.name == "jit_fori_inplace:before_optimizations"


def test_names_carry_no_module_counter_and_are_stable():
    first = sources.from_jax(while_swap, X4, X4)
    sources.from_jax(fori_inplace, X4)  # moves XLA's module counter on
    again = sources.from_jax(while_swap, X4, X4)
    names = [m.name for m in first.all]
    assert names == [m.name for m in again.all]
    assert len(set(names)) == len(names)
    for name in names:
        assert "module_" not in name
        module_name, stage = name.split(":", 1)
        assert module_name == "jit_while_swap"
        assert not stage[:4].isdigit()  # nor the pass step counter
    assert [m.edges for m in first.modules] == [m.edges for m in again.modules]


def test_from_jax_pass_re_selects_the_pass_dumps():
    captured = sources.from_jax(fori_inplace, X4, pass_re="^$")  # no pass: the two default dumps only
    assert [m.stage for m in captured.all] == ["before_optimizations", "cpu_after_optimizations"]
    assert captured.modules == []


def test_from_jax_accepts_a_jitted_function_and_shape_specs():
    captured = sources.from_jax(jax.jit(fori_inplace), jax.ShapeDtypeStruct((4,), jnp.float32))
    assert [m.name for m in captured.modules] == [f"jit_fori_inplace:{INTERFERENCE}"]


def test_a_function_jax_cannot_compile_is_one_line_value_error(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    def bad(x, y):
        return x @ y  # f32[4] @ f32[3]

    with pytest.raises(ValueError, match=r"JAX cannot compile bad\(float32\[4\], float32\[3\]\)") as err:
        sources.from_jax(bad, X4, np.zeros(3, np.float32))
    assert "\n" not in str(err.value)
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------
# from_export: the corpus
# --------------------------------------------------------------------------


def test_corpus_has_at_least_15_programs_with_their_artifacts():
    assert len(NAMES) >= 15 and len(set(NAMES)) == len(NAMES)
    artifacts = sorted(f[: -len(".jaxexport")] for f in os.listdir(CORPUS) if f.endswith(".jaxexport"))
    assert artifacts == sorted(NAMES)
    for name in NAMES:
        assert os.path.getsize(os.path.join(CORPUS, name + ".jaxexport")) < 16_000, name
        assert os.path.isfile(os.path.join(CORPUS, "inputs", name + ".npz")), name
        assert os.path.isfile(os.path.join(CORPUS, "expected", name + ".npz")), name


@pytest.mark.parametrize("program", PROGRAMS, ids=NAMES)
def test_every_artifact_yields_control_edges_in_the_stages_it_claims(program):
    captured = captured_export(program.name)
    assert captured.modules, f"{program.name}: no module with control edges"
    assert tuple(m.stage for m in captured.modules) == program.edge_stages
    assert all(m.name.startswith(f"jit_{program.name}:") for m in captured.all)
    assert captured.pre_optimization is not None and captured.pre_optimization.edges == 0


@pytest.mark.parametrize("program", PROGRAMS, ids=NAMES)
def test_every_artifact_goes_through_the_chain_without_losing_an_edge(program):
    module = max(captured_export(program.name).modules, key=lambda m: m.edges)
    result = pipeline.run(module, dialect="stablehlo")
    assert result.source == module.name
    assert result.report.lost == [], "\n".join(map(str, result.report.lost))
    assert len(result.report.edges) == module.edges


@pytest.mark.parametrize("program", PROGRAMS, ids=NAMES)
def test_artifact_reproduces_the_expected_outputs(program):
    exported = jax.export.deserialize(bytearray(open(os.path.join(CORPUS, program.name + ".jaxexport"), "rb").read()))
    inputs = np.load(os.path.join(CORPUS, "inputs", program.name + ".npz"))
    expected = np.load(os.path.join(CORPUS, "expected", program.name + ".npz"))
    args = [inputs[f"arg_{i}"] for i in range(len(inputs.files))]
    for arg, spec in zip(args, program.specs()):
        assert (arg.shape, arg.dtype) == (spec.shape, spec.dtype)
    outputs = jax.tree_util.tree_leaves(exported.call(*args))
    assert len(outputs) == len(expected.files)
    for i, out in enumerate(outputs):
        np.testing.assert_allclose(np.asarray(out), expected[f"out_{i}"], rtol=1e-5, atol=1e-6)


def test_inputs_are_deterministic():
    for program in PROGRAMS[:3]:
        for a, b in zip(program.inputs(), program.inputs()):
            np.testing.assert_array_equal(a, b)


def test_regenerate_reproduces_the_artifacts():
    # Artifacts and inputs byte for byte; JAX's outputs within a tolerance
    # (XLA:CPU's last bits differ between CPUs).
    run = subprocess.run([sys.executable, os.path.join(CORPUS, "regenerate.py"), "--check"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]


def _npz(**arrays) -> bytes:
    sys.path.insert(0, CORPUS)
    try:
        import regenerate
    finally:
        sys.path.remove(CORPUS)
    return regenerate, regenerate.npz_bytes(arrays)


def test_expected_outputs_compare_with_a_tolerance_artifacts_byte_for_byte():
    regenerate, old = _npz(out_0=np.array([1.0, 2.0, 3.0], np.float32), out_1=np.array([7], np.int32))
    expected = os.path.join(CORPUS, "expected", "x.npz")
    artifact = os.path.join(CORPUS, "x.jaxexport")
    last_bits = np.nextafter(np.float32(2.0), np.float32(3.0))  # one ulp: another CPU
    _, other_cpu = _npz(out_0=np.array([1.0, last_bits, 3.0], np.float32), out_1=np.array([7], np.int32))
    assert other_cpu != old and not regenerate.is_stale(expected, old, other_cpu)
    assert regenerate.is_stale(artifact, old, other_cpu)  # not numbers: byte for byte
    for changed in (dict(out_0=np.array([1.0, 2.01, 3.0], np.float32), out_1=np.array([7], np.int32)),
                    dict(out_0=np.array([1.0, 2.0, 3.0], np.float32), out_1=np.array([8], np.int32)),
                    dict(out_0=np.array([1.0, 2.0, 3.0], np.float64), out_1=np.array([7], np.int32)),
                    dict(out_0=np.array([1.0, 2.0], np.float32), out_1=np.array([7], np.int32)),
                    dict(out_0=np.array([1.0, 2.0, 3.0], np.float32))):
        _, new = _npz(**changed)
        assert regenerate.is_stale(expected, old, new), changed


def test_from_export_accepts_an_exported_object_and_bytes():
    path = os.path.join(CORPUS, "while_swap_buffers.jaxexport")
    data = open(path, "rb").read()
    from_object = sources.from_export(jax.export.deserialize(bytearray(data)))
    from_bytes = sources.from_export(data)
    from_path = captured_export("while_swap_buffers")
    assert [m.name for m in from_object.all] == [m.name for m in from_path.all] == [m.name for m in from_bytes.all]
    assert [m.edges for m in from_object.modules] == [m.edges for m in from_path.modules]
    assert len(from_object.modules) == 5


def test_from_export_of_a_fresh_export_matches_from_jax():
    exported = jax.export.export(jax.jit(while_swap))(*(jax.ShapeDtypeStruct((4,), jnp.float32),) * 2)
    via_export = sources.from_export(exported)
    via_jax = sources.from_jax(while_swap, X4, X4)
    assert [(m.name, m.edges) for m in via_export.modules] == [(m.name, m.edges) for m in via_jax.modules]


@pytest.mark.parametrize("content", [b"HloModule m\n\nENTRY e { ROOT p = f32[] parameter(0) }\n",
                                     b"", bytes(range(256)) * 4, b"\x00" * 64],
                         ids=["hlo-text", "empty", "noise", "zeros"])
def test_a_file_that_is_no_export_artifact_is_one_line_value_error(tmp_path, content):
    path = tmp_path / "not.jaxexport"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="jax.export artifact") as err:
        sources.from_export(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_a_missing_artifact_is_value_error(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        sources.from_export(tmp_path / "missing.jaxexport")


def test_without_flatbuffers_reading_an_artifact_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "flatbuffers", None)
    with pytest.raises(ImportError, match="pip install flatbuffers"):
        sources.from_export(os.path.join(CORPUS, "fori_inplace.jaxexport"))


def test_an_artifact_exported_for_another_platform_is_value_error():
    exported = jax.export.export(jax.jit(fori_inplace), platforms=("tpu",))(jax.ShapeDtypeStruct((4,), jnp.float32))
    with pytest.raises(ValueError, match="not cpu"):
        sources.from_export(exported)


# --------------------------------------------------------------------------
# from_dump_dir
# --------------------------------------------------------------------------


def test_from_dump_dir_reads_a_folder_like_from_jax(tmp_path):
    jax.jit(while_swap).lower(X4, X4).compile(
        compiler_options={"xla_dump_to": str(tmp_path), "xla_dump_hlo_pass_re": "copy-insertion"})
    files = os.listdir(tmp_path)
    assert any("buffer-assignment" in f for f in files) and any(f.startswith("module_") for f in files)
    captured = sources.from_dump_dir(tmp_path)
    expected = sources.from_jax(while_swap, X4, X4)
    assert [(m.name, m.edges) for m in captured.all] == [(m.name, m.edges) for m in expected.all]
    assert [m.name for m in captured.modules] == [m.name for m in expected.modules]
    assert captured.pre_optimization.name == "jit_while_swap:before_optimizations"
    assert sorted(os.listdir(tmp_path)) == sorted(files)  # reading leaves the folder alone


def test_from_dump_dir_tells_two_compilations_of_one_name_apart(tmp_path):
    options = {"xla_dump_to": str(tmp_path), "xla_dump_hlo_pass_re": "copy-insertion"}
    jax.jit(fori_inplace).lower(X4).compile(compiler_options=options)
    jax.jit(fori_inplace).lower(np.zeros(6, np.float32)).compile(compiler_options=options)
    captured = sources.from_dump_dir(tmp_path)
    names = [m.name for m in captured.all]
    assert len(set(names)) == len(names)
    assert f"jit_fori_inplace:{INTERFERENCE}" in names and f"jit_fori_inplace#1:{INTERFERENCE}" in names
    assert len(captured.modules) == 2


def test_an_empty_dump_dir_is_one_line_value_error(tmp_path):
    with pytest.raises(ValueError, match="no HLO module dumps") as err:
        sources.from_dump_dir(tmp_path)
    assert "\n" not in str(err.value) and str(tmp_path) in str(err.value)


def test_a_dump_dir_of_reports_only_is_value_error(tmp_path):
    (tmp_path / "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt").write_text("BufferAssignment:\n")
    (tmp_path / "module_0001.jit_f.ir-no-opt.ll").write_text("; llvm\n")
    (tmp_path / "notes.txt").write_text("HloModule not_a_dump\n")
    with pytest.raises(ValueError, match="no HLO module dumps"):
        sources.from_dump_dir(tmp_path)


def test_a_missing_dump_dir_is_value_error(tmp_path):
    with pytest.raises(ValueError, match="not a folder"):
        sources.from_dump_dir(tmp_path / "missing")


# --------------------------------------------------------------------------
# The chain on a captured module
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_pipeline_runs_on_a_captured_module(dialect):
    module = sources.from_jax(while_swap, X4, X4).modules[0]
    result = pipeline.run(module, dialect=dialect)
    assert result.source == module.name
    assert result.report.lost == []
    assert len(result.report.edges) == module.edges
    assert result.report.dep_edges >= module.edges - result.report.count("dropped")
    assert len(result.module().dependencies) == result.report.dep_edges


def test_captured_module_is_frozen_and_hashable():
    module = CapturedModule("m:stage", "stage", "HloModule m\n\nENTRY e { ROOT p = f32[] parameter(0) }\n")
    assert module.edges == 0
    with pytest.raises(Exception):
        module.name = "other"  # type: ignore[misc]
    assert {module: 1}[module] == 1
