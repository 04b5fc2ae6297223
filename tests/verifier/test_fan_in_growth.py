"""A fan-in costs the proof work in proportion to its edges: counted, not timed.

F control edges into one `add` (`bench.synthetic.fan_in`) at F and 4F: the
lines of the project's own code that run (counted with `sys.settrace`, per
room) grow about 4x when the work is linear, 16x for a scan of every edge
into the successor for each edge (the verifier once did that). The bound
is 1.5x the linear growth, for the whole chain with its check (links #1-#4,
the program run, the verifier) in both dialects, and for the verifier run
alone on the program (`hlo2penguin verify`'s work).
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

import pipeline
from bench.synthetic import fan_in

ROOT = str(Path(pipeline.__file__).resolve().parent.parent) + "/"
SMALL, LARGE = 250, 1000
BOUND = 1.5 * LARGE / SMALL  # 1.5x the linear growth


def lines_run(fn) -> collections.Counter:
    """Lines of the project's code (outside tests/) that `fn()` runs, by room
    (`pipeline/verifier`, `printer/penguin`, `passes/hlo`, …)."""
    counts: collections.Counter = collections.Counter()

    def local(frame, event, arg):
        if event == "line":
            counts[frame.f_code.co_filename] += 1
        return local

    def calls(frame, event, arg):
        name = frame.f_code.co_filename
        return local if name.startswith(ROOT) and not name.startswith(ROOT + "tests/") else None

    before = sys.gettrace()
    sys.settrace(calls)
    try:
        fn()
    finally:
        sys.settrace(before)
    rooms: collections.Counter = collections.Counter()
    for name, n in counts.items():
        rooms["/".join(name[len(ROOT):].split("/")[:2])] += n
    return rooms


def assert_linear(small: collections.Counter, large: collections.Counter) -> None:
    growth = {room: large[room] / small[room] for room in small if small[room] >= 200}
    assert sum(large.values()) / sum(small.values()) <= BOUND, growth
    assert all(g <= BOUND for g in growth.values()), growth  # no room hides a square in the total
    assert sum(large.values()) > 3 * sum(small.values())  # the count does see the edges


@pytest.mark.parametrize("dialect", ["stablehlo", "mhlo"])
def test_the_check_grows_linearly_in_a_fan_in(dialect):
    def chain(edges):
        text = fan_in(edges)
        return lambda: pipeline.run(text, isolate=False, check=True, dialect=dialect)

    chain(10)()  # imports and first-call caches outside the count
    small, large = lines_run(chain(SMALL)), lines_run(chain(LARGE))
    assert small["pipeline/verifier"] > 0 and small["printer/penguin"] > 0
    assert_linear(small, large)


def test_the_verifier_alone_grows_linearly_in_a_fan_in():
    def verify(edges):
        text = fan_in(edges)
        program = pipeline.run(text, isolate=False).penguin_source
        return lambda: pipeline.verify(text, program)

    verify(10)()
    small, large = lines_run(verify(SMALL)), lines_run(verify(LARGE))
    assert small["pipeline/verifier"] > 0
    assert_linear(small, large)
