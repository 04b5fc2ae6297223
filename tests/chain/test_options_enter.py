"""Options are held to their declarations where they enter the chain:
`pipeline.run`'s keywords, an `Options`, a dict of its fields. A value not
of its option's declared type is one TypeError naming the option and what
it takes; a dict is read as the same fields (the oracle: the same run with
an `Options`, and the dialect the MLIR is in)."""

from __future__ import annotations

import dataclasses
import typing

import pytest

import pipeline
from pipeline.chain.example import EXAMPLE_HLO


@pytest.mark.parametrize("name,value,takes", [
    ("flatten", "no", "True or False"),
    ("check", 0, "True or False"),
    ("dialect", 3, "'stablehlo'"),
    ("scope", ["all"], "'main'"),
    ("source_name", 7, "a str or None"),
])
def test_a_value_of_the_wrong_type_is_one_type_error_naming_the_option(name, value, takes):
    declared = typing.get_type_hints(pipeline.Options)[name]
    assert not isinstance(value, typing.get_args(declared) or declared)  # the declaration refuses it
    for call in (lambda: pipeline.run(EXAMPLE_HLO, isolate=False, **{name: value}),
                 lambda: pipeline.Options(**{name: value}),
                 lambda: pipeline.run(EXAMPLE_HLO, {name: value, "isolate": False})):
        with pytest.raises(TypeError) as refused:
            call()
        said = str(refused.value)
        assert "\n" not in said and f"option {name} takes" in said and takes in said and repr(value) in said


def test_flatten_no_does_not_run_with_flatten():
    with pytest.raises(TypeError, match=r"^option flatten takes True or False \(a bool\), not 'no' \(a str\)$"):
        pipeline.run(EXAMPLE_HLO, flatten="no")


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_a_mapping_is_taken_where_options_are(dialect):
    fields = {"dialect": dialect, "isolate": False, "flatten": False}
    by_dict = pipeline.run(EXAMPLE_HLO, fields)
    by_options = pipeline.run(EXAMPLE_HLO, pipeline.Options(**fields))
    assert by_dict.dialect == dialect and f"{dialect}.custom_call" in by_dict.mlir
    assert by_dict.penguin_source == by_options.penguin_source and by_dict.flat_mlir is None
    assert by_dict.report.totals() == by_options.report.totals()
    # keywords still win over the mapping
    assert pipeline.run(EXAMPLE_HLO, fields, flatten=True).flat_mlir is not None


def test_an_unknown_field_or_another_kind_of_options_is_a_type_error_that_says_what_is_taken():
    names = [f.name for f in dataclasses.fields(pipeline.Options)]
    with pytest.raises(TypeError, match="unknown option.*'dialekt'") as refused:
        pipeline.run(EXAMPLE_HLO, {"dialekt": "mhlo"})
    assert all(n in str(refused.value) for n in names)
    with pytest.raises(TypeError, match=r"pipeline\.Options\(\.\.\.\) or a mapping"):
        pipeline.run(EXAMPLE_HLO, ["mhlo"])
