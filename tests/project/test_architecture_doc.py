"""docs/architecture.md names only what is there: every file and folder of
its tree, every path it cites (`pipeline/reading/source.py`, `passes/mlir/`),
every dotted Python name (`pipeline.reading.source.load`: the module imports
and has the attribute), every bare name in backticks (`Parsed`,
`_custom_call_class`: an identifier of the project's code) and every keyword
a call in backticks passes (`PreserveControlDeps(scope=...)`: a parameter of
what it calls). The page is a map; a map with a removed room on it misleads."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from functools import cache
from pathlib import Path

import pytest

from paths import DOCS
from paths import REPO as ROOT

PAGE = DOCS / "architecture.md"
PACKAGES = ("pipeline", "passes", "printer", "bench")
TOP = PACKAGES + ("tests", "docs", "notebooks")

# A path into the repository, wherever it stands on the page: `pipeline/x.py`,
# `passes/mlir/`, `docs/examples/`. Not preceded by a word character, `/` or
# `.`, so `jaxlib/pipeline/x` is not read as one.
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./*-]*)" % "|".join(TOP))
DOTTED = re.compile(r"(?<![\w.])((?:%s)(?:\.\w+)+)" % "|".join(PACKAGES))
SPAN = re.compile(r"`([^`\n]+)`")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# An entry of the tree: its indentation, then a name, or names separated by
# ", " (`op_rules.py, reduction_rules.py`); then two spaces or the line's end.
ENTRY = re.compile(r"^( *)([\w./-]+(?:, [\w./-]+)*)(?: {2,}|$)")
# A span that names a file of another kind (XLA's `hlo.proto`, `module.txt`):
# not a Python name.
OTHER_FILE = re.compile(r"[\w./-]+\.(?:proto|cc|h|md|json|txt|npz|pb|hlo|mlir|jaxexport|toml|png|svg)")


def fenced_blocks(text: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """(language, [(line number, line)]) of each fenced block."""
    blocks, current, language = [], None, ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            if current is None:
                current, language = [], line.strip()[3:].strip()
            else:
                blocks.append((language, current))
                current = None
            continue
        if current is not None:
            current.append((number, line))
    return blocks


def tree_entries(text: str) -> list[tuple[int, str]]:
    """(line number, path from the repository's root) of every entry of the
    page's trees (its fenced blocks without a language): a child is indented
    under its folder; a description's continuation is indented far past any
    entry and is not one."""
    found = []
    for language, lines in fenced_blocks(text):
        if language:
            continue
        stack: list[tuple[int, str]] = []  # (indentation, folder)
        for number, line in lines:
            m = ENTRY.match(line)
            if not m or len(m.group(1)) >= 16:
                continue
            indent, names = len(m.group(1)), m.group(2).split(", ")
            if not all("." in n or n.endswith("/") for n in names):
                continue
            while stack and stack[-1][0] >= indent:
                stack.pop()
            parent = stack[-1][1] if stack else ""
            for name in names:
                found.append((number, parent + name))
            if len(names) == 1 and names[0].endswith("/"):
                stack.append((indent, parent + names[0]))
    return found


def spans(text: str) -> list[tuple[int, str]]:
    """(line number, text) of every span in backticks, in the prose and in
    the trees' descriptions (not in code blocks with a language: examples)."""
    inside = {number for language, lines in fenced_blocks(text) if language for number, _ in lines}
    return [(number, m.group(1))
            for number, line in enumerate(text.splitlines(), 1) if number not in inside
            for m in SPAN.finditer(line)]


@cache
def _trees() -> dict[str, ast.Module]:
    return {str(p.relative_to(ROOT)): ast.parse(p.read_text(encoding="utf-8"))
            for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
            if "__pycache__" not in p.parts}


@cache
def identifiers() -> frozenset[str]:
    """Every identifier the project's code spells: its modules, what it
    defines, names, passes by keyword or imports, and the strings that are
    identifiers (an option's choices, a descriptor's message names)."""
    names: set[str] = {Path(rel).stem for rel in _trees()} | {Path(rel).parent.name for rel in _trees()}
    for tree in _trees().values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.update((node.asname or node.name).split("."))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)
    return frozenset(names)


@cache
def definers(name: str) -> tuple[str, ...]:
    """The dotted modules whose top level defines `name` (a def, a class,
    an assignment)."""
    out = []
    for rel, tree in _trees().items():
        for node in tree.body:
            defined = set()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined.update(t.id for t in targets if isinstance(t, ast.Name))
            if name in defined:
                parts = list(Path(rel).with_suffix("").parts)
                if parts[-1] == "__init__":
                    parts.pop()
                out.append(".".join(parts))
                break
    return tuple(out)


def resolve(dotted: str):
    """The object a dotted name of the project names: the longest prefix
    that imports, then an attribute for each remaining part. LookupError
    says what is missing."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name is None or not module_name.startswith(err.name):
                raise
            continue
        for n, attr in enumerate(parts[cut:], cut):
            if not hasattr(obj, attr):
                raise LookupError(f"{'.'.join(parts[:n])} has no attribute {attr!r}")
            obj = getattr(obj, attr)
        return obj
    raise LookupError(f"no module {parts[0]!r}")


def resolve_bare(dotted: str) -> list:
    """The objects a name the project defines at some module's top level
    (`Parsed`, `Module.execute`) may stand for: one per defining module
    where every attribute is there."""
    first, *rest = dotted.split(".")
    found = []
    for module in definers(first):
        try:
            found.append(resolve(".".join([module, first, *rest])))
        except LookupError:
            pass
    return found


def _keywords_missing(obj, keywords: list[str]) -> list[str]:
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return []
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return []
    return [k for k in keywords if k not in params]


def _call(span: str) -> tuple[str, list[str]] | None:
    """(dotted callee, keywords) of a span that is one Python call, `@rule(...)`
    and `…` allowed; None if the span is not one."""
    try:
        node = ast.parse(span.lstrip("@").replace("…", "..."), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    try:
        callee = ast.unparse(node.func)
    except Exception:
        return None
    if not re.fullmatch(r"[A-Za-z_][\w.]*", callee):
        return None
    return callee, [k.arg for k in node.keywords if k.arg]


def problems(text: str) -> list[str]:
    """What the page names that is not there, one line each (`L<n>: ...`)."""
    out: list[str] = []
    basenames = {p.name for package in PACKAGES for p in (ROOT / package).rglob("*.py")}

    for number, rel in tree_entries(text):
        if not (ROOT / rel).exists() or (rel.endswith("/") and not (ROOT / rel).is_dir()):
            out.append(f"L{number}: the tree's {rel} does not exist")

    for number, line in enumerate(text.splitlines(), 1):
        for m in PATH.finditer(line):
            rel = m.group(1).rstrip(".,;:")
            there = list(ROOT.glob(rel.rstrip("/"))) if "*" in rel else [ROOT / rel] if (ROOT / rel).exists() else []
            if not there:
                out.append(f"L{number}: {rel} does not exist")

    for number, span in spans(text):
        if re.fullmatch(r"[\w-]+\.py", span):
            if span not in basenames:
                out.append(f"L{number}: no file {span} in {', '.join(PACKAGES)}")
            continue
        if OTHER_FILE.fullmatch(span):
            continue
        m = re.fullmatch(r"from ([\w.]+) import (.+)", span)
        if m and m.group(1).split(".")[0] in PACKAGES:
            for name in re.split(r",\s*", m.group(2)):
                if name.isidentifier():
                    try:
                        resolve(f"{m.group(1)}.{name}")
                    except (LookupError, ImportError) as err:
                        out.append(f"L{number}: `{span}`: {err}")
            continue
        for m in re.finditer(r"-m ([\w.]+)", span):
            if m.group(1).split(".")[0] in PACKAGES and importlib.util.find_spec(m.group(1)) is None:
                out.append(f"L{number}: `{span}`: no module {m.group(1)}")
        for m in DOTTED.finditer(span):
            try:
                resolve(m.group(1))
            except (LookupError, ImportError) as err:
                out.append(f"L{number}: `{m.group(1)}`: {err}")
        call = _call(span)
        name = call[0] if call else span.lstrip("@")
        first = name.split(".")[0]
        if not re.fullmatch(r"[A-Za-z_][\w.]*", name):
            continue
        if first in PACKAGES:
            try:
                objs = [resolve(name)]
            except (LookupError, ImportError):
                continue  # said above
        else:
            if first not in identifiers():
                out.append(f"L{number}: `{span}`: the code has no name {first!r}")
                continue
            objs = resolve_bare(name)
            if not objs and "." in name and definers(first):
                out.append(f"L{number}: `{span}`: no {name} in {', '.join(definers(first))}")
        if call and call[1] and objs:
            missing = [_keywords_missing(obj, call[1]) for obj in objs]
            if all(missing):
                out.append(f"L{number}: `{span}`: {name} takes no keyword {', '.join(missing[0])}")
    return out


def test_the_architecture_page_names_only_what_exists():
    found = problems(PAGE.read_text(encoding="utf-8"))
    assert not found, "docs/architecture.md names what is not there:\n" + "\n".join(found)


@pytest.mark.parametrize("page, expected", [
    ("```\npipeline/\n  reading/\n    source.py   x\n    gone.py     y\n```\n",
     "the tree's pipeline/reading/gone.py does not exist"),
    ("the walk is `pipeline/reading/nowhere.py`.\n", "pipeline/reading/nowhere.py does not exist"),
    ("`pipeline.reading.source.nothing`\n", "has no attribute 'nothing'"),
    ("`PreserveControlDeps(no_such_option=False)`\n", "takes no keyword no_such_option"),
    ("`NoSuchClassAnywhere`\n", "the code has no name 'NoSuchClassAnywhere'"),
    ("the module `no_such_module`\n", "the code has no name 'no_such_module'"),
    ("`from pipeline import no_such_name`\n", "has no attribute 'no_such_name'"),
    ("`nowhere_at_all.py`\n", "no file nowhere_at_all.py"),
    ("```\npasses/\n  hlo/gone.py    x\n```\n", "the tree's passes/hlo/gone.py does not exist"),
])
def test_each_kind_of_stale_name_is_found(page, expected):
    assert any(expected in line for line in problems(page)), problems(page)


def test_what_exists_passes():
    page = ("```\npipeline/\n  reading/     x\n    source.py   x\n    op_rules.py, x.py\n```\n"
            "`pipeline.reading.source.load`, `pipeline/verifier/`, `Parsed`, `passes.control_dep.Fate`,\n"
            "`pipeline.run(source, stop_after=…)`, `from pipeline.sources import from_jax`, `python -m bench`,\n"
            "XLA's `hlo.proto`, `ir.py`, the modules `lexical` and `drawing`\n")
    found = problems(page)
    assert found == ["L5: the tree's pipeline/reading/op_rules.py does not exist",
                     "L5: the tree's pipeline/reading/x.py does not exist"]


def test_the_tree_holds_every_module():
    """Every module of pipeline/, passes/ and printer/ has its line in the
    tree (a package's `__init__.py` and `__main__.py` excepted)."""
    listed = {rel for _, rel in tree_entries(PAGE.read_text(encoding="utf-8"))}
    missing = [str(p.relative_to(ROOT)) for package in ("pipeline", "passes", "printer")
               for p in sorted((ROOT / package).rglob("*.py"))
               if "__pycache__" not in p.parts and p.name not in ("__init__.py", "__main__.py")
               and str(p.relative_to(ROOT)) not in listed]
    assert not missing, "docs/architecture.md's tree leaves out:\n" + "\n".join(missing)
