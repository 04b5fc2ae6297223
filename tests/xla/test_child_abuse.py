"""The warm XLA child abused as processes and threads abuse it: a fork while
another thread is in the middle of a call, a fork while another thread holds
the module's lock, a child killed or stopped from outside mid-call, and a
child that dies half-way through an answer. Each ends in an answer or one
line, within a time limit; none hangs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import pipeline
from cpu_hazards import WAITS
from pipeline.xla import isolated
from pipeline.xla import worker as xla_child
from pipeline.xla.isolated import XlaRejected

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not os.path.exists("/proc/self/task"),
                                reason="forks; reads Linux's /proc")


MODULE = """HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  pre = f32[4] negate(x)
  ROOT succ = f32[4] add(x, x), control-predecessors={pre}
}
"""


def edges(result) -> list:
    return [[e.predecessor, e.successor, e.fate.value] for e in result.report.edges]


def in_a_fork(work, seconds: float = 60.0):
    """`work()` in a forked process, its JSON result back; AssertionError if
    the forked process has not answered within `seconds` (it is killed)."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read)
            said = json.dumps(work())
        except BaseException as err:  # noqa: BLE001 (the parent reads what went wrong)
            said = json.dumps(repr(err))
        os.write(write, said.encode())
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.waitpid(child, os.WNOHANG)[0]:
            with os.fdopen(read) as f:
                return json.loads(f.read())
        time.sleep(0.01)
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    os.close(read)
    raise AssertionError(f"the forked process hung: no answer within {seconds:g} s")


def _call_in_flight() -> tuple[threading.Thread, list]:
    """Another thread in the middle of a call on the shared child (XLA:CPU
    waiting on its infeed, no time limit): reading its answer when we fork."""
    ended: list = []

    def call():
        try:
            isolated.cpu_outputs(pipeline_proto(WAITS), [np.ones(4, np.float32)], "waits")
        except XlaRejected as err:
            ended.append(str(err))

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    time.sleep(1.0)  # the request sent, the thread now waits for the answer
    return thread, ended


def pipeline_proto(text: str) -> bytes:
    from pipeline.xla.native import parse_to_proto

    return parse_to_proto(text)


def test_forks_while_another_thread_is_mid_call_never_hang(monkeypatch):
    monkeypatch.setattr(xla_child, "CALL_SECONDS", None)  # no time limit: the thread blocks reading the answer
    pipeline.run(MODULE)  # the warm child started, MLIR contexts made in this thread
    thread, ended = _call_in_flight()
    try:
        assert thread.is_alive()  # still waiting on its answer
        for _ in range(8):
            got = in_a_fork(lambda: edges(pipeline.run(MODULE)))
            assert got == [["pre", "succ", "preserved"]]
    finally:
        os.kill(xla_child.shared().process.pid, signal.SIGABRT)  # ends the call in flight, as an XLA abort
        thread.join(30)
    assert ended and "XLA:CPU aborted (signal 6)" in ended[0] and "\n" not in ended[0]


def test_a_fork_while_another_thread_holds_the_workers_lock_does_not_hang():
    held, release = threading.Event(), threading.Event()

    def hold():
        with xla_child._lock:  # as `shared()` holds it while it starts a child
            held.set()
            release.wait(30)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    held.wait(10)
    try:
        got = in_a_fork(lambda: edges(pipeline.run(MODULE)))
    finally:
        release.set()
        thread.join(30)
    assert got == [["pre", "succ", "preserved"]]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_child_killed_from_outside_mid_call_is_not_blamed_on_the_input_and_the_call_is_tried_again(sig):
    pipeline.run(MODULE)
    victim = xla_child.shared().process.pid
    killer = threading.Timer(0.3, os.kill, (victim, sig))
    killer.start()
    try:
        # A call that is in flight when the signal comes: XLA:CPU on its infeed, for a second.
        with pytest.raises(XlaRejected) as refused:
            isolated.cpu_outputs(pipeline_proto(WAITS), [np.ones(4, np.float32)], "waits", timeout=1.0)
    finally:
        killer.join()
    # Tried again on a fresh child (which waited its second and was stopped): the input's own verdict.
    assert "no answer within 1 s" in str(refused.value)
    assert xla_child.shared().process.pid != victim
    assert edges(pipeline.run(MODULE)) == [["pre", "succ", "preserved"]]


def test_a_child_killed_from_outside_twice_says_so_in_one_line():
    message = isolated.aborted("link #2 (XLA's importer)", -signal.SIGKILL, "", "m.hlo")
    assert "killed from outside" in str(message) and "SIGKILL" in str(message) and "\n" not in str(message)
    assert "killed from outside" not in str(isolated.aborted("XLA's parser", -signal.SIGABRT, "", "m.hlo"))


def test_a_stopped_child_holds_no_call_past_its_time_limit(monkeypatch):
    pipeline.run(MODULE)
    stopped = xla_child.shared().process.pid
    os.kill(stopped, signal.SIGSTOP)
    monkeypatch.setattr(xla_child, "CALL_SECONDS", 2.0)
    results: list = []

    def call():
        try:
            results.append(edges(pipeline.run(MODULE)))
        except XlaRejected as err:
            results.append(str(err))

    threads = [threading.Thread(target=call) for _ in range(3)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert time.monotonic() - start < 30
    # The call that met the stopped child is refused in one line; the others got a fresh child.
    refused = [r for r in results if isinstance(r, str)]
    assert len(refused) <= 1 and all("no answer within 2 s" in r and "HLO2PENGUIN_XLA_TIMEOUT" in r
                                     and "\n" not in r for r in refused)
    assert results.count([["pre", "succ", "preserved"]]) >= 2
    assert xla_child.shared().process.pid != stopped


def test_an_answer_cut_short_by_the_childs_death_is_never_taken_as_whole():
    worker = xla_child.XlaWorker()
    worker.close()
    worker._stderr = open(os.devnull, "w+b")
    # A child that says 100 bytes follow, sends 10 and dies (as XLA's child killed mid-answer).
    script = "import sys, os; sys.stdin.buffer.readline(); os.write(1, b'ok 100\\n' + b'x' * 10); os._exit(0)"
    worker.process = subprocess.Popen([sys.executable, "-c", script], bufsize=0, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=worker._stderr)
    worker._answers = xla_child._Answers(worker.process.stdout)
    with pytest.raises(xla_child.WorkerDied):
        worker.ask("parse", b"HloModule m")
    worker.process.wait()


def test_a_child_whose_own_state_broke_is_replaced_and_the_run_asked_again(monkeypatch):
    """A C extension that fails without saying why (SystemError) is the child's
    state, not the module's: the child says `broken` and ends; the call is
    asked once more of a fresh child, which answers."""
    from pipeline.xla import child, native

    def broken(proto, inputs):
        raise SystemError("error return without exception set")

    monkeypatch.setattr(native, "cpu_outputs", broken)
    status, said = child._run(__import__("pickle").dumps((b"", [])))
    assert status == "broken" and b"error return" in said

    worker = xla_child.XlaWorker()
    worker.close()
    worker._stderr = open(os.devnull, "w+b")
    script = "import sys, os; sys.stdin.buffer.readline(); os.write(1, b'broken 3\\nbad'); os._exit(0)"
    worker.process = subprocess.Popen([sys.executable, "-c", script], bufsize=0, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=worker._stderr)
    worker._answers = xla_child._Answers(worker.process.stdout)
    got = isolated.cpu_outputs(pipeline_proto(MODULE), [np.arange(4, dtype=np.float32)], "m", worker=worker)
    assert not worker.alive  # it ended, as it said
    np.testing.assert_array_equal(got[0], np.arange(4, dtype=np.float32) * 2)  # the fresh child's answer
