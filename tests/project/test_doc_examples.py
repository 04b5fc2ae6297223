"""The runner of the docs' examples (tests/doc_examples.py, wired in
conftest.py): a page whose example disagrees with the code fails, every
runnable block of every page is collected, and the README is a front page."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from sybil.example import SybilFailure

import doc_examples
from doc_examples import ROOT, doc_pages, fenced_languages, matches

WRONG_CALL = '''# A page

```sh
hlo2penguin module.txt -q -o program.py
```

```python
import pipeline

report = pipeline.verifier.verify("module.txt", "program.py")
```
'''


def evaluate(page: Path) -> list[str]:
    """Run a page as the suite runs it: the outcome of each example, in order."""
    document = doc_examples.sybil(page.parent).parse(page)
    outcomes = []
    doc_examples.setup(document.namespace)
    try:
        for example in document.examples():
            try:
                example.evaluate()
                outcomes.append("ok")
            except SybilFailure as failure:
                outcomes.append(f"failed: {failure.result}")
            except Exception as err:  # what a Python example raised
                outcomes.append(f"raised {type(err).__name__}: {err}")
    finally:
        doc_examples.teardown(document.namespace)
    return outcomes


def test_the_wrong_call_the_readme_once_gave_fails(tmp_path):
    page = tmp_path / "README.md"
    page.write_text(WRONG_CALL)
    outcomes = evaluate(page)
    assert outcomes[0] == "ok"
    # After `import pipeline` alone there is no `pipeline.verifier`; once the chain has run,
    # `pipeline.verifier.verify` is a module: either way, the example fails.
    assert re.fullmatch(r"raised (AttributeError: module 'pipeline' has no attribute 'verifier'|"
                        r"AttributeError: module 'pipeline.verifier' has no attribute 'verify'|"
                        r"TypeError: 'module' object is not callable)", outcomes[1]), outcomes[1]


def test_the_right_call_passes(tmp_path):
    page = tmp_path / "README.md"
    page.write_text(WRONG_CALL.replace("pipeline.verifier.verify(", "pipeline.verify(") +
                    "\n```python\nassert report.ok\n```\n")
    assert evaluate(page) == ["ok", "ok", "ok"]


def test_a_console_block_compares_output_and_exit_status(tmp_path):
    page = tmp_path / "README.md"
    page.write_text("# A page\n\n"
                    "```console\n$ hlo2penguin module.txt -q --emit report\n"
                    "%loop (while): body: %copy.buf -> %copy.twice: preserved\n"
                    "…\n4 HLO control edge(s): 3 preserved, 1 rerouted, 0 dropped, 0 lost; 4 dep edge(s) in …\n```\n\n"
                    "```console\n$ hlo2penguin module.txt -q --emit report\n"
                    "%loop (while): body: %copy.buf -> %copy.twice: lost\n```\n\n"
                    "```console\n$ hlo2penguin nope.hlo; echo \"exit $?\"\n"
                    "hlo2penguin: error: cannot read input 'nope.hlo': No such file or directory\nexit 1\n```\n\n"
                    "```sh\nhlo2penguin nope.hlo\n```\n")
    outcomes = evaluate(page)
    assert outcomes[0] == "ok"
    assert outcomes[1].startswith("failed: `hlo2penguin module.txt -q --emit report` printed:")
    assert outcomes[2].startswith("failed: `hlo2penguin nope.hlo; echo \"exit $?\"` printed:") and "exit 2" in outcomes[2]
    assert outcomes[3].startswith("failed: `hlo2penguin nope.hlo` exited 2")


def test_a_skipped_block_is_skipped_with_its_reason(tmp_path):
    page = tmp_path / "README.md"
    page.write_text('# A page\n\n<!-- skip: next "needs a Dask cluster" -->\n```sh\nfalse\n```\n\n```sh\ntrue\n```\n')
    document = doc_examples.sybil(tmp_path).parse(page)
    examples = list(document.examples())
    doc_examples.setup(document.namespace)
    try:
        examples[0].evaluate()  # the directive
        with pytest.raises(Exception, match="needs a Dask cluster"):  # unittest.SkipTest
            examples[1].evaluate()
        examples[2].evaluate()
    finally:
        doc_examples.teardown(document.namespace)


@pytest.mark.parametrize("expected, actual, same", [
    ("a\n…\nd", "a\nb\nc\nd", True),
    ("x: … lost", "x: 3 preserved, 0 lost  ", True),
    ("a\nb", "a\nc", False),
    ("exit 2", "exit 1", False),
    ("", "anything", False),
])
def test_the_ellipsis_stands_for_any_text_and_nothing_else(expected, actual, same):
    assert matches(expected, actual) is same


def test_every_runnable_block_of_every_page_is_collected():
    pages = doc_pages()
    assert {p.name for p in pages} >= {"README.md", "CHANGELOG.md", "api.md", "cli.md"}
    for page in pages:
        languages = fenced_languages(page)
        unrun = [(line, lang) for line, lang in languages if lang in doc_examples.UNRUN_SHELLS]
        assert unrun == [], f"{page.name}: a block in a language the runner does not run: {unrun}"
        runnable = [line for line, lang in languages if lang in doc_examples.RUN]
        document = doc_examples.sybil().parse(page)
        # The block each example is in (a doctest block holds one example per `>>>`).
        starts = sorted(line for line, _ in languages)
        collected = {max(start for start in starts if start <= example.line)
                     for example in document.examples() if type(example.region.evaluator).__name__ != "Skipper"}
        assert sorted(collected) == runnable, page.name


def test_pytest_collects_the_readme_and_the_docs():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert {"tests", "README.md", "docs"} <= set(config["testpaths"])
    assert (ROOT / "conftest.py").read_text().count("sybil().pytest()") == 1
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dep.startswith("sybil") for dep in extras["test"])


def test_the_readme_is_a_front_page():
    readme = (ROOT / "README.md").read_text()
    lines = readme.splitlines()
    assert 150 <= len(lines) <= 250, len(lines)
    # The two commands first (.ci/run runs the second verbatim).
    assert lines[3].endswith("pip install -e . && hlo2penguin")
    assert lines[4].endswith("pip install -e '.[test]' && python -m pytest -q")
    first_screen = "\n".join(lines[:25])
    for said in ("Penguin", "neuronx-cc", "importer drops control edges", "verifier"):
        assert said in first_screen, said
    assert "pip install -e '.[notebooks]' && jupyter lab notebooks/" in readme
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in readme, f"the README does not link docs/{page.name}"


# What user docs do not say: history belongs in CHANGELOG.md, and none of it in commit or issue terms.
HISTORY = re.compile(r"\b(issue|issues) #?\d+|\bPR #?\d+|\bat commit\b|\b[0-9a-f]{7,40}\b(?<![0-9]{7})|"
                     r"\bthis round\b|\blast round\b|\bsince the last\b", re.IGNORECASE)


def test_user_docs_are_in_the_present_tense_without_history():
    hits = []
    for page in doc_pages():
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for m in HISTORY.finditer(line):
                if not re.fullmatch(r"[0-9]+", m.group()):
                    hits.append(f"{page.relative_to(ROOT)}:{number}: {m.group()!r}")
    assert hits == []


def test_the_history_check_finds_history():
    said = "Against the run at 7a726f1 (before this round's issue 24 work), at commit 5beaf76"
    assert [m.group() for m in HISTORY.finditer(said)] == ["7a726f1", "this round", "issue 24", "at commit",
                                                            "5beaf76"]
