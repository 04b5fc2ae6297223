"""What the commands print for every input the suite has, recorded, and two
records compared: the safety net of a redesign (behaviour before and after).

    python tests/behaviour_snapshot.py record CHECKOUT OUT.json   # in the checkout's own interpreter
    python tests/behaviour_snapshot.py compare BEFORE.json AFTER.json

`record` runs, in this process, with the code of CHECKOUT (put it first on
PYTHONPATH): `hlo2penguin` on every `*.txt`, `*.hlo`, `*.pb` and
`*.jaxexport` under CHECKOUT/tests (goldens and lit cases aside) with the
program in both dialects, the report as JSON and as text, `--emit hlo`,
`--emit flat-mlir` and `--emit dot`, and `hlo2penguin verify` of each
program against its input; `hlo2penguin-opt` on every lit case of
link #3; `hlo2penguin check` (table and JSON) on every folder holding an
input; `hlo2penguin regress` on the corpus. Each record is the exit status,
the output file, stdout and stderr, with CHECKOUT and the temporary folder
written as ROOT and TMP and timings as `T s`.

`compare` prints each record that differs, after taking out what moves with
the code and is no behaviour: the file and line numbers of the capture code
that JAX writes into a jax.export artifact's stack-frame metadata.
"""

from __future__ import annotations

import contextlib
import difflib
import glob
import io
import json
import os
import re
import sys
import tempfile

EMITS = (["--dialect", "stablehlo"], ["--dialect", "mhlo"], ["--emit", "report", "--json"], ["--emit", "hlo"],
         ["--emit", "flat-mlir"], ["--emit", "dot"], ["--dialect", "mhlo", "--emit", "report"])


def record(root: str, out: str) -> int:
    from pipeline.cli import check, hlo2penguin, opt, regress

    root = os.path.abspath(root)
    tmp = tempfile.mkdtemp()
    written = os.path.join(tmp, "out")

    def said(text: str) -> str:
        return re.sub(r"\d+\.\d+ ?s\b", "T s", text.replace(root, "ROOT").replace(tmp, "TMP"))

    def call(main, argv) -> dict:
        err, std = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
            try:
                code = main(argv)
            except SystemExit as exit:
                code = exit.code
        output = ""
        if os.path.exists(written):
            with open(written, "rb") as f:
                data = f.read()
            try:
                output = data.decode()
            except UnicodeDecodeError:
                output = f"<binary {len(data)} bytes>"
            os.unlink(written)
        return {"code": code, "out": said(output), "stdout": said(std.getvalue()), "err": said(err.getvalue())}

    inputs = sorted(p for ext in ("txt", "hlo", "pb", "jaxexport")
                    for p in glob.glob(f"{root}/tests/**/*.{ext}", recursive=True)
                    if "/goldens/" not in p and "/lit/" not in p)
    records = {}
    for path in inputs:
        rel = os.path.relpath(path, root)
        for flags in EMITS:
            records[f"{rel} {' '.join(flags)}"] = call(hlo2penguin.main, [path, "-q", "-o", written, *flags])
        program = os.path.join(tmp, "program.py")
        if hlo2penguin.main([path, "-q", "-o", program]) == 0:  # `verify` judges the program against its input
            records[f"verify {rel}"] = call(hlo2penguin.main, ["verify", path, program, "--json", "-o", written])
            os.unlink(program)
    for path in sorted(glob.glob(f"{root}/tests/lit/**/*.mlir", recursive=True)):
        records[f"opt {os.path.basename(path)}"] = call(opt.main, [path])
    for folder in sorted({os.path.dirname(p) for p in inputs}):
        rel = os.path.relpath(folder, root)
        records[f"check {rel} json"] = call(check.main, [folder, "--json", "-q", "--jobs", "2", "-o", written])
        records[f"check {rel}"] = call(check.main, [folder, "-q", "--jobs", "2", "-o", written])
    records["regress"] = call(regress.main, [f"{root}/tests/corpus", "-q", "--jobs", "2", "-o", written])
    with open(out, "w") as f:
        json.dump(records, f, indent=1, sort_keys=True)
    print(f"{len(records)} records in {out}")
    return 0


def comparable(text):
    """`text` without what moves with the code: the capture code's files
    and lines in a jax.export artifact's stack frames, a lit case's folder,
    the checkout an input was captured in."""
    if not isinstance(text, str):
        return text
    text = text.replace("tests/lit/link3/", "tests/lit/")
    # An input's own metadata names the checkout it was captured in: any checkout is ROOT.
    text = re.sub(r'"/[^"\n]*?/(tests|pipeline)/', r'"ROOT/\1/', text)
    text = re.sub(r'"ROOT/pipeline/[\w/]+\.py"', '"PIPELINE_FILE"', text)
    return re.sub(r"\{file_name_id=\d+ function_name_id=\d+ line=\d+ end_line=\d+ column=\d+ end_column=\d+\}",
                  "FRAME", text)


def differences(before: dict, after: dict) -> list[str]:
    """One entry per record that differs (or is in one record only), with its diff."""
    found = [f"only before: {k}" for k in sorted(set(before) - set(after))]
    found += [f"only after: {k}" for k in sorted(set(after) - set(before))]
    for key in sorted(set(before) & set(after)):
        a, b = before[key], after[key]
        for field in sorted(set(a) | set(b)):
            x, y = comparable(a.get(field)), comparable(b.get(field))
            if x != y:
                diff = difflib.unified_diff(str(x).splitlines(), str(y).splitlines(), lineterm="", n=0)
                found.append(f"{key}: {field}\n" + "\n".join(list(diff)[2:12]))
    return found


def compare(before_path: str, after_path: str) -> int:
    with open(before_path) as f, open(after_path) as g:
        before, after = json.load(f), json.load(g)
    found = differences(before, after)
    print("\n".join(found))
    print(f"{len(found)} difference(s) over {len(set(before) | set(after))} records")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("record", "compare"):
        sys.exit(__doc__)
    sys.exit((record if sys.argv[1] == "record" else compare)(sys.argv[2], sys.argv[3]))
