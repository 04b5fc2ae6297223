"""How an `hlo2penguin` process ends (`pipeline.cli.support.end_process`):
without the interpreter's teardown, but with everything a user relies on at
the end of a command: the output whole, the exit handlers run (XLA's child
ends there), the threads still running waited for, a failed write to
standard output one line and exit 2, a reader that left not an error."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import pipeline
from pipeline.chain.example import EXAMPLE_HLO
from paths import REPO

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads Linux's /proc")


def command(code: str, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """`code` run as the body of a fresh `hlo2penguin` process, its output
    buffered as by default (whatever PYTHONUNBUFFERED this process has)."""
    script = f"import sys; sys.path.insert(0, {str(REPO)!r})\n" + textwrap.dedent(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", script, *args], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=300, stdin=subprocess.DEVNULL, env=env)


def test_the_exit_handlers_run_after_the_output_is_written_and_the_xla_child_is_gone(tmp_path):
    out = tmp_path / "out.py"
    done = command("""
        import atexit, os

        def last():  # registered first: runs last, after the chain's own handlers
            print("handler ran", os.path.exists(sys.argv[1 + sys.argv.index("-o")]), file=sys.stderr)

        atexit.register(last)
        from pipeline.xla import worker
        fork_early = worker.fork_early

        def told():
            child = fork_early()
            print("child", child.process.pid, file=sys.stderr, flush=True)
            return child

        worker.fork_early = told
        from pipeline.cli.hlo2penguin import entry
        entry()
        """, "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[-1] == "handler ran True", done.stderr
    child = int(lines[0].split()[1])
    assert not os.path.exists(f"/proc/{child}"), "the XLA child outlived its process"
    assert out.read_text() == pipeline.run(EXAMPLE_HLO, isolate=False, check=False,
                                           source_name="<built-in example>").penguin_source


def test_a_thread_still_running_is_waited_for(tmp_path):
    mark = tmp_path / "thread-finished"
    done = command("""
        import pathlib, threading, time

        def late(mark=pathlib.Path(sys.argv[1])):
            time.sleep(0.5)
            mark.write_text("done")

        threading.Thread(target=late).start()  # not a daemon: the ordinary exit waits for it
        sys.argv[1:] = ["--version"]
        from pipeline.cli.hlo2penguin import entry
        entry()
        """, str(mark))
    assert done.returncode == 0, done.stderr
    assert mark.read_text() == "done"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--version"], ["--example"], ["-q"], ["--emit", "report", "-q"], ["check", "IN"]],
                         ids=" ".join)
def test_a_full_disk_under_standard_output_is_one_line_and_exit_2(args, tmp_path):
    """Written as the output (`write_output`) or printed and flushed at the
    end (`check`'s table): the same line."""
    (tmp_path / "in.hlo").write_text(EXAMPLE_HLO)
    args = [str(tmp_path / "in.hlo") if a == "IN" else a for a in args]
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "pipeline.cli", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=300, cwd=REPO, stdin=subprocess.DEVNULL)
    prog = "hlo2penguin check" if args[0] == "check" else "hlo2penguin"
    assert done.returncode == 2
    assert done.stderr == f"{prog}: error: cannot write standard output: No space left on device\n"


def test_what_is_still_buffered_at_the_end_is_flushed_and_a_failure_is_exit_2(tmp_path):
    code = """
        from pipeline.cli.support import end_process
        end_process("tool", lambda: print("a line that waits in the buffer") or 0)
        """
    (tmp_path / "read-only").write_text("")
    with open(tmp_path / "read-only") as unwritable:  # a regular file: the line waits until the flush
        done = command(code, stdout=unwritable)
    assert (done.returncode, done.stderr) == (2, "tool: error: cannot write standard output: Bad file descriptor\n")
    done = command(code)
    assert (done.returncode, done.stdout, done.stderr) == (0, "a line that waits in the buffer\n", "")


@pytest.mark.parametrize("args", [["--version"], ["--example"], ["-q"]], ids=" ".join)
def test_a_reader_that_left_is_not_an_error(args):
    """`hlo2penguin | head -c1`: the reader is gone before the output is written."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as by default
    process = subprocess.Popen([sys.executable, "-m", "pipeline.cli", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=REPO, stdin=subprocess.DEVNULL, env=env)
    process.stdout.close()  # no reader is left on the pipe
    err = process.stderr.read()
    assert process.wait(timeout=300) == 0
    assert err == b""
