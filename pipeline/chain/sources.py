"""Where HLO with control edges comes from: a JAX function, a `jax.export`
artifact, or an XLA dump folder; and `load`, which reads any of the chain's
inputs (a path, HLO text, a binary module — `pipeline.chain.binary` — or a
captured module) with XLA.

XLA adds control edges while it compiles (copy insertion orders the copies it
adds against the in-place writes they protect), so the modules worth feeding
to the chain are the pass dumps written during compilation, not the module
JAX lowers. Each source compiles (or reads) with `xla_dump_to` and
`xla_dump_hlo_pass_re`, and `xla_dump_large_constants` (every constant with
its values, not `constant({...})`), and returns every HLO module dumped:

    captured = sources.from_jax(fn, *example_args)           # in-process, temp dir removed
    captured = sources.from_export("prog.jaxexport")         # a serialized jax.export artifact
    captured = sources.from_dump_dir("/tmp/xla_dump")        # an existing dump folder
    captured.modules           # the CapturedModules that carry control edges
    captured.pre_optimization  # the before_optimizations module (no edges: the input)
    captured.all               # every HLO module dumped
    pipeline.run(captured.modules[0])                         # name, stage, hlo_text

A module's name is `f"{HLO module name}:{stage}"`, where the stage is the
dump file name after the module name without XLA's counters
(`jit_f:copy-insertion.after_adding_copies_to_resolve_interference`): the
`module_NNNN` id depends on compile order and must not leak into goldens.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from passes.errors import ChainError, first_line
from pipeline.reading.parsed import Parsed
from pipeline.reading.text import decode, names_a_file
from pipeline.xla.isolated import parse

__all__ = ["Captured", "CapturedModule", "DEFAULT_PASS_RE", "DUMP_OPTIONS", "Loaded", "UnreadableInput",
           "export_module", "export_modules", "from_dump_dir", "from_export", "from_jax", "hlo_dump_name",
           "hlo_module_name", "is_hlo_dump_name", "load", "looks_like_hlo", "raw_of", "read_path"]

DEFAULT_PASS_RE = "copy-insertion"
# Every constant's values in the dumps: without it XLA prints a large one as
# `constant({...})`, which its parser reads back as placeholder bits.
DUMP_OPTIONS = {"xla_dump_large_constants": True}

# Reports XLA writes beside the HLO dumps: text, but not HLO modules.
_NON_HLO_MARKERS = ("buffer-assignment", "memory-usage", "live-range")
# [prefix.]module_NNNN.<module name>.<suffix>.txt (or .hlo.pb: --xla_dump_hlo_as_proto)
_DUMP_NAME = re.compile(r"^(?:.*\.)?module_(?P<id>\d+)\.(?P<rest>.+)\.(?:txt|hlo\.pb)$")  # text, or proto
# Comments XLA's parser skips before a module: `// …` lines, `/* … */` blocks.
_COMMENTS = r"(?:\s*//[^\n]*(?:\n|$)|\s*/\*(?:[^*]|\*(?!/))*\*/)*"
_HEADER = re.compile(_COMMENTS + r"\s*HloModule\s+([^\s,]+)")
# The start of a module with no `HloModule` line (as XLA's unit tests write
# them): comments, then a computation's head.
_COMPUTATION_FIRST = re.compile(_COMMENTS + r"\s*(?:ENTRY\b|%?[A-Za-z_][\w.\-]*\s*(?:\([^\n]*\)\s*->[^\n]*)?\{)")
# Comments to the end of the text, the last maybe unclosed: the head of a module whose comments run past it.
_COMMENTS_ONLY = re.compile(_COMMENTS + r"\s*(?:/\*(?:[^*]|\*(?!/))*)?/?\Z")
_STEP = re.compile(r"^\d{4}\.")
_PRE_OPTIMIZATION_STAGE = "before_optimizations"


@dataclass(frozen=True)
class CapturedModule:
    """One HLO module dumped by XLA, as `pipeline.run` accepts it."""

    name: str       # f"{module name}:{stage}", no module_NNNN counter
    stage: str      # e.g. "copy-insertion.after_adding_copies_to_resolve_interference"
    hlo_text: str

    @functools.cached_property
    def edges(self) -> int:
        """Number of control edges (predecessor → successor pairs) in the module."""
        if "control-predecessors" not in self.hlo_text:
            return 0
        return len(parse(self.hlo_text, self.name).control_edges())

    def __repr__(self) -> str:
        return f"<CapturedModule {self.name}: {self.edges} control edge(s)>"


@dataclass
class Captured:
    """The HLO modules of one compilation (or one dump folder)."""

    modules: list[CapturedModule] = field(default_factory=list)   # those with control edges
    pre_optimization: CapturedModule | None = None                 # the before_optimizations module
    all: list[CapturedModule] = field(default_factory=list)       # every HLO module dumped

    @property
    def edges(self) -> int:
        """Control edges summed over `modules`."""
        return sum(m.edges for m in self.modules)

    def __getitem__(self, name: str) -> CapturedModule:
        for module in self.all:
            if module.name == name:
                return module
        raise KeyError(f"no captured module {name!r}; have: {', '.join(m.name for m in self.all)}")


# --------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------


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
        return _read_folder(folder, f"the dump of {label}")


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
    return _read_folder(folder, folder)


# --------------------------------------------------------------------------
# Reading dumps
# --------------------------------------------------------------------------


def hlo_module_name(text: str) -> str | None:
    """The name after `HloModule` if `text` starts with that line (after
    comments, as XLA's parser reads it), else None."""
    header = _HEADER.match(text)
    return header.group(1) if header else None


def looks_like_hlo(text: str) -> bool:
    """Whether `text` starts as an HLO module does, after any comments
    (XLA's parser skips them, however long): its `HloModule` line, or a
    computation's head (`ENTRY …`, `%name (…) -> … {`); or it is comments
    to its end, as the head of a module whose comments run past it is
    (XLA's parser judges the whole). XLA's reports beside the dumps (buffer
    assignment, memory usage) do not."""
    return (_HEADER.match(text) is not None or _COMPUTATION_FIRST.match(text) is not None
            or (bool(text.strip()) and _COMMENTS_ONLY.match(text) is not None))


def is_hlo_dump_name(file_name: str) -> bool:
    """True if a dump file name may denote an HLO module (not a report, not LLVM IR)."""
    return (file_name.endswith(".txt") and _DUMP_NAME.match(file_name) is not None
            and not any(marker in file_name for marker in _NON_HLO_MARKERS))


class DumpName(NamedTuple):
    module_id: int  # the NNNN of `module_NNNN`: one compilation in its folder
    stage: str      # `cpu_after_optimizations`, `copy-insertion.after_adding_copies`, … (no pass counter)


def hlo_dump_name(file_name: str, module_name: str | None = None) -> DumpName | None:
    """What XLA's dump name `[prefix.]module_NNNN.<module>.[NNNN.]<stage>.txt`
    (or `.hlo.pb`, the same stage as a proto) says (`module_name`, the name after `HloModule`, tells where the module's
    name ends if it has dots); None for any other name."""
    match = _DUMP_NAME.match(os.path.basename(file_name))
    if match is None:
        return None
    return DumpName(int(match.group("id")), _stage(match.group("rest"), module_name))


def _read_folder(folder: str, where: str) -> Captured:
    found = []  # (module id, file name, module name, stage, text)
    names = set(os.listdir(folder))
    for file_name in sorted(names):
        if file_name.endswith(".hlo.pb") and file_name[:-len(".hlo.pb")] + ".txt" not in names:
            module = _dumped_proto(os.path.join(folder, file_name))  # dumped as a proto alone
            if module is not None:
                match = _DUMP_NAME.match(file_name)
                found.append((int(match.group("id")), file_name, module[0],
                              _stage(match.group("rest"), module[0]), module[1]))
            continue
        if not is_hlo_dump_name(file_name):
            continue
        with open(os.path.join(folder, file_name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        header = _HEADER.match(text)
        if header is None:
            continue  # a text file that is no HLO module
        match = _DUMP_NAME.match(file_name)
        module_name = header.group(1)
        found.append((int(match.group("id")), file_name, module_name,
                      _stage(match.group("rest"), module_name), text))
    if not found:
        raise ValueError(f"{where}: no HLO module dumps (module_NNNN.<name>.<stage>.txt or .hlo.pb) found: "
                         f"give a folder written by XLA with --xla_dump_to (and --xla_dump_hlo_pass_re)")
    found.sort(key=lambda item: (item[0], _order(item[3]), item[1]))
    captured = Captured()
    seen: dict[str, int] = {}
    # Different compilations of one module name (module ids) are told apart by
    # an ordinal; the first one keeps the plain name, so goldens stay stable.
    ordinal_of_id: dict[tuple[str, int], int] = {}
    for module_id, _, module_name, stage, text in found:
        key = (module_name, module_id)
        if key not in ordinal_of_id:
            ordinal_of_id[key] = sum(1 for (n, _) in ordinal_of_id if n == module_name)
        ordinal = ordinal_of_id[key]
        base = module_name if ordinal == 0 else f"{module_name}#{ordinal}"
        name = f"{base}:{stage}"
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:  # the same pass dumped twice in one compilation
            name = f"{name}#{seen[name] - 1}"
        module = CapturedModule(name=name, stage=stage, hlo_text=text)
        captured.all.append(module)
        if stage == _PRE_OPTIMIZATION_STAGE and captured.pre_optimization is None:
            captured.pre_optimization = module
        if module.edges:
            captured.modules.append(module)
    return captured


def _dumped_proto(path: str) -> tuple[str, str] | None:
    """(module name, XLA's printing) of the module in an `*.hlo.pb` dump
    (`--xla_dump_hlo_as_proto` without `--xla_dump_hlo_as_text`), or None
    if it holds none: a CapturedModule is text, as XLA prints it from the
    proto (its names the proto's)."""
    if _DUMP_NAME.match(os.path.basename(path)) is None:
        return None
    from pipeline.chain.binary import read_binary
    from pipeline.xla.isolated import print_module

    try:
        module = read_binary(read_path(path), path)
        return module.proto.name, print_module(module.module, path, isolate=True)
    except ChainError:  # a broken dump, or no module: as a text file that is no HLO module
        return None


def _stage(rest: str, module_name: str | None) -> str:
    """`jit_f.0001.copy-insertion.after_x` → `copy-insertion.after_x`."""
    for candidate in (module_name, _sanitize(module_name)) if module_name else ():
        if rest.startswith(candidate + "."):
            rest = rest[len(candidate) + 1:]
            break
    else:  # a renamed or truncated file name: the module name is the first dotted word
        rest = rest.split(".", 1)[1] if "." in rest else rest
    return _STEP.sub("", rest)


def _order(stage: str) -> int:
    """Dump order within one compilation: before, the passes, after."""
    if stage == _PRE_OPTIMIZATION_STAGE:
        return 0
    if stage.endswith("after_optimizations"):
        return 2
    return 1


def _sanitize(name: str) -> str:
    return re.sub(r"[/\\\[\] ]", "_", name)


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
    if data.lstrip().startswith(b"HloModule"):
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


class UnreadableInput(ChainError, OSError):
    """A path that cannot be read: `cannot read input 'PATH': REASON`, with
    the errno, strerror and filename of the OSError behind it."""

    def __init__(self, path: str, reason: OSError):
        super().__init__(f"cannot read input '{path}': {reason.strerror}")
        self.errno, self.strerror, self.filename = reason.errno, reason.strerror, path


def read_path(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise UnreadableInput(path, err) from None


@dataclass
class Loaded:
    """An input, read: XLA's parse of it (`Parsed`), its name, the name
    errors give the input, and the text read (None for a binary input:
    `binary` is what it held)."""

    parsed: Parsed
    name: str
    where: str
    text: str | None
    binary: object = None  # a pipeline.chain.binary.BinaryModule


def raw_of(source, source_name: str | None = None) -> tuple[str | bytes, str, str | None]:
    """(data, where, name) of a path, HLO text or binary (str or bytes) or a
    captured module, as `text_of`, with a file's or a bytes input's bytes undecoded."""
    if names_a_file(source):
        path = os.fspath(source)
        return read_path(path), source_name or path, path
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), source_name or "<hlo input>", None
    if isinstance(source, str):
        return source, source_name or "<hlo text>", None
    text = getattr(source, "hlo_text", None)  # a CapturedModule
    if isinstance(text, str):
        name = getattr(source, "name", "<captured>")
        return text, source_name or name, name
    raise TypeError(f"cannot read HLO from {type(source).__name__}: give a path, HLO text or a captured module "
                    f"(or the bytes of a binary module: a proto, a jax.export artifact)")


def text_of(source, source_name: str | None = None) -> tuple[str, str, str | None]:
    """(text, where, name) of a path, HLO text (str or bytes) or a captured
    module: the text decoded (`pipeline.reading.text.decode`), `where` the name
    errors give the input, `name` the module's name if the input gives one.
    A binary input (`pipeline.chain.binary`) is the text of the module it holds
    as XLA prints it, or of the module a jax.export artifact compiles to."""
    data, where, name = raw_of(source, source_name)
    if isinstance(data, bytes) and data.strip():
        from pipeline.chain import binary

        kind = binary.sniff(data)
        if kind == "proto":
            from pipeline.xla.native import print_proto

            return print_proto(binary.read_binary(data, where).module), where, name
        if kind == "jax.export":
            module = export_module(data, where)
            return module.hlo_text, where, name or module.name
    if isinstance(data, bytes) and where == "<hlo input>":
        where = source_name or "<hlo text>"
    return decode(data, where), where, name


def load(source, source_name: str | None = None, *, isolate: bool = True, worker=None) -> Loaded:
    """A path, HLO text (str or bytes), a binary module (bytes, or a path:
    `pipeline.chain.binary`) or a captured module, read by XLA (in a child
    process with `isolate`: `worker`, or one started here). A str is a path
    unless it reads as HLO (a line break, or a `{`: every module has a
    computation body). A proto is XLA's module as it is, its names the
    proto's; a jax.export artifact is the module `binary.export_module`
    picks. `source_name` names the input in errors."""
    data, where, name = raw_of(source, source_name)
    if isinstance(data, bytes) and data.strip():
        from pipeline.chain import binary

        kind = binary.sniff(data)
        if kind == "proto":
            from pipeline.xla.isolated import read_proto

            found = binary.read_binary(data, where)
            read_proto(found.module, where, isolate=isolate, worker=worker)  # XLA's verdict on it
            parsed = Parsed.from_serialized(found.module, None, where)
            return Loaded(parsed, name or parsed.proto.name, where, None, found)
        if kind == "jax.export":
            module = export_module(data, where)
            data, name = module.hlo_text, name or module.name
    if isinstance(data, bytes) and where == "<hlo input>":
        where = source_name or "<hlo text>"
    text = decode(data, where)
    parsed = parse(text, where, isolate=isolate, worker=worker)
    return Loaded(parsed, name or parsed.proto.name, where, text)


# -- a jax.export artifact, and binary modules for the verifier ----------------------


def export_modules(data: bytes, where: str) -> Captured:
    """Every module a jax.export artifact compiles to (`from_export`, on the
    CPU: XLA's dumps through copy insertion); its refusals as
    `binary.BadBinary`, naming `where`."""
    from pipeline.chain.binary import BadBinary

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


def parsed_if_binary(hlo, source: str | None, *, isolate: bool = True):
    """For `pipeline.verify`: XLA's reading (a `Parsed`) of `hlo` (bytes, or
    a path) if it holds a binary module (a proto, a jax.export artifact);
    else `hlo` as it is, for the verifier's text path."""
    from pipeline.chain import binary

    if isinstance(hlo, (bytes, bytearray)):
        data, where = bytes(hlo), source or "<hlo input>"
    elif names_a_file(hlo) and os.path.isfile(os.fspath(hlo)):
        data, where = read_path(os.fspath(hlo)), source or os.fspath(hlo)
    else:
        return hlo
    if not data.strip() or binary.sniff(data) == "text":
        return hlo
    return load(data, where, isolate=isolate).parsed
