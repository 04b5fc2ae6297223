"""XLA in a child process, seen from the parent: `XlaWorker` is one child
(the program it runs is `pipeline.xla.child`), and `shared()` is this
process's one warm child, which every isolated call reuses.

XLA aborts the process it runs in on some inputs, so the chain runs it in a
child by default. Starting a child costs a new interpreter and a jaxlib
load (~0.2 s); a call on a warm one costs a pipe round trip. So:
- the first call that needs XLA starts the shared child; later calls reuse it;
- a child that died on an input (the call that killed it is refused in one
  line) is replaced at the next call, which then works;
- one request at a time per child (a lock), so threads share it safely;
- a forked process never talks to its parent's child: it forgets it and
  starts its own when it needs one (pytest-xdist, multiprocessing, Dask);
- the child reads its requests from a pipe and ends when the pipe closes:
  when this process calls `close()`, exits, or is killed.

This module is light (no jaxlib): `hlo2penguin` starts the child first
thing (`shared()`), so that it loads jaxlib on the other core while this
process imports the chain.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time


# Signals a child gets from outside, never from XLA itself (it aborts with
# SIGABRT, crashes with SIGSEGV, SIGBUS, SIGILL or SIGFPE): the kernel's
# out-of-memory killer, a user's `kill`, a supervisor stopping things.
FROM_OUTSIDE = frozenset({signal.SIGKILL, signal.SIGTERM})


def how_it_ended(returncode: int) -> str:
    """A child process's end as a message says it: `signal 6` (killed by
    it: subprocess's negative return code) or `exit status 1`; a signal that
    came from outside says so. The one decoder of exit codes, for XLA's child
    and hlo2penguin-opt's."""
    if returncode < 0 and -returncode in FROM_OUTSIDE:
        return (f"signal {-returncode}, {signal.Signals(-returncode).name}: killed from outside, "
                f"by another process or the out-of-memory killer, not by the input")
    return f"signal {-returncode}" if returncode < 0 else f"exit status {returncode}"


# Every request but XLA:CPU's runs (which take their own) waits this long at
# most for its answer; then the child is killed and the call refused in one
# line. HLO2PENGUIN_XLA_TIMEOUT sets it in seconds (0: no limit). Generous:
# XLA parses and imports 300,000 instructions in about ten seconds.
CALL_SECONDS: float | None = float(os.environ.get("HLO2PENGUIN_XLA_TIMEOUT", "3600")) or None


class WorkerDied(Exception):
    """The child ended without answering (XLA aborted it): its exit status and what it printed."""

    def __init__(self, returncode: int, stderr: str):
        super().__init__(how_it_ended(returncode))
        self.returncode, self.stderr = returncode, stderr

    @property
    def from_outside(self) -> bool:
        """Killed by a signal the input cannot have caused (`FROM_OUTSIDE`)."""
        return self.returncode < 0 and -self.returncode in FROM_OUTSIDE


class WorkerTimedOut(WorkerDied):
    """The child did not answer within the request's time limit; it was killed."""

    def __init__(self, seconds: float, stderr: str):
        Exception.__init__(self, f"no answer within {seconds:g} s")
        self.returncode, self.stderr, self.seconds = -signal.SIGKILL, stderr, seconds

    @property
    def from_outside(self) -> bool:
        return False  # killed here, for taking too long


class WorkerGone(WorkerDied):
    """The child had died before this request was sent (on another call's
    input): this request was not its cause, and a fresh child can take it."""


class XlaWorker:
    """One child process that runs XLA for the chain: `ask` it, one request
    at a time (callers in several threads take turns), `close()` it. Its
    stderr (XLA's logs and, on an abort, its reason) goes to a file, so it
    can never fill a pipe, and holds one request's worth: an abort's reason
    is this request's, never an earlier one's logs (XLA logs some refusals
    it survives, such as a RET_CHECK on a proto it then refuses)."""

    def __init__(self, forked: bool = False):
        self._stderr = tempfile.TemporaryFile()
        if forked:
            self.process = _Forked(self._stderr)
        else:
            # The child runs this very copy of the chain, whatever the working
            # directory holds (`-m` would look there first).
            root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            start = f"import sys; sys.path.insert(0, {root!r}); from pipeline.xla.child import main; main()"
            self.process = subprocess.Popen([sys.executable, "-c", start], bufsize=0,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self._answers = _Answers(self.process.stdout)
        self._turn = threading.Lock()
        self.died: WorkerDied | None = None

    def ask(self, command: str, payload: bytes, timeout: float | None = None) -> tuple[str, bytes]:
        """(status, answer) for one request; WorkerDied if the child ended
        instead (WorkerGone if it had ended before this request,
        WorkerTimedOut if it gave no answer within `timeout` seconds: it is
        killed, and the next request starts a new one)."""
        with self.reserved():
            self.submit(command, payload)
            return self.collect(CALL_SECONDS if timeout is None else timeout)

    @contextlib.contextmanager
    def reserved(self):
        """This caller's turn: `submit` a request, work meanwhile, `collect` its answer."""
        with self._turn:
            yield self

    def submit(self, command: str, payload: bytes) -> None:
        """Send one request (in the caller's turn: `reserved`)."""
        if self.died is not None:
            return  # `collect` says so
        # The child waits on its stdin now, and its stderr shares this file's
        # offset: back to the start, so it writes this request's words there.
        self._stderr.seek(0)
        self._stderr.truncate()
        data = memoryview(f"{command} {len(payload)}\n".encode() + payload)
        try:
            while data:
                data = data[self.process.stdin.write(data):]
        except OSError:
            pass  # it died: `collect` says how

    def collect(self, timeout: float | None = None) -> tuple[str, bytes]:
        """(status, answer) of the request sent last; WorkerDied if the child ended instead."""
        if self.died is not None:
            raise WorkerGone(self.died.returncode, self.died.stderr)
        if timeout is not None and not self._answers.ready(timeout):
            self.process.kill()
            self.process.wait()
            self._stderr.seek(0)
            self.died = WorkerTimedOut(timeout, self._stderr.read().decode("utf-8", "replace"))
            raise self.died
        header = self._answers.readline()
        status, _, length = header.decode().partition(" ")
        answer = self._answers.read(int(length)) if header.endswith(b"\n") else b""
        if not header.endswith(b"\n") or len(answer) != int(length):
            self.process.wait()
            self._stderr.seek(0)
            self.died = WorkerDied(self.process.returncode, self._stderr.read().decode("utf-8", "replace"))
            raise self.died
        if status == "broken":  # the child said its own state failed and ends: not alive for the next call
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
        return status, answer

    def answered(self) -> bool:
        """The answer to the request sent last has started to come (or the
        child ended): `collect` will not wait for the child's work."""
        return self.died is not None or self._answers.ready(0)

    @property
    def alive(self) -> bool:
        return self.died is None and self.process.poll() is None

    def close(self) -> None:
        """End the child (the end of its input) and wait for it."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self._stderr.close()

    def _forget(self) -> None:
        """In a forked process: let go of the parent's child without a word to
        it. Nothing here takes a lock: a thread of the parent may have held
        one mid-call at the fork, and it stays held in this process forever
        (the pipes are unbuffered FileIO objects, the answers a reader of our
        own, neither with a lock)."""
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # this process's copies of the pipes; the parent's stay open
        self.process.returncode = 0  # not this process's child to wait for


class _Answers:
    """The child's answers, read from its pipe (an unbuffered FileIO, which
    has no lock) through a buffer of our own: `readline` and `read` as
    io.BufferedReader's, without the lock BufferedReader takes (see
    `XlaWorker._forget`); `ready` waits for the next answer to start, with a
    time limit."""

    def __init__(self, raw):
        self.raw, self.buffer = raw, bytearray()

    def ready(self, timeout: float) -> bool:
        return bool(self.buffer) or bool(select.select([self.raw], [], [], timeout)[0])

    def readline(self) -> bytes:
        while b"\n" not in self.buffer:
            chunk = self.raw.read(1 << 16)
            if not chunk:
                break
            self.buffer += chunk
        end = self.buffer.find(b"\n") + 1 or len(self.buffer)
        line = bytes(self.buffer[:end])
        del self.buffer[:end]
        return line

    def read(self, n: int) -> bytes:
        """`n` bytes (fewer only if the pipe closed first), read straight into one buffer."""
        if len(self.buffer) >= n:
            data = bytes(self.buffer[:n])
            del self.buffer[:n]
            return data
        out = bytearray(n)
        view = memoryview(out)
        have = len(self.buffer)
        view[:have] = self.buffer
        self.buffer.clear()
        while have < n:
            got = self.raw.readinto(view[have:])
            if not got:
                break
            have += got
        view.release()
        return bytes(out) if have == n else bytes(out[:have])


class _Forked:
    """A child forked from this process, with what XlaWorker uses of a
    `subprocess.Popen`: it has jaxlib loaded already (no new interpreter, no
    second load) and serves `pipeline.xla.child` on two pipes, its stderr in
    `stderr`. Only `fork_early` makes one, in a process with one thread."""

    def __init__(self, stderr):
        to_child, from_parent = os.pipe()
        to_parent, from_child = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: serve, then out without running the parent's exit handlers
            try:
                os.close(from_parent)
                os.close(to_parent)
                quiet = os.open(os.devnull, os.O_RDWR)  # the parent's stdin and stdout are not the child's to hold
                os.dup2(quiet, 0)
                os.dup2(quiet, 1)
                os.dup2(stderr.fileno(), 2)
                from pipeline.xla.child import serve

                serve(os.fdopen(to_child, "rb"), os.fdopen(from_child, "wb", buffering=0))
            finally:
                os._exit(0)
        os.close(to_child)
        os.close(from_child)
        self.stdin = os.fdopen(from_parent, "wb", buffering=0)
        self.stdout = os.fdopen(to_parent, "rb", buffering=0)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is not None:
            deadline = time.monotonic() + timeout
            while self.poll() is None:
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
                time.sleep(0.005)
        elif self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)


_lock = threading.Lock()
_shared: XlaWorker | None = None


def fork_early() -> XlaWorker:
    """This process's warm child, forked now if that is safe, else `shared()`.

    For a one-call process (`hlo2penguin FILE`): a new interpreter that
    loads jaxlib costs as much as the whole call on a small module, and this
    process loads jaxlib anyway (link #3 runs MLIR here). So it loads jaxlib
    first and forks: the child has it already. A fork is safe when the
    process has one thread (POSIX): jaxlib starts none on import (XLA:CPU
    and MLIR's pass threads start only when used) and numpy's OpenBLAS pool
    is held to the main thread here (OPENBLAS_NUM_THREADS=1, only if numpy
    is not imported yet and the user set nothing). A process that imported
    jax (which may hold an XLA:CPU client whose threads a fork would not
    copy: the child's numbers then fail), any other thread, or a platform
    without fork takes the spawned child instead."""
    global _shared
    linux = sys.platform.startswith("linux")
    if linux and "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import pipeline.xla.native  # noqa: F401 (jaxlib, loaded before the fork)

    with _lock:
        # jax imported may mean a backend made here: a fork would inherit its client without its threads
        if _shared is None and linux and "jax" not in sys.modules and len(os.listdir("/proc/self/task")) == 1:
            _shared = XlaWorker(forked=True)
    return shared()


def shared() -> XlaWorker:
    """This process's warm child, started if there is none or the last one died."""
    global _shared
    with _lock:
        if _shared is None or not _shared.alive:
            if _shared is not None:
                _shared.close()  # reaped: no zombie
            _shared = XlaWorker()
        return _shared


def close() -> None:
    """End this process's warm child now (a long-lived host, such as a
    Jupyter kernel, that is done with the chain); the next call starts one."""
    global _shared
    with _lock:
        worker, _shared = _shared, None
    if worker is not None:
        worker.close()


def _after_fork_in_child() -> None:
    global _lock, _shared
    _lock = threading.Lock()  # a thread of the parent may have held it at the fork
    if _shared is not None:
        _shared._forget()
        _shared = None


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(close)
