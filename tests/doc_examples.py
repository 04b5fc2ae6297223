"""The docs' examples as tests: every ```python, ```sh and ```console block
of README.md, CHANGELOG.md and docs/*.md runs against the real chain
(Sybil collects them; the wiring is the repository's conftest.py).

Each page runs in order in a scratch folder of its own that holds what the
examples name: `module.txt` (the built-in example's HLO, what `hlo2penguin`
runs with no input), `train.py` (a small JAX program, `docs/examples/`) and
`corpus/` (two programs of the regression corpus). The blocks of a page
share one Python namespace, and the whole run shares one warm XLA child.

- ```python: run as code (or as a doctest when it starts with `>>>`).
- ```sh: each command (a `\\` continues it) must exit 0; nothing is compared.
- ```console: `$ COMMAND` lines, each followed by the output it must print
  (stdout, then stderr); `…` in the expected text stands for any text,
  across lines too. A command that shows its exit status ends in
  `; echo "exit $?"` and its output in `exit N`.
- `<!-- skip: next "why" -->` before a block skips it, with the reason
  (what cannot run here: a Jupyter server, a Dask cluster on other machines).

`hlo2penguin` and `hlo2penguin-opt` commands without shell syntax run in
this process (`pipeline.cli`'s `main`), the others through bash with this
repository first on PYTHONPATH and this interpreter's scripts first on PATH.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
CORPUS_PROGRAMS = ("fori_inplace", "while_swap_buffers")  # small, both with control edges
# The languages of the blocks that run; a page may not use another name for a shell or Python block.
RUN = ("python", "sh", "console")
UNRUN_SHELLS = ("bash", "shell", "shell-session", "zsh", "py", "python3", "pycon", "ipython")
SHELL_SYNTAX = re.compile(r"[|<>;&$`()*?\[\]{}~]|^\w+=")
SHOW_EXIT = re.compile(r'^(?P<command>.*?)\s*;\s*echo\s+"exit \$\?"\s*$')
TIMEOUT = 300
COLUMNS = "100"  # the terminal width of the tables the docs show, whatever this process was given


def doc_pages(root: Path = ROOT) -> list[Path]:
    """The pages whose examples run: the README, the changelog, docs/*.md."""
    pages = [root / "README.md", root / "CHANGELOG.md", *sorted((root / "docs").glob("*.md"))]
    return [page for page in pages if page.is_file()]


class DocsSybil(Sybil):
    """Sybil over exactly `doc_pages()` (not every README.md of the tree)."""

    def __init__(self, root: Path, **kwargs):
        super().__init__(path=str(root), **kwargs)
        self.root = root

    def should_parse(self, path: Path) -> bool:
        return Path(path).resolve() in {page.resolve() for page in doc_pages(self.root)}


def prepare(folder: Path) -> None:
    """What the examples name, in `folder`."""
    from pipeline.chain.example import EXAMPLE_HLO

    (folder / "module.txt").write_text(EXAMPLE_HLO)
    for example in EXAMPLES.glob("*"):
        if example.is_file():
            shutil.copy(example, folder / example.name)
    corpus = ROOT / "tests" / "corpus"
    for sub in ("", "inputs", "expected", "goldens"):
        (folder / "corpus" / sub).mkdir(parents=True, exist_ok=True)
    for name in CORPUS_PROGRAMS:
        for sub, suffix in (("", ".jaxexport"), ("inputs", ".npz"), ("expected", ".npz"), ("goldens", ".json")):
            source = corpus / sub / f"{name}{suffix}"
            if source.exists():
                shutil.copy(source, folder / "corpus" / sub / source.name)


def setup(namespace: dict) -> None:
    folder = Path(tempfile.mkdtemp(prefix="hlo2penguin-docs-"))
    prepare(folder)
    namespace["__docs_back__"] = os.getcwd()
    namespace["__docs_folder__"] = folder
    os.chdir(folder)
    sys.path.insert(0, str(folder))  # as `python` started there: `import train` finds docs/examples/train.py


def teardown(namespace: dict) -> None:
    os.chdir(namespace["__docs_back__"])
    with contextlib.suppress(ValueError):
        sys.path.remove(str(namespace["__docs_folder__"]))
    sys.modules.pop("train", None)
    shutil.rmtree(namespace["__docs_folder__"], ignore_errors=True)


def environment() -> dict:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["COLUMNS"] = COLUMNS
    return env


def run_command(command: str) -> tuple[int, str]:
    """(exit status, stdout + stderr) of one command in the working directory."""
    argv = shlex.split(command, comments=True)
    if argv and argv[0] in ("hlo2penguin", "hlo2penguin-opt") and not SHELL_SYNTAX.search(
            command.split("#")[0]):
        return _in_process(argv)
    done = subprocess.run(["bash", "-c", command], env=environment(), capture_output=True, text=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout + done.stderr


def _in_process(argv: list[str]) -> tuple[int, str]:
    if argv[0] == "hlo2penguin":
        from pipeline.cli.hlo2penguin import main
    else:
        from pipeline.cli.opt import main
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, COLUMNS=COLUMNS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv[1:])
        except SystemExit as exit_:  # --help
            code = exit_.code or 0
    return code, out.getvalue() + err.getvalue()


def commands(source: str) -> list[str]:
    """The commands of a ```sh block: one a line, `\\` continues, comments and blank lines skipped."""
    found, pending = [], ""
    for line in source.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line = pending + line
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            found.append(line.strip())
    return found


def evaluate_sh(example) -> str | None:
    for command in commands(example.parsed):
        code, output = run_command(command)
        if code != 0:
            return f"`{command}` exited {code}:\n{output}"
    return None


def console_steps(source: str) -> list[tuple[str, str]]:
    """(command, expected output) for each `$ ` line of a ```console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in source.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:].strip(), []))
        elif steps:
            steps[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"a console block starts with a command ('$ …'), not {line!r}")
    return [(command, "\n".join(lines)) for command, lines in steps]


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected`, where `…` stands for any text; trailing spaces and blank lines aside."""
    def tidy(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())

    pattern = ".*?".join(re.escape(part) for part in tidy(expected).split("…"))
    return re.fullmatch(pattern, tidy(actual), re.DOTALL) is not None


def evaluate_console(example) -> str | None:
    for command, expected in console_steps(example.parsed):
        shown = SHOW_EXIT.match(command)
        code, output = run_command(shown.group("command") if shown else command)
        if shown:
            output += f"exit {code}\n"
        elif code != 0:
            return f"`{command}` exited {code}:\n{output}"
        if not matches(expected, output):
            return f"`{command}` printed:\n{output}\nwhere the docs show:\n{expected}\n"
    return None


def parsers():
    return [SkipParser(), PythonCodeBlockParser(),
            CodeBlockParser("sh", evaluate_sh), CodeBlockParser("console", evaluate_console)]


def sybil(root: Path = ROOT) -> Sybil:
    return DocsSybil(root, parsers=parsers(), setup=setup, teardown=teardown)


def fenced_languages(page: Path) -> list[tuple[int, str]]:
    """(line, language) of each fenced block of a Markdown page."""
    found, fenced = [], False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        m = re.match(r"\s*```(\S*)", line)
        if m:
            if not fenced:
                found.append((number, m.group(1)))
            fenced = not fenced
    return found
