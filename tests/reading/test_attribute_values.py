"""Attribute values and comments that hold what looks like HLO (braces,
commas, quotes, definitions) are no HLO to the chain: its edges and names
are XLA's, and what link #1 does not edit XLA prints as it came."""

from __future__ import annotations

import pytest

from grammar_cases import ATTRIBUTES, RENAMED_IN
from grammar_oracle import assert_link1_kept_the_rest, through_the_chain


@pytest.mark.parametrize("name", ATTRIBUTES)
def test_attribute_values_and_comments_are_no_hlo(name):
    text, edges = ATTRIBUTES[name]
    through_the_chain(text, RENAMED_IN.get(name, {}), edges)


def test_what_link1_does_not_touch_xla_prints_as_it_came():
    for name, (text, edges) in ATTRIBUTES.items():
        result, want = through_the_chain(text, RENAMED_IN.get(name, {}), edges)
        assert_link1_kept_the_rest(text, result, want)
