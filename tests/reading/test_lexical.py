"""`pipeline.reading.lexical`'s rules against XLA's parser: modules that
differ only in one token (a module's or a computation's name, the blanks
and comments before the header, a string, the `control-predecessors=`
attribute) are judged by XLA, and the rules must say the same: a text
starts as a module (`looks_like_hlo`, `hlo_module_name`, a head line)
exactly where XLA reads it, with the name XLA gives it."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from passes.errors import ChainError
from pipeline.reading import lexical
from pipeline.reading.lexical import hlo_module_name, looks_like_hlo
from pipeline.xla.native import parse_with_xla

BODY = "{\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n"
ENTRY = "ENTRY entry_x " + BODY

# XLA's lexer's keywords and the element types of xla_data.proto's
# PrimitiveType, as XLA's text writes them (written out here, not taken from
# the rules under test), and words next to them that are none.
WORDS = ["true", "false", "inf", "nan", "HloModule", "ENTRY", "ROOT", "FileLocations", "FileNames", "FunctionNames",
         "StackFrames", "maximal", "replicated", "manual", "last_tile_dim_replicate", "shard_as", "shard_like",
         "unknown", "unreduced", "pred", "token", "opaque", "tuple", "buffer", "opaque_type", "s1", "s2", "s4", "s8",
         "s16", "s32", "s64", "u1", "u2", "u4", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bf16", "c64", "c128",
         "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz", "f8e3m4", "f4e2m1fn",
         "f8e8m0fnu", "f8", "f128", "s3", "c32", "Pred", "NaN", "nan2", "true_", "ENTRY2", "bf_io", "s32x"]
# Names as people and generators write them, and as they go wrong: digits,
# dots and dashes first, `%` or none, non-ASCII letters, other punctuation,
# the words above.
NAMES = ["main", "_", "_a", "a.b-c", "a1", "jit_f.1", "A", "m.", "x-", "1main", "0", "1e5", "1x2", "12_34",
         "-a", ".a", "é", "aé", "a$b", "a/b", "a#1", "m:", *WORDS]
NAMES += ["%" + n for n in NAMES]


def xla_reads(text: str) -> str | None:
    """XLA's module name if its parser reads `text`, else None."""
    try:
        return parse_with_xla(text).name
    except ChainError:
        return None


def header_form(name: str) -> str:
    return f"HloModule {name}\n\n{ENTRY}"


# A module without a header, as XLA's unit tests write them: its first computation's head.
HEAD_FORMS = {
    "entry": "ENTRY {name} " + BODY,
    "entry_signature": "ENTRY {name} (p: f32[]) -> f32[] " + BODY,
    "signature": "{name} (p: f32[]) -> f32[] " + BODY + "\n" + ENTRY,
    "bare": "{name} " + BODY + "\n" + ENTRY,
}


def assert_header_agrees(name: str) -> None:
    text = header_form(name)
    xla = xla_reads(text)
    assert hlo_module_name(text) == xla, (name, xla)
    assert looks_like_hlo(text) == (xla is not None), name


def assert_head_agrees(name: str, form: str) -> None:
    """Without a header the text starts as a module where XLA reads it; after
    one, the head's line is a head where XLA reads the module."""
    text = HEAD_FORMS[form].replace("{name}", name, 1)
    read = xla_reads(text) is not None
    assert looks_like_hlo(text) == read, (name, form, read)
    read = xla_reads("HloModule m\n" + text) is not None
    head_line = text.split("\n", 1)[0]
    assert (re.match(lexical.COMPUTATION_HEAD_LINE, head_line) is not None) == read, (name, form, read)


@pytest.mark.parametrize("name", NAMES)
def test_a_module_s_name_is_taken_where_xla_takes_it(name):
    assert_header_agrees(name)


@pytest.mark.parametrize("form", sorted(HEAD_FORMS))
@pytest.mark.parametrize("name", NAMES)
def test_a_computation_s_head_starts_a_module_where_xla_reads_one(name, form):
    assert_head_agrees(name, form)


_CHARACTERS = st.sampled_from("ab_Zz09.-%$é:/#")


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.text(_CHARACTERS, min_size=1, max_size=6).filter(lambda n: ":" not in n[:-1]),
       form=st.sampled_from(["header", *sorted(HEAD_FORMS)]))
@example(name="1a", form="header")
@example(name="%9", form="entry")
def test_generated_names_are_judged_as_xla_judges_them(name, form):
    """A `:` only ends a name (XLA's lexer reads `name:` as one token); in the middle it starts another token."""
    if form == "header":
        assert_header_agrees(name)
    else:
        assert_head_agrees(name, form)


@pytest.mark.parametrize("before", [
    "", " ", "\t", "\r", "\n\n", "\f", "\v", "\u00a0", "\u2028", "// c\n", "// c\r", "// c\r\n", "/* c */",
    "/* a\n b */ // c\n", "/* open", "/ ", "# c\n", "/**/\f"])
@pytest.mark.parametrize("between", [" ", "\n", "\t", "/* c */", "/**/", "\f", "", "// c\n"])
def test_the_blanks_and_comments_before_and_in_the_header_as_xla_skips_them(before, between):
    text = f"{before}HloModule{between}m\n\n{ENTRY}"
    xla = xla_reads(text)
    assert hlo_module_name(text) == xla, (before, between, xla)
    if xla is not None:
        assert lexical.after_comments(text).startswith("HloModule")


@pytest.mark.parametrize("string", [
    '"a"', '""', "'a'", "''", '"a\nb"', "'a\nb'", '"a\\"b"', "'a\\'b'", '"a\\\nb"', "'a\\\nb'", '"a\'b"',
    "'a\"b'", '"a', "'a", '"a\\"', '"{"', "'{'"])
def test_a_string_is_what_xla_reads_as_one(string):
    text = ("HloModule m\nENTRY main {\n  p = f32[] parameter(0)\n"
            f"  ROOT n = f32[] custom-call(p), custom_call_target={string}\n}}\n")
    assert (xla_reads(text) is not None) == (re.fullmatch(lexical.STRING, string) is not None), string


@pytest.mark.parametrize("between", ["", " ", "/**/"])
def test_control_predecessors_is_one_token_with_its_equals_sign(between):
    text = ("HloModule m\nENTRY main {\n  p = f32[] parameter(0)\n  a = f32[] abs(p)\n"
            f"  ROOT n = f32[] negate(p), control-predecessors{between}={{a}}\n}}\n")
    assert (xla_reads(text) is not None) == (lexical.CONTROL_PREDECESSORS in text), between


def test_a_reserved_word_is_refused_bare_and_taken_after_a_percent_sign():
    """Every word the rules reserve is one XLA's lexer reserves (as a computation's name)."""
    for word in lexical.RESERVED_WORDS:
        assert xla_reads(f"ENTRY {word} {BODY}") is None, word
        assert xla_reads(f"ENTRY %{word} {BODY}") is not None, word
