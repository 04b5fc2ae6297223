"""The docs a clone of the repository has: every `docs/<page>.md#<anchor>`
(and `README.md#<anchor>`) cited in a source, test or Markdown file names a
page that exists and a heading of it, and no tracked file points at
documents a clone does not have."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from paths import REPO as ROOT

SKIP_DIRS = {".venv", "mutants", ".git", "node_modules", "build", "dist"}
SUFFIXES = {".py", ".mlir", ".md"}

# A page and an anchor: `docs/x.md#a`, `../README.md#a`, or, inside docs/,
# `x.md#a`. The page part may not follow a word character, `/` or `.`, so
# `foo/docs/x.md` or `a.docs/x.md` is not read as a citation of docs/x.md.
CITATION = re.compile(r"(?<![\w/.])((?:\.\./)?(?:docs/)?[A-Za-z0-9_-]+\.md)#([A-Za-z0-9_-]+)")
# `](#anchor)`: a link to a heading of the same Markdown page.
SAME_PAGE = re.compile(r"\]\(#([A-Za-z0-9_-]+)\)")


def github_anchor(heading: str) -> str:
    """GitHub's anchor for a heading's text: lowercase, punctuation other
    than '-' and '_' dropped, each space a '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings (fenced code skipped;
    a repeated heading gets `-1`, `-2`, … as on GitHub)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"#{1,6} +(.*?) *#* *$", line)
        if fenced or not m:
            continue
        base = github_anchor(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def _skipped(rel: Path) -> bool:
    return any(part in SKIP_DIRS or part.startswith(".venv") for part in rel.parts)


def _files(root: Path):
    """The py, mlir and md files under `root`: in the repository, those git
    tracks or would track (not what .gitignore leaves out: virtualenvs,
    mutants); elsewhere, every one outside those folders."""
    if root == ROOT:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=root, capture_output=True, check=True).stdout.decode().split("\0")
        paths = sorted({root / name for name in listed if name})
    else:
        paths = sorted(root.rglob("*"))
    for path in paths:
        rel = path.relative_to(root)
        if path.suffix in SUFFIXES and path.is_file() and not _skipped(rel) and path != Path(__file__).resolve():
            yield path  # not this file: its examples are not citations


def citations(root: Path) -> list[tuple[str, Path, str]]:
    """(where, page, anchor) for every citation under `root`."""
    found = []
    for path in _files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{path.relative_to(root)}:{number}"
            for m in CITATION.finditer(line):
                page = m.group(1)
                if page.startswith("docs/"):
                    target = root / page
                else:
                    target = (path.parent / page).resolve()
                    if not target.exists() and not page.startswith("../"):
                        target = root / page  # `README.md#…` from anywhere: the repository's
                found.append((where, target, m.group(2)))
            if path.suffix == ".md":
                for m in SAME_PAGE.finditer(line):
                    found.append((where, path, m.group(1)))
    return found


def broken(root: Path) -> list[str]:
    problems = []
    cache: dict[Path, set[str]] = {}
    for where, page, anchor in citations(root):
        if not page.is_file():
            problems.append(f"{where}: {page} does not exist")
            continue
        if page not in cache:
            cache[page] = anchors(page)
        if anchor not in cache[page]:
            problems.append(f"{where}: {page.name} has no heading with anchor #{anchor}")
    return problems


def test_the_docs_exist():
    for page in ("docs/link3-contract.md", "docs/design.md"):
        assert (ROOT / page).is_file(), page


def test_every_cited_anchor_names_a_heading_of_an_existing_page():
    cited = citations(ROOT)
    assert any(page.parent.name == "docs" for _, page, _ in cited), "no docs/*.md#anchor cited anywhere"
    assert broken(ROOT) == []


def test_a_bad_anchor_or_page_is_reported(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Top\n\n## Scope: which functions\n\n```\n# not a heading\n```\n"
                                            "See [it](#scope-which-functions) and [no](#nope).\n")
    (tmp_path / "t.py").write_text("# docs/a.md#scope-which-functions docs/a.md#not-a-heading\n"
                                   "# docs/missing.md#top\n")
    assert broken(tmp_path) == [
        "docs/a.md:8: a.md has no heading with anchor #nope",
        "t.py:1: a.md has no heading with anchor #not-a-heading",
        f"t.py:2: {tmp_path / 'docs' / 'missing.md'} does not exist",
    ]


@pytest.mark.parametrize("heading, anchor", [
    ("Link #3: the contract of `flatten-control-dep-tuple-operands`",
     "link-3-the-contract-of-flatten-control-dep-tuple-operands"),
    ("Pitfalls measured around link #3", "pitfalls-measured-around-link-3"),
    ("Operand rewrite (replaceTuples)", "operand-rewrite-replacetuples"),
    ("A get_tuple_element of a block argument", "a-get_tuple_element-of-a-block-argument"),
    ("The proof: an independent verifier", "the-proof-an-independent-verifier"),
])
def test_github_anchors(heading, anchor):
    assert github_anchor(heading) == anchor


def test_no_tracked_file_points_at_documents_a_clone_lacks():
    # Spelled in pieces, so that this file does not match itself.
    needles = ("../" + "shared", "DESIGN" + ".md")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    hits = []
    for name in tracked.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        hits += [f"{name}: {needle}" for needle in needles if needle in text]
    assert hits == []
