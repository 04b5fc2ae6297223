"""`--timings`: the seconds each step took, on stderr, what `python -m bench`
reads for P5's steps. The steps are the chain's own (`pipeline.chain.steps`),
in the order they ran; timing changes nothing the command writes."""

from __future__ import annotations

from bench.__main__ import reported_steps
from pipeline.chain.steps import steps
from pipeline.chain.options import Options
from pipeline.cli import hlo2penguin as cli


def run(argv, capsys):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_each_step_is_timed_in_the_order_it_ran_and_the_output_is_unchanged(tmp_path, capsys):
    plain, timed = tmp_path / "plain.py", tmp_path / "timed.py"
    assert run(["-o", str(plain), "-q"], capsys)[0] == 0
    status, out, err = run(["-o", str(timed), "-q", "--timings"], capsys)
    assert status == 0 and out == ""
    assert timed.read_bytes() == plain.read_bytes()
    seconds = reported_steps(err)
    chain = [step.name for step in steps(Options())]  # the default chain: every link and the proof
    assert list(seconds) == chain + ["output", "total"]
    assert all(s >= 0 for s in seconds.values())
    total = seconds.pop("total")
    assert abs(total - sum(seconds.values())) <= 0.002  # each printed to the millisecond


def test_a_chain_that_stops_after_link_1_times_the_steps_it_ran(capsys):
    status, out, err = run(["--emit", "hlo", "--timings"], capsys)
    assert status == 0 and "AwsNeuronControlDep" in out
    assert list(reported_steps(err)) == ["read", "link #1", "write", "XLA read-back", "output", "total"]
    assert "control edge(s)" in err.splitlines()[0]  # the summary is still said, and the timings come last


def test_quiet_keeps_the_timings_alone(capsys):
    status, _, err = run(["-q", "--timings"], capsys)
    assert status == 0 and err.splitlines()[0] == "hlo2penguin: seconds per step"
