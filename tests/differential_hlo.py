"""XLA's parser against the chain, on seeded mutations of the corpus.

    python tests/differential_hlo.py --mutants 2000 --seed 0 --jobs 2 [--json OUT] [--show 3]

Each mutant is one small edit of a module from tests/xla_style/ or
tests/pipeline_dumps/ (a character deleted, a token inserted, a line
duplicated or deleted, a name replaced by another of the module's, a shape
dropped, a comment put where XLA allows whitespace). Its verdicts:
- XLA's: `hlo_module_from_text` accepts it, refuses it (at `line:column`),
  or aborts the process; or accepts it but refuses its own proto of it
  (`from_serialized_hlo_module_proto`: a pipelined recv-done that reads its
  recv through a loop's tuple), the form link #1 edits;
- the chain's, as `hlo2penguin FILE --emit hlo` gives it (read, link #1,
  write, XLA's check of the output): accepted, refused with a ChainError,
  or an internal error.
They agree when both accept, or both refuse and the chain's one line names
the file and a position (`mutant.hlo:L:C: …`). Every other pair is a
disagreement, counted by class and shown with the edit that made it.

Mutants run in worker processes (spawned), with XLA in the same process:
a mutant on which XLA aborts kills its worker, which is replaced, and the
chain then runs on it in its isolated form (XLA in a child process).
XLA's parser is the chain's one reader of HLO, so every disagreement is a
bug in how the chain carries XLA's verdict (tests/reading/test_xla_verdict.py runs
a sample of it in the suite).
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import random
import re
import sys
from pathlib import Path

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS.parent))  # the tree this script is in, not an installed copy (workers inherit it)
SOURCE = "mutant.hlo"
_POSITION = re.compile(rf"^{re.escape(SOURCE)}:\d+(?::\d+)?: ")
_NAME = re.compile(r"%?([A-Za-z_][A-Za-z0-9_.\-]*)\s*=")
_SHAPE_AFTER_EQ = re.compile(r"= (?:[a-z][a-z0-9]*\[[^\]]*\](?:\{[^}]*\})?|\([^()=]*\)) (?=[a-z])")
_TOKENS = [",", "}", "{", "(", ")", "%", "=", " ", "\n", "ROOT ", "/* c */", "// c\n", "#0", "x", "0"]


def corpus() -> list[tuple[str, str]]:
    files = sorted([*TESTS.glob("xla_style/*.hlo"), *TESTS.glob("pipeline_dumps/*.hlo")])
    return [(f.name, f.read_text()) for f in files]


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """One edit of `text`, and what it was."""
    lines = text.split("\n")
    kind = rng.choice(["delete char", "insert token", "duplicate line", "delete line", "rename",
                       "drop shape", "comment"])
    if kind == "delete char":
        i = rng.randrange(len(text))
        return text[:i] + text[i + 1:], f"deleted {text[i]!r} at offset {i}"
    if kind == "insert token":
        i, token = rng.randrange(len(text) + 1), rng.choice(_TOKENS)
        return text[:i] + token + text[i:], f"inserted {token!r} at offset {i}"
    if kind in ("duplicate line", "delete line"):
        i = rng.randrange(len(lines))
        if kind == "duplicate line":
            return "\n".join(lines[:i + 1] + lines[i:]), f"duplicated line {i + 1}"
        return "\n".join(lines[:i] + lines[i + 1:]), f"deleted line {i + 1}"
    if kind == "rename":
        names = sorted({m.group(1) for m in _NAME.finditer(text)})
        spots = [m for m in re.finditer(r"%([A-Za-z_][A-Za-z0-9_.\-]*)", text)]
        if len(names) > 1 and spots:
            spot, new = rng.choice(spots), rng.choice(names)
            return text[:spot.start(1)] + new + text[spot.end(1):], f"%{spot.group(1)} → %{new} at offset {spot.start()}"
    if kind == "drop shape":
        spots = list(_SHAPE_AFTER_EQ.finditer(text))
        if spots:
            spot = rng.choice(spots)
            return text[:spot.start()] + "= " + text[spot.end():], f"dropped the shape at offset {spot.start()}"
    spaces = [m.start() for m in re.finditer(r"[ \n]", text)] or [0]
    i = rng.choice(spaces)
    return text[:i] + " /* } ) , */ " + text[i:], f"a comment at offset {i}"


def verdicts(text: str) -> tuple[str, str, str]:
    """(XLA's verdict, the chain's, the chain's message): in this process."""
    import jaxlib._hlo as xla_hlo

    try:
        module = xla_hlo.hlo_module_from_text(text)
    except Exception:
        xla = "refuse"
    else:  # link #1 edits XLA's proto of the text: XLA must read its own proto back (it does not, always)
        try:
            xla_hlo.HloModule.from_serialized_hlo_module_proto(module.as_serialized_hlo_module_proto())
            xla = "accept"
        except Exception:
            xla = "refuse proto"
    chain, said = chain_verdict(text, isolate=False)
    return xla, chain, said


def chain_verdict(text: str, isolate: bool) -> tuple[str, str]:
    import pipeline
    from passes.errors import ChainError

    try:
        pipeline.run(text, source_name=SOURCE, stop_after="link #1", isolate=isolate)
        return "accept", ""
    except ChainError as err:
        return "refuse", str(err)
    except RecursionError as err:
        return "internal", f"RecursionError: {err}"
    except Exception as err:  # a bug in the chain
        return "internal", f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def _worker(connection) -> None:
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    while True:
        text = connection.recv()
        if text is None:
            return
        connection.send(verdicts(text))


def classify(xla: str, chain: str, said: str) -> str | None:
    if chain == "internal":
        return "internal error"
    if xla in ("abort", "refuse proto"):  # XLA gives no position then: the file is all a line can name
        if chain == "accept":
            return "XLA aborts, the chain accepts" if xla == "abort" else "XLA refuses its proto, the chain accepts"
        return None if said.startswith(f"{SOURCE}:") and "\n" not in said.strip() else "message: no file and position"
    if xla == chain == "accept":
        return None
    if xla == "refuse" and chain == "accept":
        return "XLA refuses, the chain accepts"
    if xla == "accept" and chain == "refuse":
        return "XLA accepts, the chain refuses"
    if "\n" in said.strip() or not _POSITION.match(said):
        return "message: no file and position"
    return None


def make_mutants(count: int, seed: int) -> list[tuple[str, str, str]]:
    """`count` distinct (module, edit, mutated text), drawn with `seed`."""
    rng = random.Random(seed)
    modules = corpus()
    mutants, seen = [], set()
    while len(mutants) < count:
        name, text = rng.choice(modules)
        mutated, edit = mutate(text, rng)
        if mutated not in seen and mutated != text:
            seen.add(mutated)
            mutants.append((name, edit, mutated))
    return mutants


def judge(mutants: list[tuple[str, str, str]], jobs: int = 2, progress: bool = False) -> list[tuple[str, str, str]]:
    """(XLA's verdict, the chain's, the chain's message) for every mutant, in order."""
    context = multiprocessing.get_context("spawn")
    workers: list = [None] * jobs
    processes: list = [None] * jobs

    def start(k):
        parent, child = context.Pipe()
        p = context.Process(target=_worker, args=(child,), daemon=True)
        p.start()
        workers[k], processes[k] = (parent, child), p

    for k in range(jobs):
        start(k)
    results: list = [None] * len(mutants)
    pending = list(range(len(mutants)))[::-1]
    busy: dict[int, int] = {}
    from multiprocessing.connection import wait
    while pending or busy:
        for k in range(jobs):
            if k not in busy and pending:
                i = pending.pop()
                workers[k][0].send(mutants[i][2])
                busy[k] = i
        ready = wait([workers[k][0] for k in busy] + [processes[k].sentinel for k in busy])
        for k in list(busy):
            conn = workers[k][0]
            i = busy[k]
            if conn in ready and conn.poll():
                results[i] = conn.recv()
                del busy[k]
            elif processes[k].sentinel in ready and not processes[k].is_alive():
                chain, said = chain_verdict(mutants[i][2], isolate=True)  # XLA aborted: the chain, isolated
                results[i] = ("abort", chain, said)
                del busy[k]
                start(k)
        done = sum(r is not None for r in results)
        if progress and (sys.stderr.isatty() or done % 500 == 0):
            sys.stderr.write(f"\r{done}/{len(mutants)}")
    if progress:
        sys.stderr.write("\n")
    for k in range(jobs):
        try:
            workers[k][0].send(None)
        except OSError:
            pass
        processes[k].join(timeout=10)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--show", type=int, default=3, help="examples shown per class")
    parser.add_argument("--json", help="write every disagreement here")
    args = parser.parse_args(argv)
    mutants = make_mutants(args.mutants, args.seed)
    results = judge(mutants, args.jobs, progress=True)
    classes: dict[str, list] = collections.defaultdict(list)
    verdict_counts = collections.Counter()
    for (name, edit, text), (xla, chain, said) in zip(mutants, results):
        verdict_counts[(xla, chain)] += 1
        found = classify(xla, chain, said)
        if found:
            classes[found].append({"module": name, "edit": edit, "xla": xla, "chain": chain, "said": said})
    agree = len(mutants) - sum(map(len, classes.values()))
    print(f"{len(mutants)} mutants (seed {args.seed}): {agree} agree, {len(mutants) - agree} disagree")
    print("verdicts (XLA, chain): " + ", ".join(f"{x}/{c} {n}" for (x, c), n in sorted(verdict_counts.items())))
    for cls, found in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"  {cls}: {len(found)}")
        for example in found[:args.show]:
            print(f"    {example['module']}: {example['edit']}: {example['said'][:150] or '(accepted)'}")
    if args.json:
        Path(args.json).write_text(json.dumps(classes, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
