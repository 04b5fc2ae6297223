"""Each link's output checked as it is handed on, as XLA and MLIR check
their own passes' output.

Always: link #3 runs inside MLIR's `PassManager` with its verifier on
(`run_link3`), as `hlo2penguin-opt` runs it, so MLIR verifies the module
after the pass.

With `verify_each` (`--verify-each`, `pipeline.run(..., verify_each=True)`,
or `HLO2PENGUIN_VERIFY_EACH=1` in the environment), `handed_on` also checks,
after each step:

- link #1's output: XLA reads its proto back and prints it, and XLA's text
  parser reads that text again (where it reads the input's own printing);
- every MLIR module a later link reads: MLIR's verifier after link #2, and
  on the module the printer (link #4) reads.

A check that fails is a `LinkCheckFailed`: one line that names the link
whose output it is.
"""

from __future__ import annotations

import os

from jaxlib.mlir import ir, passmanager

from passes.errors import ChainError, first_line
from passes.locations import hlo_name
from pipeline.xla.isolated import XlaRejected, own_proto_verdict, parse, print_module

ENVIRONMENT = "HLO2PENGUIN_VERIFY_EACH"


class LinkCheckFailed(ChainError):
    """A link handed on a module its reader refuses; the message names the link."""


def verify_each(options) -> bool:
    """Whether the checks of `verify_each` run: the option, or
    HLO2PENGUIN_VERIFY_EACH=1 (or true, yes, on) in the environment."""
    return options.verify_each or os.environ.get(ENVIRONMENT, "").strip().lower() in ("1", "true", "yes", "on")


def run_link3(flatten, module: ir.Module, where: str, names=None) -> None:
    """Link #3 (`flatten`, the pass) on `module` in a PassManager anchored on
    builtin.module with MLIR's verifier on, as `hlo2penguin-opt` runs it.
    The pass's own errors (FlattenError) pass through; a module the
    verifier refuses after the pass is a LinkCheckFailed naming link #3."""
    with module.context:
        pm = passmanager.PassManager("builtin.module")
    pm.enable_verifier(True)
    flatten.add_to(pm)
    try:
        pm.run(module.operation)
    except ir.MLIRError as err:
        raise _refused(err, f"link #3 ({flatten.argument})", where, names, after=True) from None


def handed_on(step: str, work) -> None:
    """With `verify_each`: the check of what the step named `step` hands on
    (nothing for the other steps)."""
    if not verify_each(work.options):
        return
    if step == "write" and work.options.reify:
        check_link1(work)
    elif step in ("link #2", "link #3"):  # the printer reads the last of them (link #3's ran under the
        check_mlir(work.mlir, step, work.where, work.names)  # PassManager's verifier too)


def check_link1(work) -> None:
    """XLA reads link #1's output back (its proto, as link #2 will) and
    prints it; XLA's text parser reads that text again. A refusal that is
    the input's (XLA refuses its own proto of the unedited input, or its
    printing of it) keeps its own message or none; any other names link #1.
    XLA reads them in its child whatever `isolate` says: the chain's own
    output is no input the user vouched for, and XLA's parser can crash on
    its own printing of a module (a segmentation fault, seen with jax 0.12)."""
    try:
        text = print_module(work.hlo_proto, f"{work.where} after link #1", isolate=True, worker=work.importer)
    except XlaRejected as err:
        # XLA refuses its own proto of the unedited input: the input's problem, said so (not link #1's)
        own_proto_verdict(work.read_proto, work.parsed.text, work.where, isolate=work.options.isolate)
        raise LinkCheckFailed(f"link #1 hands on a module XLA refuses: {_reason(err)}", work.where) from None
    try:
        parse(text, f"{work.where} after link #1", isolate=True, worker=work.importer)
    except XlaRejected as err:
        if _input_round_trips(work):
            raise LinkCheckFailed(f"link #1 hands on a module whose printing XLA's parser refuses: {_reason(err)}",
                                  work.where) from None


def _input_round_trips(work) -> bool:
    """Whether XLA's parser reads XLA's printing of its own proto of the
    unedited input. XLA prints some modules as text its parser refuses (a
    computation called before the text defines it, some async ops): where
    the input's own printing is refused, a refusal of link #1's says
    nothing about link #1."""
    try:
        data = work.read_proto or parse(work.parsed.text, work.where, isolate=True).serialized()
        parse(print_module(data, work.where, isolate=True), work.where, isolate=True)
    except XlaRejected:
        return False
    return True


def check_mlir(module: ir.Module, link: str, where: str, names=None) -> None:
    """MLIR's verifier on `module`, the output of `link`: a LinkCheckFailed
    naming `link` if it refuses it."""
    try:
        ok = module.operation.verify()
    except ir.MLIRError as err:
        raise _refused(err, link, where, names) from None
    if ok is False:  # bindings that answer instead of raising
        raise LinkCheckFailed(f"{link} hands on a module MLIR's verifier refuses", where)


def _refused(err: ir.MLIRError, link: str, where: str, names=None, after: bool = False) -> LinkCheckFailed:
    """`where: LINK hands on a module MLIR's verifier refuses: %name in %computation: MESSAGE`
    (`after`: `where: MLIR's verifier refuses the module after LINK: …`, for
    the PassManager's verifier, which does not read the module before the pass)."""
    details = getattr(err, "error_diagnostics", None) or []
    said = first_line(err)
    if details:
        d = details[0]
        said = first_line(ValueError(d.message))
        name, computation = _hlo_place(d.location, names)
        if name:
            said = f"%{name}{f' in %{computation}' if computation else ''}: {said}"
    if after:
        return LinkCheckFailed(f"MLIR's verifier refuses the module after {link}: {said}", where)
    return LinkCheckFailed(f"{link} hands on a module MLIR's verifier refuses: {said}", where)


def _hlo_place(location, names) -> tuple[str | None, str | None]:
    """The HLO instruction and computation a diagnostic's location names, if any."""
    try:
        return names.of_location(location) if names is not None else hlo_name(location)
    except Exception:  # a location the table does not know: the message alone
        return None, None


def _reason(err: Exception) -> str:
    """XLA's words, without the place its message starts with."""
    return getattr(err, "reason", None) or first_line(err)
