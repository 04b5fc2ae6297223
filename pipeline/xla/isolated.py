"""XLA's own HLO parser, printer and importer, in this process or in a
child (`pipeline.xla.worker`: this process's warm child, where XLA may
abort): the one reader of HLO in the chain, and the oracle for every
module it writes."""

from __future__ import annotations

import re

from google.protobuf.message import DecodeError

from pipeline.reading.lexical import TUPLE_ELEMENT, module_header
from pipeline.reading.parsed import Parsed
from pipeline.xla import native
from pipeline.xla.native import XlaRejected, canonical_text, parse_with_xla, refusal
from pipeline.xla.versions import xla_reads_tuple_element_operands
from pipeline.xla import worker as xla_child
from pipeline.xla.worker import WorkerDied, WorkerGone, WorkerTimedOut, XlaWorker, how_it_ended

__all__ = ["XlaRejected", "XlaWorker", "WorkerDied", "abort_reason", "aborted", "canonical_text", "cpu_outputs",
           "first_said", "own_proto_verdict", "parse", "parse_with_xla", "print_module", "read_proto", "refusal"]


# The `%t#i` operand; jaxlib 0.10.2's parser does not know it (pipeline.xla.versions).
TUPLE_ELEMENT_OPERAND = re.compile(TUPLE_ELEMENT)


def readable_text(text: str) -> str:
    """`text` as this jaxlib's parser can read it: newer XLA's `%t#i` operands
    made explicit get-tuple-elements where it cannot (jaxlib 0.10.2)."""
    # `#` first: a scan for one byte, where the operand's rule tries every position of a long text.
    if "#" in text and TUPLE_ELEMENT_OPERAND.search(text) and not xla_reads_tuple_element_operands():
        from pipeline.reading.tuple_operands import explicit_tuple_elements

        return explicit_tuple_elements(text)
    return text


def parse(text: str, source: str | None = None, *, isolate: bool = False,
          worker: XlaWorker | None = None) -> Parsed:
    """XLA's parse of `text` with the names as written: XlaRejected, naming
    `source` and XLA's line and column, if XLA refuses it. With `isolate`
    XLA parses in a child (`worker`, or this process's warm child): an
    abort is an XlaRejected too."""
    text = readable_text(text)
    if not isolate:
        answer = native.parse_with_xla(text, source).as_serialized_hlo_module_proto()
    else:
        status, answer = _in_child(worker, "parse", text.encode("utf-8"), "XLA's parser", source)
        if status != "ok":
            raise refusal(answer.decode("utf-8", "replace"), source)
    try:
        return Parsed.from_serialized(answer, text, source)
    except DecodeError:  # protobuf decodes no deeper than XLA reads back (a shape nested 100 deep): XLA says why
        own_proto_verdict(answer, text, source, isolate=isolate)
        raise


def own_proto_verdict(data: bytes, text: str | None, source: str | None, *, isolate: bool = False) -> None:
    """XLA's verdict on its own proto `data` of `text` (None: XLA reads the
    text again, in a fresh child with `isolate`): if XLA refuses it, that is
    the input's problem (XLA's text parser checks less than its proto reader:
    a pipelined recv-done, a shape nested past 100 levels), and the
    XlaRejected says so."""
    try:
        if not data:
            data = parse(text, source, isolate=isolate).serialized()
        print_module(data, source, isolate=isolate)
    except XlaRejected as own:
        raise XlaRejected(f"{source}: XLA's parser reads the text, but XLA refuses its own proto of it "
                          f"(the form link #1 edits and link #2 imports): {getattr(own, 'reason', own)}") from None


def _in_child(worker: XlaWorker | None, command: str, payload: bytes, what: str,
              source: str | None) -> tuple[str, bytes]:
    """One request to `worker` (or to this process's warm child); an abort
    is an XlaRejected that names `what` aborted, and why."""
    def refusal_of(died: WorkerDied) -> XlaRejected:
        if isinstance(died, WorkerTimedOut):
            where = f"{source}: " if source else ""
            return XlaRejected(f"{where}{what} gave no answer within {died.seconds:g} s (stopped): set "
                               f"HLO2PENGUIN_XLA_TIMEOUT to the seconds it may take (0: no limit)")
        return aborted(what, died.returncode, died.stderr, source)

    return ask(worker, command, payload, refusal_of)


def ask(worker: XlaWorker | None, command: str, payload: bytes, refusal_of,
        timeout: float | None = None, meanwhile=None) -> tuple[str, bytes]:
    """(status, answer) of `worker` (None: the warm child) for one request;
    if the child dies on it (or gives no answer within `timeout` seconds,
    by default `worker.CALL_SECONDS`: then it is killed), the exception
    `refusal_of(WorkerDied)` (the next request starts a new child). The
    request is asked again, once, of a fresh child where the death was not
    its input's: the shared child had died on another call's input, or a
    signal from outside killed it (`WorkerDied.from_outside`).
    `meanwhile`, a callable that raises nothing, runs in this process
    while the child works on the request (once, whatever the child does)."""
    worker = worker or xla_child.shared()
    try:
        if meanwhile is None:
            return worker.ask(command, payload, timeout)
        with worker.reserved():
            worker.submit(command, payload)
            meanwhile()
            return worker.collect(xla_child.CALL_SECONDS if timeout is None else timeout)
    except WorkerDied as died:
        if not isinstance(died, WorkerGone) and not died.from_outside:
            raise refusal_of(died) from None
    try:
        return xla_child.shared().ask(command, payload, timeout)
    except WorkerDied as died:
        raise refusal_of(died) from None


def cpu_outputs(proto: bytes, inputs, source: str | None = None, *, timeout: float | None = None,
                worker: XlaWorker | None = None) -> list:
    """What XLA:CPU computes from a serialized HloModuleProto for `inputs`,
    compiled and run in the warm child (which keeps what it compiled: the
    same module with new inputs is only run). XlaRejected, one line naming
    `source`, if XLA refuses to compile or run it, aborts on it, or gives no
    answer within `timeout` seconds (the child is then killed)."""
    import pickle

    import numpy as np

    payload = pickle.dumps((proto, [np.asarray(x) for x in inputs]), protocol=pickle.HIGHEST_PROTOCOL)

    def refusal_of(died: WorkerDied) -> XlaRejected:
        if isinstance(died, WorkerTimedOut):
            where = f"{source}: " if source else ""
            return XlaRejected(f"{where}XLA:CPU gave no answer within {died.seconds:g} s running the module "
                               f"(stopped): raise the time limit (xla_timeout=) if it needs longer")
        return aborted("XLA:CPU", died.returncode, died.stderr, source)

    status, answer = ask(worker, "run", payload, refusal_of, timeout)
    if status == "broken":  # the child's state, not the module (it has ended): once more, on a fresh child
        status, answer = ask(None, "run", payload, refusal_of, timeout)
    if status != "ok":
        said = answer.decode("utf-8", "replace")
        where = f"{source}: " if source else ""
        raise XlaRejected(f"{where}XLA:CPU cannot compile or run the module: {first_said(said) or said}")
    return pickle.loads(answer)


def print_module(data: bytes, source: str | None = None, *, isolate: bool = False,
                 worker: XlaWorker | None = None) -> str:
    """XLA's printing of a serialized module (link #1's output): XLA reads it
    back first, so this is also XLA's verdict on it (XlaRejected if it refuses)."""
    if not isolate:
        try:
            return native.print_proto(data)
        except Exception as err:  # jaxlib raises its own error type
            raise _refused_proto(source, first_said(str(err)) or str(err)) from None
    status, answer = _in_child(worker, "print", data, "XLA reading link #1's output", source)
    if status != "ok":
        said = answer.decode("utf-8", "replace")
        raise _refused_proto(source, first_said(said) or said)
    return answer.decode("utf-8")


def read_proto(data: bytes, source: str | None = None, *, isolate: bool = False,
               worker: XlaWorker | None = None) -> None:
    """XLA's verdict on a module given as a serialized HloModuleProto (an
    input, not link #1's output): XlaRejected, `source: XLA refuses the
    module: REASON`, if XLA's proto reader refuses it (or, with `isolate`,
    aborts on it)."""
    if not isolate:
        try:
            return native.read_proto(data)
        except Exception as err:  # jaxlib raises its own error type
            raise _refused_proto(source, first_said(str(err)) or str(err)) from None
    status, answer = _in_child(worker, "read", data, "XLA reading the module", source)
    if status != "ok":
        said = answer.decode("utf-8", "replace")
        raise _refused_proto(source, first_said(said) or said)


# What a module's header sets in XLA's HloModuleConfig, which its proto does
# not carry: XLA prints them in this order, before frontend_attributes.
_CONFIG_ATTRIBUTES = ("allow_spmd_sharding_propagation_to_parameters", "allow_spmd_sharding_propagation_to_output",
                      "replica_count", "num_partitions")


def with_module_config(printed: str, text: str | None) -> str:
    """XLA's printing of a module from its proto, with the header attributes
    the proto cannot carry (`num_partitions=2`, …) as the input's text set them."""
    header = module_header(text or "")
    if header is None:
        return printed
    found = []
    for key in _CONFIG_ATTRIBUTES:
        m = re.search(rf"\b{key}\s*=\s*(\{{[^}}]*\}}|[0-9]+)", header)
        if m and f"{key}=" not in printed.split("\n", 1)[0]:
            found.append(key + "=" + "".join(m.group(1).split()))
    if not found:
        return printed
    first, _, rest = printed.partition("\n")
    at = first.find(", frontend_attributes=")
    at = len(first) if at < 0 else at
    return first[:at] + "".join(f", {a}" for a in found) + first[at:] + "\n" + rest


def _refused_proto(source: str | None, reason: str) -> XlaRejected:
    err = XlaRejected(f"{source or 'module'}: XLA refuses the module: {reason}")
    err.reason = reason
    return err


def aborted(what: str, returncode: int, stderr: str, source: str | None) -> XlaRejected:
    """`source: XLA's parser aborted (signal 6): Check failed: …`, one line."""
    where = f"{source}: " if source else ""
    return XlaRejected(f"{where}{what} aborted ({how_it_ended(returncode)}): {abort_reason(stderr)}")


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
