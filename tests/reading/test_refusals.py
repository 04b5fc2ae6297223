"""Refusals are XLA's: its message, at the line and column XLA itself reports
(`was parsing L:C`), asked of jaxlib's parser in a child process where it
may abort; an abort is refused in one line too (isolated). What is not text
is refused before XLA."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

import pipeline
from grammar_oracle import SOURCE, hand, xla_text
from pipeline.reading.text import HloSyntaxError
from pipeline.xla.native import XlaRejected


# jaxlib's parser on stdin, in a child: it may abort. Its complaint on stdout, exit 1.
_JUDGE = """\
import sys
import jaxlib._hlo as xla_hlo
try:
    xla_hlo.hlo_module_from_text(sys.stdin.buffer.read().decode("utf-8"))
except Exception as err:
    sys.stdout.write(str(err))
    sys.exit(1)
"""


@dataclass(frozen=True)
class Verdict:
    """jaxlib's parser's own verdict on a text, asked in a child process."""

    aborted: bool
    place: str = ""      # `in.hlo:L:C`, XLA's first `was parsing L:C`
    said: str = ""       # its first error message there
    then: str | None = None  # its next message, where that is at the same place

    def matches(self, message: str) -> bool:
        """Whether the chain's one line is this verdict: XLA's first message at
        XLA's place (`in.hlo:L:C: XLA's parser: MSG`); where that message only
        leads in (it ends in `:`), the line may add XLA's next one at the same place."""
        head = f"{self.place}: XLA's parser: {self.said}"
        return message == head or (self.said.endswith(":") and self.then is not None
                                   and message == f"{head} {self.then}")


def xla_verdict(text: str) -> Verdict:
    """jaxlib's parser on the text it is given for `text` (`xla_text`), in a
    child process, where it may abort."""
    done = subprocess.run([sys.executable, "-c", _JUDGE], input=xla_text(text).encode(), capture_output=True,
                          timeout=300)
    if done.returncode < 0:
        return Verdict(aborted=True)
    assert done.returncode == 1, "XLA's parser takes this input: the test is wrong"
    errors = re.findall(r"was parsing (\d+):(\d+): error: (.*)", done.stdout.decode("utf-8", "replace"))
    assert errors, done.stdout
    (line, column, said), rest = errors[0], errors[1:]
    then = rest[0][2].strip() if rest and rest[0][:2] == (line, column) else None
    return Verdict(False, f"{SOURCE}:{line}:{column}", said.strip(), then)


def refused(text: str, isolate: bool) -> str:
    with pytest.raises(XlaRejected) as info:
        pipeline.run(text, isolate=isolate, source_name=SOURCE)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


REFUSED = {
    "shape_xla_cannot_infer": "ENTRY e {\n  p = f32[4] parameter(0)\n  c = constant(1)\n  ROOT r = f32[4] add(p, p)\n}\n",
    "undefined_operand": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                         "  ROOT %n = f32[] add(%a, %nope)\n}\n",
    "undefined_control_predecessor": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                                     "  ROOT %n = f32[] negate(%a), control-predecessors={%a, %ghost}\n}\n",
    "operand_before_its_definition": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                                     "  %n = f32[] negate(%b)\n  ROOT %b = f32[] abs(%a)\n}\n",
    "control_predecessor_before_its_definition":
        "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
        "  %n = f32[] negate(%a), control-predecessors={%b}\n  ROOT %b = f32[] abs(%a)\n}\n",
    "a_name_of_a_later_computation": "HloModule m\n%f (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
                                     "  ROOT %n = f32[] negate(%a)\n}\n\nENTRY %main (a: f32[]) -> f32[] {\n"
                                     "  %a = f32[] parameter(0)\n  ROOT %c = f32[] call(%a), to_apply=%f\n}\n",
    "an_attribute_name_as_operand": "HloModule m\nENTRY %main (a: (f32[], f32[])) -> f32[] {\n"
                                    "  %a = (f32[], f32[]) parameter(0)\n  %g = f32[] get-tuple-element(%a), index=0\n"
                                    "  %n = f32[] add(%g, %index)\n  ROOT %h = f32[] get-tuple-element(%a), index=1\n}\n",
    "duplicate_instruction": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                             "  %n = f32[] negate(%a)\n  ROOT %n = f32[] abs(%a)\n}\n",
    "duplicate_computation": "HloModule m\n%f (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n\n"
                             "%f (q: f32[]) -> f32[] {\n  ROOT %q = f32[] parameter(0)\n}\n\n"
                             "ENTRY %main (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n",
    "unterminated_at_the_end": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                               "  ROOT %n = f32[] negate(%a)\n",
    "unterminated_before_the_next_computation": "HloModule m\n%f (p: f32[]) -> f32[] {\n"
                                                "  ROOT %p = f32[] parameter(0)\n\nENTRY %main (a: f32[]) -> f32[] {\n"
                                                "  ROOT %a = f32[] parameter(0)\n}\n",
    "no_module": "this is not HLO\n",
    "missing_equals": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                      "  ROOT %n f32[] negate(%a)\n}\n",
    "colon_equals": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                    "  ROOT %n := f32[] negate(%a)\n}\n",
    "header_attribute_without_equals": "HloModule m, is_scheduled true\nENTRY %main (a: f32[]) -> f32[] {\n"
                                       "  ROOT %a = f32[] parameter(0)\n}\n",
    "unknown_called_computation": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                                  "  ROOT %c = f32[] call(%a), to_apply=nowhere\n}\n",
    "called_computation_after_its_caller": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n"
                                           "  %a = f32[] parameter(0)\n  ROOT %c = f32[] call(%a), to_apply=%f\n}\n\n"
                                           "%f (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}\n",
    "unterminated_string": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n"
                           "  ROOT %a = f32[] parameter(0), metadata={op_name=\"oops}\n}\n",
    "an_instruction_waiting_for_itself": "HloModule m\nENTRY %main (a: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
                                         "  ROOT %n = f32[] negate(%a), control-predecessors={%n}\n}\n",
}


@pytest.mark.parametrize("name", REFUSED)
def test_a_refusal_is_xlas_at_the_users_line(name):
    text = REFUSED[name]
    want = xla_verdict(text)
    assert not want.aborted  # these XLA refuses in words, at a place
    for isolate in (False, True):
        got = without_hint(text, refused(text, isolate=isolate))
        assert want.matches(got), (got, want)


def without_hint(text: str, message: str) -> str:
    """XLA's part of the chain's line: the chain's own hint, where it adds one
    (`; 'b' is defined below, …`), taken off the end."""
    from pipeline.reading.hints import parser_hint

    hint = parser_hint(text, message)
    return message[:-len(f"; {hint}")] if hint and message.endswith(f"; {hint}") else message


def test_a_shape_xla_cannot_infer_is_refused_where_the_user_left_it_out():
    text = REFUSED["shape_xla_cannot_infer"]
    assert refused(text, isolate=False) == "in.hlo:3:15: XLA's parser: cannot infer shape for opcode: constant"
    assert text.splitlines()[2][14:].startswith("(1)")  # column 15: where the shape should have been read


# `%t#i` past the tuple's elements, or of no tuple: jaxlib 0.10.2's parser
# (on the chain's explicit get-tuple-elements) aborts the process; 0.12 refuses in words.
TUPLE_ELEMENT_REFUSED = {
    "past_an_inferred_tuple": hand("""
        HloModule m
        ENTRY e {
          p = f32[4] parameter(0)
          t = tuple(p, p)
          ROOT r = add(%t#0, %t#2)
        }
    """),
    "past_a_written_tuple": hand("""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %t = (f32[4]{0}, f32[4]{0}) tuple(%a, %a)
          ROOT %r = f32[4]{0} add(%t#0, %t#2)
        }
    """),
    "of_no_tuple": hand("""
        HloModule m
        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          ROOT %r = f32[4]{0} add(%a, %a#0)
        }
    """),
}


@pytest.mark.parametrize("name", TUPLE_ELEMENT_REFUSED)
def test_a_tuple_element_xla_cannot_take_is_refused_in_one_line(name):
    text = TUPLE_ELEMENT_REFUSED[name]
    want = xla_verdict(text)
    got = refused(text, isolate=True)  # isolated only: XLA may abort the process
    if want.aborted:  # one line, and the reason XLA gave
        assert re.fullmatch(rf"{SOURCE}: XLA's parser aborted \(signal [0-9]+\): Check failed: .+", got), got
    else:
        assert want.matches(got), (got, want)


NOT_UTF8 = "HloModule m\nENTRY %main {\n  %a = f32[] parameter(0), metadata={op_name=\"é".encode() + b"\xff\"}\n}\n"
# The column counts characters (`é` is one), not bytes.
NOT_UTF8_COLUMN = len(NOT_UTF8[:NOT_UTF8.index(b"\xff")].decode().split("\n")[-1]) + 1


@pytest.mark.parametrize("data,message", [
    (b"", "in.hlo:1:1: input is empty; expected an HLO module"),
    (b"  \n\n\t", "in.hlo:1:1: input is empty; expected an HLO module"),
    ("\ufeffHloModule m\n".encode(), "in.hlo:1:1: the input starts with a byte-order mark"),
    (NOT_UTF8, f"in.hlo:3:{NOT_UTF8_COLUMN}: input is not UTF-8 text (byte 0xff)"),
], ids=["empty", "blank", "byte-order-mark", "not-utf8"])
def test_what_is_no_text_is_refused_before_xla(data, message):
    with pytest.raises(HloSyntaxError) as info:
        pipeline.run(data, isolate=False, source_name=SOURCE)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
