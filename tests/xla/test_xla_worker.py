"""The child that runs XLA for the chain (`pipeline.xla.worker.XlaWorker`): it runs
this copy of the chain whatever the working directory holds, answers in
order, and a child that died is said so, never waited for."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pipeline
from processes import live_children
from pipeline.xla.isolated import WorkerDied, XlaWorker
from paths import REPO

TEXT = textwrap.dedent("""\
    HloModule m
    ENTRY e {
      p = f32[4] parameter(0)
      a = f32[4] negate(p)
      ROOT s = f32[4] add(a, p), control-predecessors={a}
    }
    """)


def test_the_child_runs_this_chain_whatever_the_working_directory_holds(tmp_path, monkeypatch):
    # A package of the same name where the child starts: `python -m` would import it first.
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "__init__.py").write_text("raise ImportError('the wrong pipeline')\n")
    (tmp_path / "pipeline" / "xla").mkdir()
    (tmp_path / "pipeline" / "xla" / "child.py").write_text("raise ImportError('the wrong child')\n")
    monkeypatch.chdir(tmp_path)
    result = pipeline.run(TEXT, isolate=True)
    assert [(e.predecessor, e.successor, e.fate) for e in result.report.edges] == [("a", "s", "preserved")]


def test_answers_come_in_order_and_the_child_ends_when_closed():
    worker = XlaWorker()
    try:
        status, proto = worker.ask("parse", TEXT.encode())
        assert status == "ok"
        status, printed = worker.ask("print", proto)
        assert status == "ok" and b"control-predecessors={%a}" in printed
        status, said = worker.ask("parse", b"HloModule m\nENTRY e { ROOT x = f32[] frobnicate() }")
        assert status == "refused" and b"frobnicate" in said
    finally:
        worker.close()
    assert not worker.alive


def test_a_child_that_died_is_said_so_and_leaves_no_traceback():
    """XLA aborts its process on some modules: the next request gets
    WorkerDied with the signal, a later one too (no wait for an answer that
    cannot come), and closing prints nothing (no "Exception ignored")."""
    script = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from pipeline.xla.isolated import XlaWorker, WorkerDied
        w = XlaWorker()
        w.process.kill()
        w.process.wait()
        for _ in range(2):
            try:
                w.ask("parse", b"x" * 1_000_000)
            except WorkerDied as died:
                print("died", died.returncode)
        w.close()
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(REPO))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["died -9", "died -9"]
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


def test_worker_died_names_the_signal():
    assert str(WorkerDied(-11, "")) == "signal 11"
    assert str(WorkerDied(3, "")) == "exit status 3"


def test_the_cli_starts_xla_s_child_first_and_its_run_takes_that_one(tmp_path, monkeypatch, capsys):
    """`hlo2penguin` starts the child before it imports the chain (the
    child loads jaxlib meanwhile), and the run uses that child: one child
    per command, which `pipeline.close()` (or the process's exit) ends."""
    from pipeline.cli import hlo2penguin as cli
    from pipeline.xla import worker as xla_child

    xla_child.close()
    started = []
    real_init = XlaWorker.__init__

    def counting(self):
        started.append(self)
        real_init(self)

    monkeypatch.setattr(XlaWorker, "__init__", counting)
    before = live_children()
    path = tmp_path / "m.hlo"
    path.write_text(TEXT)
    assert cli.main([str(path), "-o", str(tmp_path / "out.py"), "-q"]) == 0
    assert len(started) == 1 and xla_child.shared() is started[0]
    assert live_children() == before | {started[0].process.pid}
    assert cli.main([str(tmp_path / "missing.hlo"), "-q"]) == 2
    assert len(started) == 1 and started[0].alive  # the same child, still warm
    assert "cannot read input" in capsys.readouterr().err
    pipeline.close()
    assert live_children() == before and not started[0].alive


def test_a_child_that_exited_is_said_to_have_exited_not_signalled():
    from pipeline.xla.worker import how_it_ended
    from pipeline.xla.isolated import aborted

    assert how_it_ended(-6) == "signal 6" and how_it_ended(1) == "exit status 1"
    said = str(aborted("XLA's parser", 1, "", "m.hlo"))
    assert "(exit status 1)" in said and "signal" not in said  # it said "signal -1"
