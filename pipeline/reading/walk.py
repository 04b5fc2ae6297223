"""The modules under the files and folders a user names (`hlo2penguin
check PATH...`): the candidates (the files named, and the `*.txt` / `*.hlo`
/ `*.pb` / `*.jaxexport` files under each folder, recursively, in sorted
order), each told apart by its content (`source.kind_of`), the ones that
are HLO modules with control edges, and the ones skipped.

A text file whose first line (past comments, however long) is neither
`HloModule …` nor the head of a computation (`pipeline.reading.lexical`), or
is MLIR, is not HLO unless XLA's parser reads it; nor is a proto of another
message (XLA's reports and options beside its dumps). In a folder such a file
is skipped; named, it is bad input (`BadPath`: one line, XLA's words and
what to give). A stage dumped twice is taken once (`dumps.twins`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from passes.errors import ChainError, first_line
from pipeline.reading.dumps import hlo_dump_name, snapshot_id, twins
from pipeline.reading.hints import MLIR_FOR_HLO, looks_like_mlir
from pipeline.reading.lexical import CONTROL_PREDECESSORS, after_comments, hlo_module_name, looks_like_hlo
from pipeline.reading.source import kind_of
from pipeline.reading.text import decode, read_path

__all__ = ["BadPath", "Candidate", "find_modules", "input_files"]

SUFFIXES = (".txt", ".hlo", ".pb", ".jaxexport")  # text; XLA's *.hlo.pb and snapshots; jax.export artifacts


class BadPath(ChainError):
    """A path given that is not there, not a file or a folder, unreadable,
    or a file named that is no module: one line, exit status 2."""


@dataclass(frozen=True)
class Candidate:
    path: str
    module: str  # the name after `HloModule`
    stage: str | None = None  # the stage XLA's dump name says
    compilation: tuple = ()
    data: str | None = None  # the module's text, where the file holds several (a jax.export artifact)


def _bad_path(path: str, reason: str) -> BadPath:
    return BadPath(f"cannot read input '{path}': {reason}; give HLO text files or XLA dump folders (--xla_dump_to)")


def input_files(paths) -> list[tuple[str, bool]]:
    """(path, named by the user) of each candidate: the files named, and the
    files with a candidate's suffix under each folder, in sorted order.
    BadPath for a path that does not exist, is not a file or a folder,
    or cannot be read."""
    files: list[tuple[str, bool]] = []
    for path in map(os.fspath, paths):
        if os.path.isdir(path):
            found = []

            def unreadable(err: OSError) -> None:
                raise _bad_path(err.filename or path, err.strerror or str(err))

            for folder, _, names in os.walk(path, onerror=unreadable):
                found += [os.path.join(folder, n) for n in names if n.endswith(SUFFIXES)]
            files += [(f, False) for f in sorted(found)]
        elif os.path.isfile(path):
            files.append((path, True))  # named: a candidate whatever its suffix
        elif os.path.exists(path):
            raise _bad_path(path, "not a file or a folder")  # a fifo, a device: nothing to read twice
        else:
            raise _bad_path(path, "No such file or directory")
    return files


def find_modules(paths) -> tuple[list[Candidate], int, int, list[tuple[str, str]]]:
    """The HLO modules with control edges under `paths`, how many
    candidates were skipped as not HLO and as without control edges, and the
    twins not checked again (`dumps.twins`: (file, the file checked)) (no
    module at all is not an error: the caller says there is nothing to
    check). BadPath for a path that does not exist, is not a file or a
    folder, or cannot be read, and for a file named that is not HLO."""
    files = input_files(paths)
    modules, not_hlo, no_edges, seen = [], 0, 0, set()
    skipped = twins([path for path, _ in files])
    for path, named in files:
        if os.path.realpath(path) in seen:  # named twice, or a file inside a folder also named
            continue
        seen.add(os.path.realpath(path))
        if path in skipped:  # the same module as a file checked (a stage as text and as proto, a snapshot)
            continue
        data = read_path(path)
        kind = kind_of(data)
        if kind != "text":
            found = _binary_candidates(path, data, kind, named)
            if found is None:
                not_hlo += 1
            elif not found:
                no_edges += 1
            modules += found or []
            continue
        if named and not _is_text(data):  # empty, or not UTF-8: the chain says why, on its row
            modules.append(Candidate(path, os.path.basename(path), compilation=(path,)))
            continue
        head = after_comments(data.decode("utf-8", "replace"))[:4096]
        # `module {` reads as a computation's head too: MLIR goes to XLA's parser, which refuses it
        if (looks_like_mlir(head) or not looks_like_hlo(head)) and not _xla_reads(path, data, named):
            not_hlo += 1
        elif CONTROL_PREDECESSORS.encode() not in data:
            no_edges += 1
        else:
            module = hlo_module_name(head)
            dump = hlo_dump_name(path, module)
            compilation = (os.path.dirname(os.path.realpath(path)), dump.module_id) if dump else (path,)
            modules.append(Candidate(path, module or os.path.basename(path), dump and dump.stage, compilation))
    return modules, not_hlo, no_edges, sorted(skipped.items())



def _xla_reads(path: str, data: bytes, named: bool) -> bool:
    """XLA's parser's verdict on a text that does not start as a module does:
    whether it reads it. A file named that it refuses is a BadPath: one
    line, XLA's words and what to give instead."""
    from pipeline.xla.isolated import parse

    text = data.decode("utf-8", "replace")
    try:
        parse(text, path, isolate=True)  # in a child: XLA's parser aborts its process on some inputs
        return True
    except ChainError as err:
        if not named:
            return False
        hint = MLIR_FOR_HLO if looks_like_mlir(text) else (
            "not an HLO module (it starts with neither `HloModule` nor a computation): give HLO text files, "
            "XLA's *.hlo.pb or snapshots, jax.export artifacts, or XLA dump folders (--xla_dump_to)")
        raise BadPath(f"{first_line(err)}; {hint}") from None




def _binary_candidates(path: str, data: bytes, kind: str, named: bool) -> list[Candidate] | None:
    """The modules with control edges in a binary file (empty: none has
    any); None for a file in a folder that holds no module (XLA's other
    *.pb: options, memory-usage reports), BadBinary for such a file named.
    A module's proto that is broken is an error row: the chain says why."""
    from pipeline.reading.binary import BadBinary, read_binary
    from pipeline.reading.capture import export_modules

    where = os.path.dirname(os.path.realpath(path))
    try:
        if kind == "jax.export":
            captured = export_modules(data, path)
            return [Candidate(path, m.name.split(":", 1)[0], m.stage, (path,), m.hlo_text)
                    for m in captured.modules]
        found = read_binary(data, path)
    except ChainError as err:
        if isinstance(err, BadBinary) and not err.broken:  # another message: not a module at all
            if named:
                raise  # one line: what it is, and what to give instead
            return None
        return [Candidate(path, os.path.basename(path), compilation=(path,))]  # broken: the chain says why
    if not found.control_edges:
        return []
    name = found.proto.name
    dump = hlo_dump_name(path, name) if path.endswith(".hlo.pb") else None
    snapshot = snapshot_id(path)
    if dump is not None:
        return [Candidate(path, name, dump.stage, (where, dump.module_id))]
    if snapshot is not None:
        return [Candidate(path, name, "snapshot", (where, snapshot))]
    return [Candidate(path, name, compilation=(path,))]


def _is_text(data: bytes) -> bool:
    try:
        decode(data)
        return True
    except ChainError:  # not UTF-8, a byte-order mark, empty
        return False

