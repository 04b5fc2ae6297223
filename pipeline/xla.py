"""XLA's own HLO parser, the oracle for every HLO text the chain writes."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from passes.hlo.shapes import xla_shapes
from passes.hlo.xla import XlaRejected, canonical_text, parse_with_xla, refusal
from pipeline.versions import xla_reads_tuple_element_operands

__all__ = ["XlaRejected", "abort_reason", "aborted", "canonical_text", "check", "check_original",
           "first_said", "parse_with_xla", "refusal", "shape_inference"]


# The `%t#i` operand; jaxlib 0.10.2's parser does not know it (pipeline.versions).
TUPLE_ELEMENT_OPERAND = re.compile(r"%[A-Za-z0-9_][A-Za-z0-9_.\-]*#[0-9]")


def check(text: str, source: str | None = None, *, isolate: bool = False,
          original: str | bytes | None = None, original_source: str | None = None) -> None:
    """XLA's parser's verdict on `text`: XlaRejected if it refuses it. XLA's
    parser aborts the process it runs in on some modules it could have refused
    (a `parameter(5)` past the signature, a `reshape` of the wrong size, ...):
    with `isolate` it runs in a child process, and an abort is an XlaRejected too.
    `original`, the user's text `text` was made from, is judged first (in the
    same child), its refusal naming `original_source`."""
    if isinstance(original, bytes):
        original = original.decode("utf-8", "replace")
    if original is not None and not judged_by_xla(original):
        original = None
    if not isolate:
        if original is not None:
            parse_with_xla(original, original_source)
        parse_with_xla(text, source)
        return
    _in_child(text, "--parse-only", source, original, original_source)


def shape_inference(source: str | None = None, *, isolate: bool = False):
    """`text -> XLA's shape of every instruction, by name`, for
    `read_module(shapes_of=...)`: where the text leaves shapes out. XlaRejected
    names `source`; with `isolate`, XLA runs in a child process."""
    if not isolate:
        return lambda text: xla_shapes(text, source)
    return lambda text: json.loads(_in_child(text, "--shapes", source))


def _in_child(text: str, mode: str, source: str | None, original: str | None = None,
              original_source: str | None = None) -> str:
    from pipeline._import_worker import frame

    data = text.encode("utf-8")
    if original is not None:
        data = frame(original.encode("utf-8"), data)
    done = subprocess.run([sys.executable, "-m", "pipeline._import_worker", mode],
                          input=data, capture_output=True, check=False)
    if done.returncode == 0:
        return done.stdout.decode("utf-8")
    said = done.stderr.decode("utf-8", "replace")
    if done.returncode < 0:
        raise aborted("XLA's parser", done.returncode, said, source if original is None else original_source)
    raise refusal(said, original_source if done.returncode == 5 else source)


def aborted(what: str, returncode: int, stderr: str, source: str | None) -> XlaRejected:
    """`source: XLA's parser aborted (signal 6): Check failed: …`, one line."""
    where = f"{source}: " if source else ""
    return XlaRejected(f"{where}{what} aborted (signal {-returncode}): {abort_reason(stderr)}")


def abort_reason(stderr: str) -> str:
    """The line that says why XLA aborted, out of what it printed: a failed
    CHECK (with XLA's own explanation when it gives one), else the first line
    that is not log noise."""
    lines = [line.strip() for line in stderr.splitlines()
             if line.strip() and not line.startswith("hlo2penguin-worker:")]
    for i, line in enumerate(lines):
        m = re.search(r"\] (Check failed: .*)", line)
        if m:
            reason = m.group(1).strip()
            if i + 1 < len(lines) and lines[i + 1].startswith("ERROR: "):
                reason += f" ({lines[i + 1][len('ERROR: '):]})"
            return reason
    return first_said("\n".join(lines), skip=("***", "@", "WARNING: All log messages")) or "no message"


# glog's line prefix, `E1129 22:41:57.883276   10205 status_macros.cc:58] `, in any month.
_LOG_LINE = re.compile(r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+\S+:\d+\]\s?(.*)")
_STACK_TRACE = re.compile(r"\*\*\* Begin stack trace \*\*\*.*?(?:\*\*\* End stack trace \*\*\*|\Z)", re.S)
# What XLA 0.12 prints after an error status: the source files it passed through, up to a blank line.
_SOURCE_TRACE = re.compile(r"^=== Source Location Trace: ===[ \t]*$.*?(?:^\s*$|\Z)", re.S | re.M)


def first_said(text: str, skip: tuple[str, ...] = ()) -> str | None:
    """The first line of what XLA printed that is its own words: not a glog
    line, not in a stack trace, not blank, not starting with `skip`; else the
    message of its first error log line (prefix cut); else None."""
    logged = []
    for line in _SOURCE_TRACE.sub("", _STACK_TRACE.sub("", text)).splitlines():
        line = line.strip()
        if not line or line.startswith(skip):
            continue
        log = _LOG_LINE.match(line)
        if log is None:
            return line
        if line[0] in "EF" and log.group(1).strip():
            logged.append(log.group(1).strip())
    return logged[0] if logged else None


def judged_by_xla(text: str) -> bool:
    """Whether this XLA's verdict on the user's `text` is the chain's: always,
    but for the `%t#i` operands of newer XLA's dumps, which jaxlib 0.10.2's
    parser cannot read and the chain reads as explicit get-tuple-elements."""
    return not (TUPLE_ELEMENT_OPERAND.search(text) and not xla_reads_tuple_element_operands())


def check_original(original: str | bytes, source: str | None, *, isolate: bool = False) -> None:
    """XLA rejected a text we derived from `original` (link #1's output, link
    #2's keyed copy), whose line numbers are not the user's: raise XLA's
    complaint about `original` itself if it has one, so that the message names
    the user's line. Only on the error path: a module XLA accepts is parsed once."""
    if isinstance(original, bytes):
        original = original.decode("utf-8", "replace")
    if not judged_by_xla(original):
        return
    try:
        check(original, source, isolate=isolate)
    except XlaRejected as err:
        raise err from None
