"""The folders the tests share: the repository, tests/, and the inputs checked in under tests/."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
CORPUS = TESTS / "corpus"
PIPELINE_DUMPS = TESTS / "pipeline_dumps"
XLA_STYLE = TESTS / "xla_style"
NEWER_XLA = TESTS / "newer_xla"
LIT = TESTS / "lit"
