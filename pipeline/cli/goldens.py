"""`regress`'s goldens: what a record keeps, how a run compares with it, and
what a regression row prints to explain itself.

`goldens/<name>.json` holds, per module and dialect, a record: the edge
report as the verifier judged it (`judged`: without the names the report
gives the blocks, which are the program's), a SHA-256 of the Penguin program, the jax that wrote it (`"jax"`),
and `"program"`, the path (under `goldens/`) of the Penguin program itself,
`<name>/<stage>.<dialect>.py`, a text file a pull request shows line by line.
Another jax release keeps under `"by_jax"` only the fields its XLA changed
(the hash, never a program file), so its diff is against the record's
program, with a line saying which jax wrote it.

A changed row explains itself with each edge whose fate changed (`%body:
%copy.3 -> %add.1: preserved → lost at link #2`) and a unified diff of the
Penguin program against the golden's.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re

from pipeline.xla import versions

GOLDEN_FIELDS = ("report", "penguin_sha256")  # what a run is compared on
SOURCE = "penguin"  # a fresh record's program text, written to its file by write_golden, never into the JSON
NAMES = ("block",)  # what a report's edge says of its block's name: the program's, whose hash the record keeps


def judged(report: dict) -> dict:
    """A report as a golden keeps it and a run is compared with it: what the
    verifier judged, without the names its edges give their blocks (`NAMES`:
    those are the program's, and a changed program shows in its hash)."""
    def bare(edge: dict) -> dict:
        return {k: v for k, v in edge.items() if k not in NAMES}

    return {**report, **{part: [bare(e) for e in report[part]] for part in ("edges", "spurious") if part in report}}


def program_path(name: str, module: str, dialect: str) -> str:
    """The program file of a record, relative to `goldens/`: the module's
    stage (its name without `jit_<name>:`), in characters every file system takes."""
    prefix = f"jit_{name}:"
    stage = module[len(prefix):] if module.startswith(prefix) else module
    return f"{name}/{re.sub(r'[^A-Za-z0-9_.-]', '_', stage)}.{dialect}.py"


def record_of(name: str, module: str, dialect: str, report: dict, source: str) -> dict:
    """This run's record of one row, with its program text (for write_golden)."""
    return {"report": report, "penguin_sha256": hashlib.sha256(source.encode()).hexdigest(),
            "program": program_path(name, module, dialect), SOURCE: source}


def expected(old: dict) -> dict:
    """What a golden record expects of this jax: its own fields, with what
    this release's XLA changed in their place."""
    return {**{k: old[k] for k in GOLDEN_FIELDS}, **old.get("by_jax", {}).get(versions.JAX, {})}


def updated(old: dict | None, record: dict) -> dict:
    """The golden record once this run's `record` is written into it."""
    record = {**record, "report": judged(record["report"])}
    if old is None or old.get("jax", versions.JAX) == versions.JAX:
        new = {**record, "jax": versions.JAX}
        if old and old.get("by_jax"):
            new["by_jax"] = old["by_jax"]
        return new
    # Another release's run: the record and its program file stay the record jax's.
    new = {k: v for k, v in old.items() if k != "by_jax"}
    by_jax = {v: d for v, d in old.get("by_jax", {}).items() if v != versions.JAX}
    changed = {k: record[k] for k in GOLDEN_FIELDS if record[k] != old[k]}
    if changed:
        by_jax[versions.JAX] = changed
    if by_jax:
        new["by_jax"] = by_jax
    return new


def compare(golden: dict | None, old: dict | None, record: dict) -> str:
    if golden is None or old is None:
        return "missing"
    want = expected(old)
    if judged(want["report"]) != judged(record["report"]):
        return "changed: edge report"
    if want["penguin_sha256"] != record["penguin_sha256"]:
        return "changed: penguin program"
    return "ok"


def fate_changes(before: dict, after: dict) -> list[str]:
    """Each edge whose fate differs between two reports (`as_dict`), one line
    each, `%comp: %a -> %b: before → after`; an edge only one report has
    is `absent` in the other; spurious dep edges likewise."""
    def fates(report: dict) -> dict:
        found = {(e["computation"], e["predecessor"], e["successor"]):
                 e["fate"] + (f" at {e['lost_at']}" if e.get("lost_at") else "") for e in report.get("edges", [])}
        found.update({(s["computation"], s["predecessor"], s["successor"]): "spurious"
                      for s in report.get("spurious", []) if (s["computation"], s["predecessor"], s["successor"])
                      not in found})
        return found

    old, new = fates(before), fates(after)
    lines = []
    for key in sorted(set(old) | set(new), key=lambda k: tuple(str(p) for p in k)):
        was, now = old.get(key, "absent"), new.get(key, "absent")
        if was != now:
            computation, predecessor, successor = key
            where = f"%{computation}: " if computation else ""
            lines.append(f"{where}%{predecessor} -> %{successor}: {was} → {now}")
    return lines


def program_diff(old: dict, record: dict, golden_programs: dict[str, str] | None) -> str:
    """A unified diff of this run's program against the golden's, or a line
    saying why there is none (`golden_programs` None: the caller read none)."""
    path = old.get("program")
    if golden_programs is None and path:
        return f"no diff: goldens/{path} was not read (pipeline.cli.goldens.read_programs reads it)\n"
    golden_programs = golden_programs or {}
    text = golden_programs.get(path) if path else None
    if text is None:
        return (f"the golden keeps no program text{f' (goldens/{path} is missing)' if path else ''}, "
                "only its hash: nothing to diff\n")
    note = ""
    if old.get("jax", versions.JAX) != versions.JAX:
        note = (f"the golden program is jax {old['jax']}'s (this run is jax {versions.JAX}'s, whose goldens keep "
                "only a hash)\n")
    diff = difflib.unified_diff(text.splitlines(keepends=True), record[SOURCE].splitlines(keepends=True),
                                f"goldens/{path} (jax {old.get('jax', versions.JAX)})", f"this run (jax {versions.JAX})")
    return note + "".join(line if line.endswith("\n") else line + "\n" for line in diff)


def read_programs(directory: str, golden: dict | None) -> dict[str, str]:
    """The program files a program's golden records name (path → text),
    read here so a worker needs no corpus folder; a missing one is left out."""
    found = {}
    for dialects in (golden or {}).values():
        for record in dialects.values():
            path = record.get("program") if isinstance(record, dict) else None
            if path and path not in found:
                try:
                    with open(os.path.join(directory, "goldens", path), encoding="utf-8") as f:
                        found[path] = f.read()
                except OSError:
                    pass
    return found


def write_programs(directory: str, name: str, records: dict) -> None:
    """Each record's program text to its file (taken out of the record), and
    the program files no record names any more removed."""
    folder = os.path.join(directory, "goldens", name)
    named = set()
    for dialects in records.values():
        for record in dialects.values():
            source = record.pop(SOURCE, None)
            if record.get("program"):
                named.add(os.path.basename(record["program"]))
            if source is not None:
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(directory, "goldens", record["program"]), "w", encoding="utf-8") as f:
                    f.write(source)
    if os.path.isdir(folder):
        for stale in set(os.listdir(folder)) - named:
            if stale.endswith(".py"):
                os.remove(os.path.join(folder, stale))
