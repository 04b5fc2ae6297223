"""`hlo2penguin verify` runs the program it judges in a child process with
a time and a memory limit: whatever the program does to its process (exit
early, hang, take all memory, kill itself, raise, not be UTF-8 text, leave
a process behind) is one line on stderr and exit status 2, never a pass and
never the verifier's own end. Each program here is the good program of the
built-in example with the misdeed in front, so only the misdeed fails it."""

from __future__ import annotations

import os
import time

import pytest

import pipeline
from pipeline.chain.example import EXAMPLE_HLO
from pipeline.cli import hlo2penguin as cli


@pytest.fixture(scope="module")
def good_program() -> str:
    return pipeline.run(EXAMPLE_HLO, isolate=False).penguin_source


def run_verify(tmp_path, capsys, program: str | bytes, *flags: str) -> tuple[int, str, str]:
    (tmp_path / "module.txt").write_text(EXAMPLE_HLO)
    path = tmp_path / "program.py"
    path.write_bytes(program if isinstance(program, bytes) else program.encode())
    status = cli.main(["verify", *flags, str(tmp_path / "module.txt"), str(path)])
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line(status: int, out: str, err: str, *needles: str) -> None:
    assert (status, out) == (2, ""), (status, out, err)
    assert err.count("\n") == 1 and err.startswith("hlo2penguin verify: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    for needle in needles:
        assert needle in err, err


def test_the_good_program_verifies(tmp_path, capsys, good_program):
    status, out, err = run_verify(tmp_path, capsys, "print('chatter')\n" + good_program)
    assert status == 0, err
    assert out.splitlines()[-1].startswith("4 HLO control edge(s): 3 preserved, 1 rerouted")
    assert "chatter" not in out  # the program's prints never land in the report


@pytest.mark.parametrize("misdeed,needles", [
    ("import os\nos._exit(0)\n", ["program.py: the program ended its process (exit status 0)"]),
    ("import sys\nsys.exit(0)\n", ["program.py: the program fails to run: SystemExit: 0"]),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", ["died of signal 9 (SIGKILL)"]),
    ("import ctypes\nctypes.string_at(0)\n", ["died of signal 11 (SIGSEGV)"]),
    ("raise RuntimeError('planted')\n", ["program.py: the program fails to run: RuntimeError: planted"]),
    ("hoard = bytearray(8 << 30)\n", ["ran out of memory (the limit is 512 MiB)", "--memory"]),
], ids=["os-exit-0", "sys-exit-0", "kills-itself", "crashes", "raises", "takes-all-memory"])
def test_a_program_that_does_not_build_its_module_is_one_line_exit_2(tmp_path, capsys, good_program, misdeed,
                                                                      needles):
    assert_one_line(*run_verify(tmp_path, capsys, misdeed + good_program, "--memory", "512"), *needles)


def test_a_program_that_hangs_is_stopped_at_the_time_limit(tmp_path, capsys, good_program):
    started = time.monotonic()
    found = run_verify(tmp_path, capsys, "while True:\n    pass\n" + good_program, "--timeout", "2")
    assert_one_line(*found, "program.py: the program did not finish within 2 s (stopped)", "--timeout")
    assert time.monotonic() - started < 60  # stopped, not waited out: a bound, not a speed


def test_a_program_that_is_not_utf8_is_one_line(tmp_path, capsys, good_program):
    found = run_verify(tmp_path, capsys, b"# \xff\xfe\n" + good_program.encode())
    assert_one_line(*found, "program.py: the program is not UTF-8 text (byte 0xff at offset 2)")


def test_a_process_the_program_leaves_behind_is_ended(tmp_path, capsys, good_program):
    pid_file = tmp_path / "left.pid"
    leaves = ("import os, time\n"
              "left = os.fork()\n"
              "if left == 0:\n"
              "    time.sleep(600)\n"
              "    os._exit(0)\n"
              f"open({str(pid_file)!r}, 'w').write(str(left))\n")
    status, _, err = run_verify(tmp_path, capsys, leaves + good_program)
    assert status == 0, err  # the program still built its module
    pid = int(pid_file.read_text())
    for _ in range(100):
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return
        if state == "Z":  # killed, not yet reaped by whoever adopted it
            return
        time.sleep(0.05)
    os.kill(pid, 9)  # ours (the test's) to end, before failing
    pytest.fail(f"process {pid}, forked by the program, still runs after verify returned")
