"""One warm XLA child per process (`pipeline.xla.worker`): every isolated
call reuses it; an input XLA aborts on is refused in one line and the next
call works on a new child; threads share it; a forked process starts its
own; the child ends when the process closes it, exits or is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import pipeline
from pipeline.xla import isolated
from pipeline.xla import worker as xla_child
from pipeline.xla.isolated import XlaRejected
from processes import live_children
from paths import PIPELINE_DUMPS, REPO

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads Linux's /proc")


def module(k: int) -> str:
    """A module whose one control edge is pre{k} -> succ{k}: its names say which call answered."""
    return textwrap.dedent(f"""\
        HloModule m{k}
        ENTRY e {{
          x = f32[4] parameter(0)
          pre{k} = f32[4] negate(x)
          ROOT succ{k} = f32[4] add(x, x), control-predecessors={{pre{k}}}
        }}
        """)


# XLA's parser CHECK-fails on a parameter number past the signature: it kills its process.
ABORTS = module(0).replace("parameter(0)", "parameter(5)")


def edges(result) -> list[tuple[str, str, str]]:
    return [(e.predecessor, e.successor, e.fate.value) for e in result.report.edges]


def pid() -> int:
    return xla_child.shared().process.pid


def test_calls_reuse_one_child_and_an_abort_between_two_good_calls_costs_only_itself():
    pipeline.close()
    before = live_children()
    assert edges(pipeline.run(module(1))) == [("pre1", "succ1", "preserved")]
    first = pid()
    assert edges(pipeline.run(module(2), dialect="mhlo")) == [("pre2", "succ2", "preserved")]
    assert pid() == first  # the same warm child answered both
    with pytest.raises(XlaRejected, match=r"^<hlo text>: XLA's parser aborted \(signal 6\): ") as refused:
        pipeline.run(ABORTS)
    assert "\n" not in str(refused.value)
    assert edges(pipeline.run(module(3))) == [("pre3", "succ3", "preserved")]
    assert pid() != first and live_children() == before | {pid()}  # the dead one was reaped
    pipeline.close()
    assert live_children() == before


def test_a_call_holding_a_child_another_call_killed_is_answered_by_a_new_one():
    """A run in one thread keeps its child across its steps; if another
    thread's input kills that child meanwhile, the run's next request is not
    refused with the other input's abort: a fresh child answers it."""
    stale = xla_child.shared()
    with pytest.raises(XlaRejected, match="aborted"):
        isolated.parse(ABORTS, isolate=True, worker=stale)  # this call's own input killed it
    parsed = isolated.parse(module(4), isolate=True, worker=stale)  # a later request on the stale handle
    assert [i.name for c in parsed.proto.computations for i in c.instructions if i.control_predecessor_ids] == ["succ4"]
    assert xla_child.shared() is not stale and xla_child.shared().alive


def test_threads_share_the_warm_child_and_each_gets_its_own_answer():
    pipeline.close()
    before = live_children()
    results: dict[int, object] = {}

    def run(k: int) -> None:
        results[k] = edges(pipeline.run(module(k), dialect=("stablehlo", "mhlo")[k % 2]))

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(10, 16)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 90  # requests that interleave on one pipe never get their answers
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    assert results == {k: [(f"pre{k}", f"succ{k}", "preserved")] for k in range(10, 16)}
    assert live_children() == before | {pid()}  # one child served all six


def test_a_forked_process_never_talks_to_its_parent_s_child():
    """The forked process holds nothing of its parent's child: that child
    ends at its parent's close (it sees its input close) while the forked
    process lives on; the forked process starts its own child."""
    assert edges(pipeline.run(module(20))) == [("pre20", "succ20", "preserved")]
    parents = xla_child.shared()
    read, write = os.pipe()
    hold, release = os.pipe()
    child = os.fork()
    if child == 0:  # the forked process: waits, runs the chain, reports through the pipe
        os.close(release)
        os.read(hold, 1)
        try:
            said = json.dumps([edges(pipeline.run(module(21))), pid()])
        except BaseException as err:  # noqa: BLE001 (the parent reads what went wrong)
            said = json.dumps(repr(err))
        os.write(write, said.encode())
        os._exit(0)
    os.close(write)
    os.close(hold)
    try:
        pipeline.close()  # while the forked process lives
        assert parents.process.returncode == 0  # it saw its input close: not killed after a timeout
    finally:
        os.close(release)
        with os.fdopen(read) as f:
            said = f.read()
        os.waitpid(child, 0)
    got, forked_childs = json.loads(said)
    assert got == [["pre21", "succ21", "preserved"]]
    assert forked_childs != parents.process.pid
    assert edges(pipeline.run(module(22))) == [("pre22", "succ22", "preserved")]


def _ended(process_id: int, within: float = 20) -> bool:
    """Whether `process_id` ended (gone, or a zombie its new parent has not reaped yet)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{process_id}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["exits", "is killed"])
def test_the_child_ends_with_its_process(how):
    script = textwrap.dedent(f"""\
        import os, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        import pipeline
        from pipeline.xla import worker
        pipeline.run({module(30)!r})
        print(worker.shared().process.pid, flush=True)
        if {how == "is killed"}:
            os.kill(os.getpid(), signal.SIGKILL)
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == (-signal.SIGKILL if how == "is killed" else 0), done.stderr
    assert _ended(int(done.stdout.split()[0]))


def test_close_ends_the_child_and_the_next_call_starts_one():
    pipeline.run(module(40))
    ended = xla_child.shared()
    pipeline.close()
    assert not ended.alive and ended.process.returncode == 0
    assert edges(pipeline.run(module(41))) == [("pre41", "succ41", "preserved")]
    assert xla_child.shared() is not ended


def _in_fresh_process(code: str, *args: str) -> subprocess.CompletedProcess:
    script = f"import sys; sys.path.insert(0, {str(REPO)!r})\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)


def test_the_cli_forks_its_child_with_jaxlib_loaded_while_it_has_one_thread(tmp_path):
    """`hlo2penguin FILE` forks XLA's child (no second interpreter) when the
    process has one thread, and the program is the one the chain writes
    in-process; an input XLA aborts on is still refused in one line."""
    path, out = tmp_path / "m.hlo", tmp_path / "out.py"
    path.write_text(module(50))
    done = _in_fresh_process("""
        import os
        from pipeline.cli import hlo2penguin
        from pipeline.xla import worker
        status = hlo2penguin.main(sys.argv[1:])
        print(status, type(worker.shared().process).__name__)
        """, str(path), "-o", str(out), "-q")
    assert done.stdout.split() == ["0", "_Forked"], done.stderr
    assert out.read_text() == pipeline.run(module(50), isolate=False, check=False, source_name=str(path)).penguin_source
    (tmp_path / "aborts.hlo").write_text(ABORTS)
    done = _in_fresh_process("""
        from pipeline.cli import hlo2penguin
        from pipeline.xla import worker
        status = hlo2penguin.main(sys.argv[1:])
        print(status, type(worker._shared.process).__name__ if worker._shared else None)
        """, str(tmp_path / "aborts.hlo"))
    assert done.stdout.split()[0] == "2"
    assert done.stderr.count("\n") == 1 and "XLA's parser aborted (signal 6): Check failed" in done.stderr


def test_a_process_with_another_thread_spawns_its_child_instead():
    done = _in_fresh_process("""
        import threading
        threading.Thread(target=threading.Event().wait, daemon=True).start()
        from pipeline.xla import worker
        print(type(worker.fork_early().process).__name__)
        """)
    assert done.stdout.split() == ["Popen"], done.stderr


# XLA's parser reads a get-tuple-element past its tuple's arity and then
# segfaults on it, printing nothing: the refusal says "no message".
SEGFAULTS = module(0).replace("pre0 = f32[4] negate(x)",
                              "t = (f32[4], f32[4]) tuple(x, x)\n  pre0 = f32[4] get-tuple-element(t), index=2")


def test_an_abort_is_told_in_its_own_words_not_in_what_the_child_logged_before():
    """XLA logs some refusals it survives (a RET_CHECK on a proto it reads
    and refuses): a warm child's later abort is still told as a fresh
    child tells it, not with that earlier log line."""
    from pipeline.xla import native

    fresh = xla_child.XlaWorker()
    try:
        with pytest.raises(XlaRejected, match="aborted") as alone:
            isolated.parse(SEGFAULTS, "in.hlo", isolate=True, worker=fresh)
    finally:
        fresh.close()
    warm = xla_child.XlaWorker()
    try:
        loop = (PIPELINE_DUMPS / "gpu_pipelined_p2p_loop.hlo").read_text()
        with pytest.raises(XlaRejected, match="RecvDone must take the context operand from Recv"):
            isolated.read_proto(native.parse_to_proto(loop), "loop.pb", isolate=True, worker=warm)
        assert warm.alive  # XLA refused that proto and lived on; its RET_CHECK went to the child's stderr
        with pytest.raises(XlaRejected, match="aborted") as after:
            isolated.parse(SEGFAULTS, "in.hlo", isolate=True, worker=warm)
    finally:
        warm.close()
    assert str(after.value) == str(alone.value)
