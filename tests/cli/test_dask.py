"""`--scheduler`: `hlo2penguin check` and `hlo2penguin regress` on a real
Dask cluster (a scheduler and two workers, each its own process on
localhost) give the rows and totals of a local run; a missing `distributed`
and an unreachable scheduler are one line and exit 2."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jax_programs import count_control_edges
from pipeline.cli import hlo2penguin as cli
from pipeline.cli import workers
from test_check_command import make_dump_folder, modules_with_edges
from paths import CORPUS, TESTS

distributed = pytest.importorskip("distributed")

PROGRAMS = ("fori_inplace", "cumsum_in_loop")  # small and quick: one module each


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory, request) -> str:
    """The address of a Dask scheduler with two registered workers, all separate processes."""
    where = tmp_path_factory.mktemp("dask")
    scheduler_file = where / "scheduler.json"
    processes: list[subprocess.Popen] = []

    def stop_all():
        for process in reversed(processes):
            _stop(process)

    request.addfinalizer(stop_all)

    def start(args: list[str], log: str) -> None:
        with open(where / log, "wb") as out:
            processes.append(subprocess.Popen([sys.executable, "-m", *args], stdout=out, stderr=subprocess.STDOUT,
                                              cwd=where))

    start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
           "--scheduler-file", str(scheduler_file)], "scheduler.log")
    deadline = time.monotonic() + 60
    while not scheduler_file.exists():
        assert processes[0].poll() is None, (where / "scheduler.log").read_text()
        assert time.monotonic() < deadline, "the scheduler did not write its file"
        time.sleep(0.1)
    start(["distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file), "--nworkers", "2",
           "--nthreads", "1", "--no-dashboard", "--local-directory", str(where)], "worker.log")
    with distributed.Client(scheduler_file=str(scheduler_file), set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        return client.scheduler.address


def test_check_on_the_cluster_gives_the_rows_of_a_local_run(scheduler, tmp_path, capfd):
    folder = make_dump_folder(tmp_path)
    assert cli.main(["check", str(folder), "--json", "--jobs", "2"]) == 1  # two modules XLA refuses
    local = json.loads(capfd.readouterr().out)
    assert cli.main(["check", str(folder), "--json", "--scheduler", scheduler]) == 1
    out, err = capfd.readouterr()
    assert err == ""
    assert json.loads(out) == local
    assert [r["path"] for r in local["modules"]] == modules_with_edges(folder)
    assert local["totals"]["errors"] == 2
    assert local["totals"]["edges"] == sum(count_control_edges(Path(r["path"]).read_text())
                                           for r in local["modules"] if not r["error"])
    # The table too, word for word.
    assert cli.main(["check", str(folder), "--jobs", "2"]) == 1
    local_table = capfd.readouterr().out
    assert cli.main(["check", str(folder), "--scheduler", scheduler]) == 1
    assert capfd.readouterr().out == local_table


XLA_DUMP_SCRIPT = """
import jax, jax.numpy as jnp, numpy as np
from jax_programs import PROGRAMS
for name, fn, args in PROGRAMS[:3]:
    jax.jit(fn).lower(*args).compile()
"""


@pytest.fixture(scope="module")
def xla_cpu_dump(tmp_path_factory) -> Path:
    """A folder exactly as XLA:CPU writes it with `--xla_dump_to`: every
    pass of copy insertion, the optimized module, XLA's reports beside them."""
    folder = tmp_path_factory.mktemp("xla_dump")
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={folder} --xla_dump_hlo_pass_re=copy-insertion",
           "JAX_PLATFORMS": "cpu", "PYTHONPATH": os.pathsep.join([str(TESTS),
                                                                   os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", XLA_DUMP_SCRIPT], env=env, check=True, capture_output=True)
    return folder


def test_check_over_a_real_xla_cpu_dump_folder_gives_the_local_totals_on_the_cluster(scheduler, xla_cpu_dump, capfd):
    assert cli.main(["check", str(xla_cpu_dump), "--json", "--jobs", "2"]) == 0
    local = json.loads(capfd.readouterr().out)
    assert cli.main(["check", str(xla_cpu_dump), "--json", "--scheduler", scheduler]) == 0
    assert json.loads(capfd.readouterr().out) == local
    # Oracle: the folder's own text, every module XLA wrote with control edges.
    texts = [p.read_text() for p in sorted(xla_cpu_dump.rglob("*.txt")) if p.read_text().startswith("HloModule")]
    with_edges = [t for t in texts if count_control_edges(t)]
    assert len(local["modules"]) == len(with_edges) >= 3
    assert local["totals"]["edges"] == sum(count_control_edges(t) for t in with_edges)
    assert local["totals"]["lost"] == local["totals"]["errors"] == 0


@pytest.fixture
def corpus(tmp_path) -> Path:
    """A corpus of two programs, as tests/corpus holds them."""
    for name in PROGRAMS:
        for sub, ext in (("inputs", ".npz"), ("expected", ".npz"), ("goldens", ".json")):
            (tmp_path / sub).mkdir(exist_ok=True)
            shutil.copy(CORPUS / sub / f"{name}{ext}", tmp_path / sub)
        shutil.copy(CORPUS / f"{name}.jaxexport", tmp_path)
    return tmp_path


def test_regress_on_the_cluster_gives_the_rows_of_a_local_run(scheduler, corpus, capsys):
    assert cli.main(["regress", str(corpus), "--json"]) == 0
    local = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert cli.main(["regress", str(corpus), "--json", "--scheduler", scheduler]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == local
    assert sorted({r["program"] for r in local}) == sorted(PROGRAMS)
    assert all(r["golden"] == "ok" and r["numerics"] == "ok" and r["lost"] == 0 for r in local)


def test_update_goldens_on_the_cluster_writes_them_here(scheduler, corpus, capsys):
    """The workers send the records back; this process writes the files."""
    golden = corpus / "goldens" / f"{PROGRAMS[0]}.json"
    expected = json.loads(golden.read_text())
    golden.unlink()
    assert cli.main(["regress", str(corpus), "--scheduler", scheduler]) == 1  # a missing golden
    assert cli.main(["regress", str(corpus), "--scheduler", scheduler, "--update-goldens"]) == 0
    capsys.readouterr()
    written = json.loads(golden.read_text())
    # The edge reports are the same on every jax release (the Penguin program's hash is not).
    assert {m: {d: r["report"] for d, r in by.items()} for m, by in written.items()} == \
        {m: {d: r["report"] for d, r in by.items()} for m, by in expected.items()}
    assert cli.main(["regress", str(corpus), "--json"]) == 0  # a local run agrees with what was written
    assert all(json.loads(line)["golden"] == "ok" for line in capsys.readouterr().out.splitlines())


def a_closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("command", ["check", "regress"])
def test_an_unreachable_scheduler_is_one_line_and_exit_2(command, tmp_path, corpus, capfd, monkeypatch):
    monkeypatch.setattr(workers, "CONNECT_TIMEOUT", 1)
    address = f"tcp://127.0.0.1:{a_closed_port()}"
    where = str(make_dump_folder(tmp_path / "dumps")) if command == "check" else str(corpus)
    assert cli.main([command, where, "--scheduler", address]) == 2
    out, err = capfd.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"hlo2penguin {command}: error: cannot reach the Dask scheduler at '{address}': ")
    assert "dask scheduler" in err


@pytest.mark.parametrize("command", ["check", "regress"])
def test_without_distributed_scheduler_says_what_to_install(command, tmp_path, corpus, capfd, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` raises ImportError
    where = str(make_dump_folder(tmp_path / "dumps")) if command == "check" else str(corpus)
    assert cli.main([command, where, "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    out, err = capfd.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.strip() == (f"hlo2penguin {command}: error: --scheduler needs the optional 'distributed' package, "
                           "which is not installed: pip install 'hlo2penguin[distributed]'")


def test_jobs_and_scheduler_together_are_a_usage_error(corpus, capfd):
    assert cli.main(["regress", str(corpus), "--jobs", "2", "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    assert "not both" in capfd.readouterr().err
    assert os.listdir(corpus / "goldens")  # nothing touched
