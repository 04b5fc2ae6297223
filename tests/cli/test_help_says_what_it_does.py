"""`--help` says what the code does: every flag whose help names a library
or a format (matplotlib, Pillow, Graphviz, Dask, SVG, PNG, JSON, DOT, MLIR
bytecode) says it in a claim below, and each claim is run: the output is in
the format it names (parsed by a reader of that format: json, xml.etree,
the PNG signature, MLIR's own parser), and the libraries it names are the
ones the process imported (read from `sys.modules` of a fresh process).

A new flag that names a library or a format, or a help reworded so that no
claim covers a word, fails `test_every_library_or_format_a_help_names_is_a_claim`."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
NAMES = re.compile(r"\b(matplotlib|Pillow|PIL|Graphviz|Dask|tqdm|SVG|PNG|JSON|DOT|bytecode)\b")


def parsers() -> dict:
    from pipeline.cli import check, corpus, hlo2penguin, opt, regress

    return {"hlo2penguin": hlo2penguin.build_parser(), "hlo2penguin check": check.build_parser(),
            "hlo2penguin verify": hlo2penguin.build_verify_parser(), "hlo2penguin regress": regress.build_parser(),
            "hlo2penguin corpus add": corpus.build_parser(),
            "hlo2penguin-opt": opt.build_parser()}


def helps() -> dict[tuple[str, str], str]:
    """(program, flag or argument) → its help, for every flag of every command."""
    found = {}
    for prog, parser in parsers().items():
        for action in parser._actions:
            flag = action.option_strings[-1] if action.option_strings else action.dest
            found[(prog, flag)] = " ".join((action.help or "").split())
    return found


def run_main(prog: str, argv: list[str]) -> tuple[int, str, str]:
    """A command in this process: (exit status, stdout, stderr)."""
    from pipeline.cli import hlo2penguin, opt

    main = opt.main if prog == "hlo2penguin-opt" else hlo2penguin.main
    words = prog.split()[1:]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(words + argv)
    return code, out.getvalue(), err.getvalue()


def fresh_process(argv: list[str], cwd: Path, env: dict | None = None) -> tuple[int, set[str]]:
    """`hlo2penguin ARGV` in a new interpreter: its exit status and which of
    matplotlib, PIL, graphviz it imported."""
    code = ("import json, sys\nfrom pipeline.cli.hlo2penguin import main\nrc = main(sys.argv[1:])\n"
            "print(json.dumps([m for m in ('matplotlib', 'PIL', 'graphviz', 'pydot') if m in sys.modules]))\n"
            "sys.exit(rc)\n")
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, env=environ, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.returncode, set(json.loads(done.stdout.splitlines()[-1]))


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    from pipeline.chain.example import EXAMPLE_HLO

    folder = tmp_path_factory.mktemp("help")
    (folder / "module.txt").write_text(EXAMPLE_HLO)
    corpus = folder / "corpus"
    name = "while_swap_buffers"
    for sub, suffix in (("", ".jaxexport"), ("inputs", ".npz"), ("expected", ".npz"), ("goldens", ".json")):
        (corpus / sub).mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "tests" / "corpus" / sub / f"{name}{suffix}", corpus / sub)
    return folder


# --- the checks: each runs the flag and reads its output with a reader of the format it names ---

def plot_png(work):
    _, imported = fresh_process(["module.txt", "-q", "-o", "p.py", "--plot", "g.png"], work)
    assert (work / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "PIL" in imported and "matplotlib" not in imported, imported


def plot_svg(work):
    _, imported = fresh_process(["module.txt", "-q", "-o", "p.py", "--plot", "g.svg"], work)
    assert ET.parse(work / "g.svg").getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert imported.isdisjoint({"matplotlib", "PIL"}), imported  # written as text


def plot_neither_imports_matplotlib(work):
    for name in ("n.png", "n.svg"):
        _, imported = fresh_process(["module.txt", "-q", "-o", "p.py", "--plot", name], work)
        assert "matplotlib" not in imported, (name, imported)


def plot_without_graphviz(work):
    # No program on PATH at all: no `dot` to call (the XLA child is this interpreter, by its full path).
    _, imported = fresh_process(["module.txt", "-q", "-o", "p.py", "--plot", "nodot.svg"], work, {"PATH": ""})
    assert (work / "nodot.svg").stat().st_size > 0 and imported.isdisjoint({"graphviz", "pydot"})


def emit_dot(work):
    code, out, _ = run_main("hlo2penguin", ["module.txt", "-q", "--emit", "dot"])
    assert code == 0 and re.match(r"digraph\b[^{]*\{", out) and out.rstrip().endswith("}")
    assert out.count("{") == out.count("}")
    assert len(re.findall(r"->.*style=dashed", out)) == 4  # the 4 dep edges of the example


def report_json(work):
    code, out, _ = run_main("hlo2penguin", ["module.txt", "--emit", "report", "--json"])
    assert code == 0 and len(json.loads(out)["edges"]) == 4


def check_json(work):
    code, out, _ = run_main("hlo2penguin check", ["module.txt", "--json", "--jobs", "1"])
    assert code == 0 and set(json.loads(out)) == {"modules", "totals", "skipped", "twins"}


def check_output_json(work):
    code, _, _ = run_main("hlo2penguin check", ["module.txt", "--json", "--jobs", "1", "-o", "check.json"])
    assert code == 0 and json.loads((work / "check.json").read_text())["totals"]["edges"] == 4


def verify_json(work):
    run_main("hlo2penguin", ["module.txt", "-q", "-o", "program.py"])
    code, out, _ = run_main("hlo2penguin verify", ["module.txt", "program.py", "--json"])
    assert code == 0 and len(json.loads(out)["edges"]) == 4


def regress_json(work):
    code, out, _ = run_main("hlo2penguin regress", ["corpus", "--jobs", "1", "--json"])
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and rows and all(row["program"] == "while_swap_buffers" for row in rows)


def regress_output_json(work):
    code, _, _ = run_main("hlo2penguin regress", ["corpus", "--jobs", "1", "--json", "-o", "rows.jsonl"])
    assert code == 0 and all(json.loads(line) for line in (work / "rows.jsonl").read_text().splitlines())


def on_dask(prog: str, argv: list[str]):
    def check(work):
        pytest.importorskip("distributed")
        code, _, err = run_main(prog, argv + ["--scheduler", "tcp://127.0.0.1:9"])
        assert code == 2 and "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'" in err, err
        assert "distributed" in sys.modules  # Dask's client tried it
    return check


def opt_reads_bytecode(work):
    from jaxlib.mlir import ir

    from pipeline.xla.mlir_context import make_context

    _, text, _ = run_main("hlo2penguin", ["module.txt", "-q", "--emit", "mlir"])
    module = ir.Module.parse(text, context=make_context())
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    (work / "in.mlirbc").write_bytes(buffer.getvalue())
    code, out, _ = run_main("hlo2penguin-opt", ["in.mlirbc", "--stablehlo-flatten-control-dep-tuple-operands"])
    assert code == 0 and ir.Module.parse(out, context=make_context()).operation.verify()


# (program, flag, a phrase of its help, the check that the phrase is true)
CLAIMS = [
    ("hlo2penguin", "--plot", r"to a PNG or SVG file", plot_neither_imports_matplotlib),
    ("hlo2penguin", "--plot", r"PNG drawn with Pillow", plot_png),
    ("hlo2penguin", "--plot", r"SVG written as text", plot_svg),
    ("hlo2penguin", "--plot", r"neither imports matplotlib", plot_neither_imports_matplotlib),
    ("hlo2penguin", "--plot", r"no Graphviz is needed", plot_without_graphviz),
    ("hlo2penguin", "--emit", r"dot = the Penguin program's data and dep edges as Graphviz DOT", emit_dot),
    ("hlo2penguin", "--json", r"with --emit report: JSON instead of text", report_json),
    ("hlo2penguin check", "--json", r"JSON: \{\"modules\"", check_json),
    ("hlo2penguin check", "--output", r"the table \(or JSON\)", check_output_json),
    ("hlo2penguin check", "--scheduler", r"on the Dask cluster", on_dask("hlo2penguin check", ["module.txt"])),
    ("hlo2penguin verify", "--json", r"the report as JSON", verify_json),
    ("hlo2penguin regress", "--json", r"one JSON object per row", regress_json),
    ("hlo2penguin regress", "--output", r"the table \(or JSON\)", regress_output_json),
    ("hlo2penguin regress", "--scheduler", r"on the Dask cluster", on_dask("hlo2penguin regress", ["corpus"])),
    ("hlo2penguin-opt", "input", r"MLIR text or bytecode file", opt_reads_bytecode),
]


def uncovered(help_text: str, phrases: list[str]) -> list[str]:
    """The library and format names of `help_text` that no phrase's match covers."""
    spans = [m.span() for phrase in phrases for m in re.finditer(phrase, help_text)]
    return [m.group() for m in NAMES.finditer(help_text)
            if not any(start <= m.start() and m.end() <= end for start, end in spans)]


def test_every_library_or_format_a_help_names_is_a_claim():
    problems = []
    for (prog, flag), text in helps().items():
        phrases = [phrase for p, f, phrase, _ in CLAIMS if (p, f) == (prog, flag)]
        for name in uncovered(text, phrases):
            problems.append(f"{prog} {flag}: the help names {name!r} in no checked claim: {text!r}")
    assert problems == []


def test_a_help_that_names_a_library_the_code_does_not_use_is_caught():
    old = ("also draw the Penguin program's data and dep edges to a PNG or SVG file (PNG with Pillow, "
           "SVG with matplotlib; no Graphviz needed)")
    phrases = [phrase for p, f, phrase, _ in CLAIMS if (p, f) == ("hlo2penguin", "--plot")]
    assert uncovered(old, phrases) == ["PNG", "Pillow", "SVG", "matplotlib", "Graphviz"]


@pytest.mark.parametrize("prog, flag, phrase, check", CLAIMS, ids=[f"{p} {f}: {ph}" for p, f, ph, _ in CLAIMS])
def test_the_claim_holds(prog, flag, phrase, check, work, monkeypatch):
    assert re.search(phrase, helps()[(prog, flag)]), f"{prog} {flag}'s help no longer says {phrase!r}"
    monkeypatch.chdir(work)
    check(work)
