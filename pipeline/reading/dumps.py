"""What XLA writes with `--xla_dump_to`: the names of its dump files (the
module, the compilation, the stage), the stages it dumps twice (as text and
proto; a compiled module again as snapshots of its runs), and a folder's
modules as a `Captured`.

A module's name is `f"{HLO module name}:{stage}"`, where the stage is the
dump file name after the module name without XLA's counters
(`jit_f:copy-insertion.after_adding_copies_to_resolve_interference`): the
`module_NNNN` id depends on compile order and must not leak into goldens.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from passes.errors import ChainError
from pipeline.reading.lexical import CONTROL_PREDECESSORS, hlo_module_name
from pipeline.reading.text import read_path
from pipeline.xla.isolated import parse

__all__ = ["Captured", "CapturedModule", "DumpName", "hlo_dump_name", "is_hlo_dump_name", "read_folder",
           "snapshot_id", "twins"]

# Reports XLA writes beside the HLO dumps: text, but not HLO modules.
_NON_HLO_MARKERS = ("buffer-assignment", "memory-usage", "live-range")
# [prefix.]module_NNNN.<module name>.<suffix>.txt (or .hlo.pb: --xla_dump_hlo_as_proto)
_DUMP_NAME = re.compile(r"^(?:.*\.)?module_(?P<id>\d+)\.(?P<rest>.+)\.(?:txt|hlo\.pb)$")  # text, or proto
# Comments XLA's parser skips before a module: `// …` lines, `/* … */` blocks.
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
        if CONTROL_PREDECESSORS not in self.hlo_text:
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
# Dump names
# --------------------------------------------------------------------------


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


# [prefix.]module_NNNN.<module>.snapshot.<run>.pb: XLA's HloSnapshot of one run of a compiled module
_SNAPSHOT = re.compile(r"^(?:.*\.)?module_(?P<id>\d+)\..+\.snapshot\.-?\d+\.pb$")
_AFTER_OPTIMIZATIONS = re.compile(r"^(?:.*\.)?module_(?P<id>\d+)\..*after_optimizations\.(?:txt|hlo\.pb)$")


def snapshot_id(path: str) -> int | None:
    """The module id of an HloSnapshot's dump name (`module_NNNN.<module>.snapshot.<run>.pb`), else None."""
    match = _SNAPSHOT.match(os.path.basename(path))
    return int(match.group("id")) if match else None


def twins(paths: list[str]) -> dict[str, str]:
    """{file: the file checked in its place}: a stage's `*.hlo.pb` where its
    `*.txt` is there too (XLA dumped both); an HloSnapshot (the module XLA
    compiled, and ran) where its compilation's after_optimizations dump is
    there, or another snapshot of it is (the same module, other arguments)."""
    real = {os.path.realpath(p): p for p in paths}
    compiled: dict[tuple[str, str], str] = {}  # (folder, module id) → its after_optimizations dump (the .txt first)
    for p in sorted(paths, key=lambda p: not p.endswith(".txt")):
        m = _AFTER_OPTIMIZATIONS.match(os.path.basename(p))
        if m:
            compiled.setdefault((os.path.dirname(os.path.realpath(p)), m.group("id")), p)
    twins = {}
    for p in paths:
        r = os.path.realpath(p)
        if r.endswith(".hlo.pb") and r[:-len(".hlo.pb")] + ".txt" in real:
            twins[p] = real[r[:-len(".hlo.pb")] + ".txt"]
            continue
        m = _SNAPSHOT.match(os.path.basename(p))
        if m:
            key = (os.path.dirname(r), m.group("id"))
            if key in compiled:
                twins[p] = compiled[key]
            else:
                compiled[key] = p  # the first snapshot of its compilation is checked
    return twins



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


# --------------------------------------------------------------------------
# A folder's modules
# --------------------------------------------------------------------------


def read_folder(folder: str, where: str) -> Captured:
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
        module_name = hlo_module_name(text)
        if module_name is None:
            continue  # a text file that is no HLO module
        match = _DUMP_NAME.match(file_name)
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
    from pipeline.reading.binary import read_binary
    from pipeline.xla.isolated import print_module

    try:
        module = read_binary(read_path(path), path)
        return module.proto.name, print_module(module.module, path, isolate=True)
    except ChainError:  # a broken dump, or no module: as a text file that is no HLO module
        return None


