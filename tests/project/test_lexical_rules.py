"""The HLO text's lexical rules are written once, in
pipeline/reading/lexical.py: no other source of pipeline/, passes/ or
printer/ holds a regular expression with a name's character class, or one
that spells out `HloModule`, `ENTRY`, `ROOT` or `control-predecessors`.

A string is a regular expression here when it is passed to a function of
`re` or is assigned to a name and holds a character class; f-strings count
by their literal parts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from paths import REPO

PACKAGES = ("pipeline", "passes", "printer")
HOME = "pipeline/reading/lexical.py"

# A character class with letters (`\w`, `a-z`, `A-Z`) and one of `_ . -`: a name's or an opcode's.
NAME_CLASS = re.compile(r"\[\^?(?=[^\]]*(?:\\w|a-z|A-Z))(?=[^\]]*(?:_|\.|\\-|-\]))[^\]]*\]")
WORDS = re.compile(r"HloModule|ENTRY|ROOT|control-predecessors")

# Regular expressions that hold such a class but read no HLO text: (file, the expression's start).
NOT_HLO = {
    ("pipeline/corpus.py", "[A-Za-z0-9_][A-Za-z0-9_.-]*"),  # a corpus program's name: a file name
    ("pipeline/reading/hints.py", "(?:module\\b|func\\.func\\b|#[\\w.$\\-]+"),  # MLIR's first token
    ("pipeline/cli/hlo2penguin.py", '(?:"""|'),  # Python source's first line
    ("pipeline/cli/goldens.py", "[^A-Za-z0-9_.-]"),  # what no file name takes
    ("pipeline/cli/regress.py", "op ([\\w.]+)"),  # an MLIR op's name in MLIR's error
    ("pipeline/verifier/program.py", "(?!(?:else|elif|except|finally|case)\\b)[A-Za-z_]"),  # a Python statement
}

_RE_FUNCTIONS = {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}


def _literal(node: ast.AST) -> str | None:
    """The literal text of a string or an f-string (its formatted parts left out)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        parts = [_literal(node.left), _literal(node.right)]
        return "".join(p for p in parts if p is not None) if any(p is not None for p in parts) else None
    return None


def _expressions(tree: ast.AST):
    """(line, text) of each string used as a regular expression: a first
    argument of a function of `re`, or a string assigned to a name."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RE_FUNCTIONS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
            text = _literal(node.args[0])
            if text is not None:
                yield node.lineno, text, True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            text = _literal(node.value)
            if text is not None:
                yield node.lineno, text, False


def lexical_rules_outside(root: Path = REPO) -> list[str]:
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            if where == HOME:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), where)
            for line, text, in_re_call in _expressions(tree):
                if any(where == file and text.startswith(start) for file, start in NOT_HLO):
                    continue
                if NAME_CLASS.search(text) or (in_re_call and WORDS.search(text)):
                    found.append(f"{where}:{line}: {text[:80]!r}")
    return found


def test_no_hlo_lexical_rule_is_written_outside_lexical():
    assert lexical_rules_outside() == []


def test_the_scan_finds_the_rules_it_looks_for(tmp_path):
    """It finds a name's class in a constant and in an f-string, and a
    keyword in a pattern; it passes over prose and over classes without `_ . -`."""
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "x.py").write_text(
        'import re\n_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\\-]*"\n'
        'HEAD = re.compile(rf"%?{_NAME}\\s*[\\w.\\-]+")\n'
        'H = re.search(r"^\\s*HloModule\\b", "")\n'
        'DOC = "the HloModule line"\n'
        'T = re.compile(r"tensor<([a-z][a-z0-9]*)>")\n')
    found = lexical_rules_outside(tmp_path)
    assert [f.split(":")[1] for f in found] == ["2", "3", "4"]


def test_every_exception_is_still_there():
    """An allowed expression that is gone is taken off the list."""
    texts = set()
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            where = path.relative_to(REPO).as_posix()
            texts |= {(where, text) for _, text, _ in _expressions(ast.parse(path.read_text(encoding="utf-8")))}
    for file, start in NOT_HLO:
        assert any(w == file and t.startswith(start) for w, t in texts), (file, start)
