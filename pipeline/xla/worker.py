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
import io
import os
import subprocess
import sys
import tempfile
import threading


def how_it_ended(returncode: int) -> str:
    """A child process's end as a message says it: `signal 6` (killed by
    it: subprocess's negative return code) or `exit status 1`. The one
    decoder of exit codes, for XLA's child and hlo2penguin-opt's."""
    return f"signal {-returncode}" if returncode < 0 else f"exit status {returncode}"


class WorkerDied(Exception):
    """The child ended without answering (XLA aborted it): its exit status and what it printed."""

    def __init__(self, returncode: int, stderr: str):
        super().__init__(how_it_ended(returncode))
        self.returncode, self.stderr = returncode, stderr


class WorkerGone(WorkerDied):
    """The child had died before this request was sent (on another call's
    input): this request was not its cause, and a fresh child can take it."""


class XlaWorker:
    """One child process that runs XLA for the chain: `ask` it, one request
    at a time (callers in several threads take turns), `close()` it. Its
    stderr (XLA's logs and, on an abort, its reason) goes to a file, so it
    can never fill a pipe."""

    def __init__(self):
        self._stderr = tempfile.TemporaryFile()
        # The child runs this very copy of the chain, whatever the working
        # directory holds (`-m` would look there first).
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        start = f"import sys; sys.path.insert(0, {root!r}); from pipeline.xla.child import main; main()"
        self.process = subprocess.Popen([sys.executable, "-c", start], bufsize=0,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self._answers = io.BufferedReader(self.process.stdout, 1 << 16)
        self._turn = threading.Lock()
        self.died: WorkerDied | None = None

    def ask(self, command: str, payload: bytes) -> tuple[str, bytes]:
        """(status, answer) for one request; WorkerDied if the child ended
        instead (WorkerGone if it had ended before this request)."""
        with self.reserved():
            self.submit(command, payload)
            return self.collect()

    @contextlib.contextmanager
    def reserved(self):
        """This caller's turn: `submit` a request, work meanwhile, `collect` its answer."""
        with self._turn:
            yield self

    def submit(self, command: str, payload: bytes) -> None:
        """Send one request (in the caller's turn: `reserved`)."""
        if self.died is not None:
            return  # `collect` says so
        data = memoryview(f"{command} {len(payload)}\n".encode() + payload)
        try:
            while data:
                data = data[self.process.stdin.write(data):]
        except OSError:
            pass  # it died: `collect` says how

    def collect(self) -> tuple[str, bytes]:
        """(status, answer) of the request sent last; WorkerDied if the child ended instead."""
        if self.died is not None:
            raise WorkerGone(self.died.returncode, self.died.stderr)
        header = self._answers.readline()
        status, _, length = header.decode().partition(" ")
        answer = self._answers.read(int(length)) if header.endswith(b"\n") else b""
        if not header.endswith(b"\n") or len(answer) != int(length):
            self.process.wait()
            self._stderr.seek(0)
            self.died = WorkerDied(self.process.returncode, self._stderr.read().decode("utf-8", "replace"))
            raise self.died
        return status, answer

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
        """In a forked process: let go of the parent's child without a word to it."""
        for stream in (self.process.stdin, self._answers):
            with contextlib.suppress(OSError):
                stream.close()  # this process's copies of the pipes; the parent's stay open
        self.process.returncode = 0  # not this process's child to wait for


_lock = threading.Lock()
_shared: XlaWorker | None = None


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
