"""A Penguin program handed to the verifier runs in a child process, with
limits: the verifier must not trust what it judges. A program that exits,
hangs, takes all memory, kills its process or raises is one line (a
VerifyError), never the verifier's own end, and never a pass.

    with Sandboxed(source, "program.py", timeout=300, memory_mib=4096) as child:
        ...                      # the parent parses the HLO meanwhile
        module = child.module()  # the module the program built, rebuilt here

The child (`main`, a fresh interpreter running this copy of the project)
limits its address space (RLIMIT_AS) and the files it writes (RLIMIT_FSIZE)
to `memory_mib`, reads the program's source on stdin, runs it with the
Penguin runtime (`pipeline.verifier.program.run_program`, the chain's
loader), and writes one JSON answer on the file that was its stdout: the
module as plain data (`pipeline.verifier.wire`), or what went wrong. The
program's own prints go to stderr. The parent waits `timeout` seconds of
wall clock, then kills the child's whole process group. Only JSON comes
back: never a pickle, never an object the program made.

The chain's own programs (`pipeline.run(..., check=True)`,
`ChainResult.module()`) run in the chain's process: they are its output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from pipeline.verifier.inputs import VerifyError, program_source

DEFAULT_TIMEOUT = 300.0   # seconds: a 300k-instruction program runs in about 15 s
DEFAULT_MEMORY_MIB = 4096  # a 300k-instruction program peaks near 1 GiB
_MIB = 1 << 20
_STDERR_TAIL = 4096  # what a failure message may quote of the program's stderr

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# This very copy of the project, whatever the working directory holds.
_START = f"import sys; sys.path.insert(0, {_ROOT!r}); from pipeline.verifier.sandbox import main; main()"


class Sandboxed:
    """One program running in its own child; `module()` waits for it (once)."""

    def __init__(self, source: bytes, where: str, *, timeout: float = DEFAULT_TIMEOUT,
                 memory_mib: int = DEFAULT_MEMORY_MIB):
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise VerifyError(f"the program's time limit must be a number of seconds above 0, not {timeout!r}")
        if not (isinstance(memory_mib, int) and memory_mib > 0):
            raise VerifyError(f"the program's memory limit must be a whole number of MiB above 0, not {memory_mib!r}")
        self.where, self.timeout, self.memory_mib = where, timeout, memory_mib
        self._files = [tempfile.TemporaryFile() for _ in range(3)]  # files, never pipes: nothing can block
        stdin, self._answer, self._stderr = self._files
        stdin.write(source)
        stdin.seek(0)
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")  # the runtime computes nothing here
        self._process = subprocess.Popen(
            [sys.executable, "-c", _START, where, str(memory_mib)], stdin=stdin, stdout=self._answer,
            stderr=self._stderr, env=env, start_new_session=True, close_fds=True)
        self._deadline = time.monotonic() + timeout

    def __enter__(self) -> "Sandboxed":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Kill the child's process group if anything of it is left, and drop its files."""
        if self._process.poll() is None:
            self._kill()
        self._process.wait()
        self._kill()  # what the program forked, in the group the child led
        for f in self._files:
            f.close()

    def _kill(self) -> None:
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # the group is gone
            pass

    def module(self):
        """The module the program built, rebuilt from the child's answer; a
        VerifyError, one line naming the program, for anything else."""
        from pipeline.verifier.wire import NotAGraph, rebuild

        try:
            returncode = self._process.wait(timeout=max(0.0, self._deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self._kill()
            raise VerifyError(f"{self.where}: the program did not finish within {self.timeout:g} s (stopped); "
                              "if it needs longer, raise the limit (--timeout SECONDS, timeout=)") from None
        self._answer.seek(0)
        answer = self._answer.read()
        if returncode != 0 or not answer:
            raise VerifyError(f"{self.where}: {self._ended(returncode)}")
        try:
            said = json.loads(answer)
            failed = self._failed(str(said["error"]), str(said.get("message", ""))) if "error" in said else None
            module = rebuild(said["module"]) if failed is None else None
        except (ValueError, TypeError, KeyError, RecursionError) as err:  # NotAGraph is a ValueError
            what = err if isinstance(err, NotAGraph) else f"{type(err).__name__}: {err}"
            raise VerifyError(f"{self.where}: the program's process answered with no Penguin graph ({what})") from None
        if failed is not None:
            raise VerifyError(f"{self.where}: {failed}")
        return module

    def _failed(self, error: str, message: str) -> str:
        if error == "memory":
            return (f"the program ran out of memory (the limit is {self.memory_mib} MiB); "
                    "if it needs more, raise the limit (--memory MIB, memory_mib=)")
        if error == "raises":
            return f"the program fails to run: {message}"
        if error == "no-module":
            return "the program leaves no Penguin `module` (a printer.penguin.Module)"
        return f"the program's module is not a Penguin graph: {message}"

    def _ended(self, returncode: int) -> str:
        """Why the child gave no answer: how it ended, and the last thing it printed."""
        if returncode < 0:
            name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else "?"
            how = f"the program's process died of signal {-returncode} ({name})"
            if -returncode in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS):
                how += f"; if it ran out of memory (the limit is {self.memory_mib} MiB), raise --memory MIB"
            elif -returncode == signal.SIGXFSZ:
                how += f": it wrote more than the {self.memory_mib} MiB the limit allows"
        else:
            how = (f"the program ended its process (exit status {returncode}) before the verifier read its "
                   "module: a Penguin program builds `module` and returns")
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - _STDERR_TAIL))
        lines = [line for line in self._stderr.read().decode("utf-8", "replace").splitlines() if line.strip()]
        return f"{how} (it printed: {lines[-1].strip()[:200]})" if lines else how


# -- the child ------------------------------------------------------------------------


def main() -> None:
    """Run the program on stdin under the limits; answer on the file that was stdout."""
    import resource

    where, memory = sys.argv[1], int(sys.argv[2]) * _MIB
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (memory, memory))
    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the program's prints go to stderr, never into the answer
    try:
        said = _run(sys.stdin.buffer.read().decode("utf-8-sig"), where)
    except MemoryError:
        said = {"error": "memory"}
    answer.write(said.encode() if isinstance(said, str) else json.dumps(said).encode())
    answer.flush()
    os._exit(0)  # whatever the program left running (threads, atexit) has no say


def _run(source: str, where: str):
    from pipeline.verifier.program import run_program
    from pipeline.verifier.wire import NotAGraph, describe
    from printer.penguin import Module

    try:
        namespace = run_program(source, where)
    except MemoryError:
        raise
    except BaseException as err:  # the program's own failure (a sys.exit too): its type and first line
        text = str(err).strip().splitlines()
        return {"error": "raises", "message": f"{type(err).__name__}: {text[0]}" if text else type(err).__name__}
    module = namespace.get("module")
    if not isinstance(module, Module):
        return {"error": "no-module"}
    try:
        return json.dumps({"module": describe(module)}, separators=(",", ":"))
    except MemoryError:
        raise
    except NotAGraph as err:
        return {"error": "not-a-graph", "message": str(err)}
    except Exception as err:  # an object of the program's that breaks on reading (a property that raises)
        return {"error": "not-a-graph", "message": f"{type(err).__name__}: {str(err).strip()[:200]}"}


def start_program(program, *, timeout: float, memory_mib: int):
    """The program (source or path) running in its own child, with limits
    (`Sandboxed`): its `module()` is the `Module` it built."""
    data, where = program_source(program)
    return Sandboxed(data, where, timeout=timeout, memory_mib=memory_mib)
