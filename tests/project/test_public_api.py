"""One public import path for everything a user calls: the names below
import from where the docs put them, whichever internal module defines
them, and `import pipeline` stays cheap (no jaxlib until a name is used)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())

# module → the public names it must offer (and, for `pipeline`, exactly these)
PUBLIC = {
    "pipeline": ["run", "verify", "Options", "ChainResult", "Report", "close",
                 "from_jax", "from_export", "from_dump_dir", "Captured", "CapturedModule"],
    "pipeline.testing": ["assert_round_trip", "xla_outputs"],
    "pipeline.sources": ["from_jax", "from_export", "from_dump_dir", "Captured", "CapturedModule",
                         "UnreadableInput"],
}
# Where each public name is defined today (may move; the public path may not).
DEFINED_IN = {
    "run": "pipeline.chain.steps", "verify": "pipeline.verifier.verify", "Options": "pipeline.chain.options",
    "ChainResult": "pipeline.chain.result", "Report": "pipeline.verifier.report", "close": "pipeline.xla.worker",
    "from_jax": "pipeline.reading.capture", "from_export": "pipeline.reading.capture",
    "from_dump_dir": "pipeline.reading.capture", "Captured": "pipeline.reading.dumps",
    "CapturedModule": "pipeline.reading.dumps", "UnreadableInput": "pipeline.reading.text",
}


@pytest.mark.parametrize("module, name", [(m, n) for m, names in PUBLIC.items() for n in names])
def test_each_public_name_imports_from_its_public_path(module, name):
    value = getattr(importlib.import_module(module), name)
    if name in DEFINED_IN:
        assert value is getattr(importlib.import_module(DEFINED_IN[name]), name)
    assert callable(value)


def test_the_names_the_docs_give_import_in_one_statement():
    from pipeline import Options, from_dump_dir, from_export, from_jax, run, verify  # noqa: F401
    from pipeline.sources import from_jax as same  # noqa: F401  (the path earlier docs gave)
    from pipeline.testing import assert_round_trip  # noqa: F401

    assert same is from_jax


def test_pipeline_offers_exactly_the_public_names():
    import pipeline

    assert sorted(pipeline.__all__) == sorted(PUBLIC["pipeline"])
    assert set(PUBLIC["pipeline"]) <= set(dir(pipeline))
    with pytest.raises(AttributeError, match="module 'pipeline' has no attribute 'nope'"):
        pipeline.nope  # noqa: B018


def test_docs_api_page_names_every_public_name():
    page = (ROOT / "docs" / "api.md").read_text()
    missing = [f"{m}.{n}" for m, names in PUBLIC.items() for n in names if n not in page]
    assert missing == []


def test_import_pipeline_does_not_load_jaxlib():
    code = "import sys, pipeline, pipeline.sources as _; print('jaxlib' in sys.modules)"
    # pipeline.sources needs the chain: only `import pipeline` alone is light
    light = subprocess.run([sys.executable, "-c", "import sys, pipeline; print('jaxlib' in sys.modules)"],
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=True)
    assert light.stdout.strip() == "False"
    full = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, check=True)
    assert full.stdout.strip() == "True"
