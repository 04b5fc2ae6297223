"""XLA's own HLO parser, the oracle for every HLO text the chain writes."""

from __future__ import annotations

import re
import subprocess
import sys

import jaxlib._hlo as xla_hlo


class XlaRejected(ValueError):
    """XLA's parser refused a module; the message is its first error, on one line."""


_ERROR = re.compile(r"(?:was parsing )?(\d+):(\d+): error: ([^\n]*)")


def parse_with_xla(text: str, source: str | None = None):
    """`jaxlib._hlo.hlo_module_from_text`, with XLA's multi-line complaint
    folded into `source:line:col: message`."""
    try:
        return xla_hlo.hlo_module_from_text(text)
    except Exception as err:  # jaxlib raises its own XlaRuntimeError type
        raise XlaRejected(_one_line(str(err), source)) from None


def _one_line(message: str, source: str | None) -> str:
    m = _ERROR.search(message)
    where = f"{source}:" if source else ""
    if m:
        return f"{where}{m.group(1)}:{m.group(2)}: XLA's parser: {m.group(3).strip()}"
    first = next((line.strip() for line in message.splitlines() if line.strip()), "unknown error")
    return f"{where} XLA's parser: {first}".strip()


def canonical_text(text: str) -> str:
    """XLA's printing of a module under one fixed set of options: two texts
    that XLA reads as the same module print the same."""
    options = xla_hlo.HloPrintOptions()
    options.print_large_constants = True
    return parse_with_xla(text).to_string(options)


# The `%t#i` operand newer XLA prints; jaxlib 0.10.2's parser does not know it.
TUPLE_ELEMENT_OPERAND = re.compile(r"%[A-Za-z0-9_][A-Za-z0-9_.\-]*#[0-9]")


def check(text: str, source: str | None = None, *, isolate: bool = False) -> None:
    """XLA's parser's verdict on `text`: XlaRejected if it refuses it. XLA's
    parser aborts the process it runs in on some modules it could have refused
    (a `parameter(5)` past the signature, a `reshape` of the wrong size, ...):
    with `isolate` it runs in a child process, and an abort is an XlaRejected too."""
    if not isolate:
        parse_with_xla(text, source)
        return
    done = subprocess.run([sys.executable, "-m", "pipeline._import_worker", "--parse-only"],
                          input=text.encode("utf-8"), capture_output=True, check=False)
    if done.returncode == 0:
        return
    said = done.stderr.decode("utf-8", "replace")
    if done.returncode < 0:
        raise aborted("XLA's parser", done.returncode, said, source)
    raise refusal(said, source)


def refusal(message: str, source: str | None) -> XlaRejected:
    """XLA's parser's complaint (as it prints it) as an XlaRejected, on one line."""
    return XlaRejected(_one_line(message, source))


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


def first_said(text: str, skip: tuple[str, ...] = ()) -> str | None:
    """The first line of what XLA printed that is its own words: not a glog
    line, not in a stack trace, not blank, not starting with `skip`; else the
    message of its first error log line (prefix cut); else None."""
    logged = []
    for line in _STACK_TRACE.sub("", text).splitlines():
        line = line.strip()
        if not line or line.startswith(skip):
            continue
        log = _LOG_LINE.match(line)
        if log is None:
            return line
        if line[0] in "EF" and log.group(1).strip():
            logged.append(log.group(1).strip())
    return logged[0] if logged else None


def check_original(original: str | bytes, source: str | None, *, isolate: bool = False) -> None:
    """XLA rejected a text we derived from `original` (link #1's output, link
    #2's keyed copy), whose line numbers are not the user's: raise XLA's
    complaint about `original` itself if it has one, so that the message names
    the user's line. Only on the error path: a module XLA accepts is parsed once."""
    if isinstance(original, bytes):
        original = original.decode("utf-8", "replace")
    if TUPLE_ELEMENT_OPERAND.search(original):  # jaxlib 0.10.2 would reject `%t#i` itself
        return
    try:
        check(original, source, isolate=isolate)
    except XlaRejected as err:
        raise err from None
