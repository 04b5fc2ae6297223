"""The docs' examples run in the suite: Sybil collects every ```python,
```sh and ```console block of README.md, CHANGELOG.md and docs/*.md
(`testpaths` in pyproject.toml names them; the runner is tests/doc_examples.py).

The suite runs the chain with `verify_each` on: HLO2PENGUIN_VERIFY_EACH=1
(set here, before any test, unless the environment sets it already, e.g. to
0) holds for every `pipeline.run` of this process, of its xdist workers and
of the commands the tests start (lit's RUN lines too: tests/lit/lit.cfg.py
passes it on)."""

import os

os.environ.setdefault("HLO2PENGUIN_VERIFY_EACH", "1")

from doc_examples import sybil  # noqa: E402

pytest_collect_file = sybil().pytest()
