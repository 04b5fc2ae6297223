"""XLA's child process (`pipeline.xla.worker`), in a module light enough
to import before anything heavy: `hlo2penguin` starts the child first thing
(`start_early`), so that it loads Python and jaxlib while this process
imports the chain. On a small module that load was most of the wait: the
two interpreters loaded jaxlib one after the other."""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile


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


class XlaWorker:
    """A child process that runs XLA for the chain (`pipeline.xla.worker`):
    start it early, `ask` it in order, `close()` it. Its stderr (XLA's logs
    and, on an abort, its reason) goes to a file, so it can never fill a pipe."""

    def __init__(self):
        self._stderr = tempfile.TemporaryFile()
        # The child runs this very copy of the chain, whatever the working
        # directory holds (`-m` would look there first). Pipes unbuffered:
        # a child that died leaves nothing to flush at exit.
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        start = f"import sys; sys.path.insert(0, {root!r}); from pipeline.xla.worker import main; main()"
        self.process = subprocess.Popen([sys.executable, "-c", start], bufsize=0,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)

    def ask(self, command: str, payload: bytes) -> tuple[str, bytes]:
        """(status, answer) for one request; WorkerDied if the child ended instead."""
        try:
            self.submit(command, payload)
        except OSError:
            pass  # it died: the answer below says how
        return self.collect()

    def submit(self, command: str, payload: bytes) -> None:
        """Send one request; `collect` its answer (the caller works meanwhile)."""
        data = memoryview(f"{command} {len(payload)}\n".encode() + payload)
        while data:
            data = data[self.process.stdin.write(data):]

    def collect(self) -> tuple[str, bytes]:
        """(status, answer) of the request sent last; WorkerDied if the child ended instead."""
        header = self._read_line()
        if not header:
            self.process.wait()
            self._stderr.seek(0)
            raise WorkerDied(self.process.returncode, self._stderr.read().decode("utf-8", "replace"))
        status, _, length = header.decode().partition(" ")
        return status, self._read(int(length))

    def _read_line(self) -> bytes:
        line = bytearray()
        while not line.endswith(b"\n"):
            byte = self.process.stdout.read(1)
            if not byte:
                return b""
            line += byte
        return bytes(line)

    def _read(self, length: int) -> bytes:
        chunks, left = [], length
        while left:
            chunk = self.process.stdout.read(left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        try:
            self.process.stdin.close()  # the end of its input: the child exits
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self._stderr.close()


_early: XlaWorker | None = None


def start_early() -> None:
    """Start the child now, for the next chain run in this process to take
    (`take_early`); one not taken is closed by `discard_early` or at exit."""
    global _early
    if _early is None:
        _early = XlaWorker()


def take_early() -> XlaWorker | None:
    """The child `start_early` started, if it is still alive (then it is the caller's to close)."""
    global _early
    worker, _early = _early, None
    if worker is not None and not worker.alive:
        worker.close()
        return None
    return worker


def discard_early() -> None:
    """Close a child started early that no run took."""
    worker = take_early()
    if worker is not None:
        worker.close()


atexit.register(discard_early)
