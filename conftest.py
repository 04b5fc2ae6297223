"""The docs' examples run in the suite: Sybil collects every ```python,
```sh and ```console block of README.md, CHANGELOG.md and docs/*.md
(`testpaths` in pyproject.toml names them; the runner is tests/doc_examples.py)."""

from doc_examples import sybil

pytest_collect_file = sybil().pytest()
