"""The Python API as a user discovers it: `help()` and `inspect.signature`
show `run`'s and `assert_round_trip`'s options by name, typed, with their
defaults and what they do; `verify` says when a program is another
module's."""

from __future__ import annotations

import dataclasses
import inspect
import pydoc
import typing

import pytest

import pipeline
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.testing import assert_round_trip
from pipeline.verifier.verify import VerifyError

ONE_EDGE = """\
HloModule one_edge

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %a = f32[4] negate(%x)
  %b = f32[4] exponential(%x), control-predecessors={%a}
  ROOT %c = f32[4] add(%a, %b)
}
"""


@pytest.mark.parametrize("fn", [pipeline.run, assert_round_trip], ids=["run", "assert_round_trip"])
def test_the_options_are_in_the_signature_by_name_typed_with_defaults(fn):
    parameters = inspect.signature(fn).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    hints = typing.get_type_hints(pipeline.Options)
    for f in dataclasses.fields(pipeline.Options):
        p = parameters[f.name]
        assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default == f.default and p.annotation == hints[f.name]


@pytest.mark.parametrize("fn", [pipeline.run, assert_round_trip], ids=["run", "assert_round_trip"])
def test_help_lists_every_option_and_shows_an_example(fn):
    text = pydoc.render_doc(fn, renderer=pydoc.plaintext)
    for f in dataclasses.fields(pipeline.Options):
        assert f"{f.name}: " in text and f" = {f.default!r}" in text
    assert "skip link #3" in text and "dialect=\"mhlo\"" in text


def test_the_signature_is_what_the_call_takes():
    bound = inspect.signature(pipeline.run).bind(ONE_EDGE, dialect="mhlo", flatten=False, isolate=False)
    result = pipeline.run(*bound.args, **bound.kwargs)
    assert result.dialect == "mhlo" and result.flat_mlir is None and result.report.ok
    with pytest.raises(TypeError):
        inspect.signature(pipeline.run).bind(ONE_EDGE, dialects="mhlo")
    with pytest.raises(TypeError):
        pipeline.run(ONE_EDGE, dialects="mhlo")


def test_verify_says_when_the_program_is_another_modules():
    other = pipeline.run(EXAMPLE_HLO, isolate=False).penguin_source
    with pytest.raises(VerifyError, match=r"the program was not made from this module \(it builds module "
                                          r"'example', this is 'one_edge'\)"):
        pipeline.verify(ONE_EDGE, other)
    # Its own program is judged as ever, even with its dep edge removed.
    own = pipeline.run(ONE_EDGE, isolate=False).penguin_source
    edited = "\n".join(line for line in own.splitlines() if "add_dep_edge" not in line)
    assert [e.fate for e in pipeline.verify(ONE_EDGE, edited).edges] == ["lost"]


def test_the_package_names_its_api():
    assert {"run", "verify", "Options", "ChainResult", "Report"} <= set(dir(pipeline))
    assert pipeline.run.__module__ == "pipeline.chain.steps"
    with pytest.raises(AttributeError):
        pipeline.no_such_thing


_CAPTURE = ("import numpy as np; from pipeline.sources import from_jax; "
            "from_jax(lambda x: x * 2, np.ones(4, np.float32))")


def _capture_stderr(env_level: str | None) -> str:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    if env_level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = env_level
    done = subprocess.run([sys.executable, "-c", _CAPTURE], capture_output=True, text=True, env=env, timeout=300,
                          check=True)
    return done.stderr


def test_from_jax_prints_no_xla_info_lines_unless_asked():
    assert "pjrt_client.cc" not in _capture_stderr(None) and "dump.cc" not in _capture_stderr(None)
    # The user's own setting wins: XLA's INFO lines come back.
    assert "dump.cc" in _capture_stderr("0")
