"""Where HLO with control edges comes from: a JAX function, or a
`jax.export` artifact, compiled here with XLA's dumps on.

XLA adds control edges while it compiles (copy insertion orders the copies it
adds against the in-place writes they protect), so the modules worth feeding
to the chain are the pass dumps written during compilation, not the module
JAX lowers. Each source compiles (or reads) with `xla_dump_to` and
`xla_dump_hlo_pass_re`, and `xla_dump_large_constants` (every constant with
its values, not `constant({...})`), and returns every HLO module dumped:

    captured = from_jax(fn, *example_args)           # in-process, temp dir removed
    captured = from_export("prog.jaxexport")         # a serialized jax.export artifact
    captured = from_dump_dir("/tmp/xla_dump")        # an existing dump folder
    captured.modules           # the CapturedModules that carry control edges
    captured.pre_optimization  # the before_optimizations module (no edges: the input)
    captured.all               # every HLO module dumped
    pipeline.run(captured.modules[0])                 # name, stage, hlo_text

(`pipeline.from_jax`, `pipeline.from_export`, `pipeline.from_dump_dir` are
these.)
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any, Callable

from passes.errors import ChainError, first_line
from pipeline.reading.dumps import Captured, CapturedModule, read_folder
from pipeline.reading.lexical import looks_like_hlo

__all__ = ["DEFAULT_PASS_RE", "DUMP_OPTIONS", "export_module", "export_modules", "from_dump_dir", "from_export",
           "from_jax"]

DEFAULT_PASS_RE = "copy-insertion"
# Every constant's values in the dumps: without it XLA prints a large one as
# `constant({...})`, which its parser reads back as placeholder bits.
DUMP_OPTIONS = {"xla_dump_large_constants": True}


def from_jax(fn: Callable, *args: Any, pass_re: str = DEFAULT_PASS_RE) -> Captured:
    """Compile `jax.jit(fn)(*args)` in-process and capture XLA's HLO dumps.
    `args` are arrays or `jax.ShapeDtypeStruct`s. The dumps go to a temporary
    folder that is removed before returning."""
    import jax

    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    label = getattr(fn, "__name__", type(fn).__name__)
    with tempfile.TemporaryDirectory(prefix="hlo2penguin_dump_") as folder:
        try:
            lowered = jitted.lower(*args)
            lowered.compile(compiler_options={**DUMP_OPTIONS, "xla_dump_to": folder, "xla_dump_hlo_pass_re": pass_re})
        except Exception as err:  # JAX raises many kinds: TypeError, XlaRuntimeError, tracer errors…
            raise ValueError(f"JAX cannot compile {label}{_signature(args)}: {first_line(err, with_type=True)} "
                             f"(check the function and its example arguments)") from err
        return read_folder(folder, f"the dump of {label}")


def from_export(source, pass_re: str = DEFAULT_PASS_RE) -> Captured:
    """Compile a `jax.export` artifact and capture XLA's HLO dumps.
    `source`: a `jax.export.Exported`, the bytes of `exported.serialize()`,
    or the path of a file holding them. Compiled on the CPU, through
    `jax.jit` of `exported.call` on its input shapes, so its module is named
    `jit_<exported.fun_name>`."""
    import jax
    from jax import export as jax_export

    if isinstance(source, jax_export.Exported):
        exported, where = source, f"Exported {source.fun_name}"
    else:
        exported, where = _deserialize(source)
    if "cpu" not in tuple(p.lower() for p in exported.platforms):
        raise ValueError(f"{where} was exported for {', '.join(exported.platforms)}, not cpu: "
                         f"export it with platforms=('cpu', ...) to capture it here")
    try:
        specs = [jax.ShapeDtypeStruct(aval.shape, aval.dtype) for aval in exported.in_avals]
    except Exception as err:  # a symbolic dimension has no concrete size
        raise ValueError(f"{where} has non-concrete input shapes ({first_line(err, with_type=True)}): "
                         f"export it with concrete shapes to compile it") from err
    in_tree = exported.in_tree

    def call(*flat):
        call_args, call_kwargs = in_tree.unflatten(flat)
        return exported.call(*call_args, **call_kwargs)

    call.__name__ = call.__qualname__ = _identifier(exported.fun_name)
    return from_jax(call, *specs, pass_re=pass_re)


def from_dump_dir(path) -> Captured:
    """Read the HLO modules of an existing XLA dump folder (`--xla_dump_to`):
    its `*.txt` dumps, and its `*.hlo.pb` dumps where a stage has no `*.txt`."""
    folder = os.fspath(path)
    if not os.path.isdir(folder):
        raise ValueError(f"{folder}: not a folder: give the folder passed to --xla_dump_to")
    return read_folder(folder, folder)


# --------------------------------------------------------------------------
# Reading dumps
# --------------------------------------------------------------------------


def _deserialize(source):
    from jax import export as jax_export

    try:
        import flatbuffers  # noqa: F401 - jax.export's (de)serialization needs it, and says so badly
    except ImportError as err:
        raise ImportError("reading a jax.export artifact needs the 'flatbuffers' package: "
                          "pip install flatbuffers") from err

    if isinstance(source, (bytes, bytearray, memoryview)):
        data, where = bytes(source), "the given bytes"
    else:
        where = os.fspath(source)
        if not os.path.isfile(where):
            raise ValueError(f"{where}: no such file: give a jax.export artifact (bytes of exported.serialize())")
        with open(where, "rb") as f:
            data = f.read()
    if looks_like_hlo(data[:4096].decode("utf-8", "replace")):
        raise ValueError(f"{where} is HLO text, not a jax.export artifact: "
                         f"give it to pipeline.run directly (or use from_dump_dir for a dump folder)")
    try:
        exported = jax_export.deserialize(bytearray(data))
        exported.in_avals, exported.fun_name  # noqa: B018 - touch the fields a bad buffer breaks
    except Exception as err:
        raise ValueError(f"{where} is not a jax.export artifact ({first_line(err, with_type=True)}): "
                         f"write one with jax.export.export(jax.jit(fn))(*specs).serialize()") from err
    return exported, where


def _identifier(name: str) -> str:
    name = re.sub(r"\W", "_", name or "exported")
    return name if not name[0].isdigit() else f"_{name}"


def _signature(args) -> str:
    parts = []
    for arg in args:
        shape, dtype = getattr(arg, "shape", None), getattr(arg, "dtype", None)
        parts.append(f"{dtype}{list(shape)}" if shape is not None and dtype is not None else type(arg).__name__)
    return f"({', '.join(parts)})"



# -- what the chain reads: a path, HLO text, a captured module or our IR -----------------


# -- a jax.export artifact's modules, as the chain takes them ---------------------------


def export_modules(data: bytes, where: str) -> Captured:
    """Every module a jax.export artifact compiles to (`from_export`, on the
    CPU: XLA's dumps through copy insertion); its refusals as
    `binary.BadBinary`, naming `where`."""
    from pipeline.reading.binary import BadBinary

    try:
        return from_export(data)
    except ChainError:
        raise
    except (ValueError, ImportError) as err:  # from_export's own one-line refusals
        raise BadBinary(str(err).replace("the given bytes", "the jax.export artifact"), where) from None


def export_module(data: bytes, where: str) -> CapturedModule:
    """The one module `hlo2penguin FILE` and `pipeline.run` take from a
    jax.export artifact: the last one XLA dumped with control edges (copy
    insertion adds them; later passes may drop them), else the module XLA
    compiles to. `hlo2penguin check FILE` takes each one with control edges."""
    captured = export_modules(data, where)
    if captured.modules:
        return captured.modules[-1]
    finals = [m for m in captured.all if m.stage.endswith("after_optimizations")]
    return (finals or captured.all)[-1]


