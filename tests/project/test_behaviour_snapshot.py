"""tests/behaviour_snapshot.py compares what the commands print before and
after a redesign: a changed program is a difference, the stack frames JAX
records of the capture code (which move with it) are not."""

from __future__ import annotations

import behaviour_snapshot as snapshot

FRAME = '{file_name_id=2 function_name_id=5 line=%d end_line=%d column=33 end_column=44}'
PROGRAM = "dep = module.add_dep_edge(src=a, dst=b, kind=EdgeKind.CONTROL)\n"


def _record(out: str, err: str = "", code: int = 0) -> dict:
    return {"code": code, "out": out, "stdout": "", "err": err}


def test_a_changed_program_status_or_message_is_a_difference():
    before = {"m.hlo": _record(PROGRAM), "bad.hlo": _record("", "error: x", 2)}
    assert snapshot.differences(before, before) == []
    after = {"m.hlo": _record(PROGRAM.replace("src=a", "src=c")), "bad.hlo": _record("", "error: x", 1)}
    found = snapshot.differences(before, after)
    assert [f.split("\n")[0] for f in found] == ["bad.hlo: code", "m.hlo: out"]
    assert "-dep = module.add_dep_edge(src=a" in found[1] and "+dep = module.add_dep_edge(src=c" in found[1]


def test_a_record_only_on_one_side_is_a_difference():
    assert snapshot.differences({"a": _record("")}, {"b": _record("")}) == ["only before: a", "only after: b"]


def test_where_the_capture_code_stands_is_no_difference():
    before = _record(f'4 "ROOT/pipeline/chain/sources.py"\n{FRAME % (262, 262)}\n')
    after = _record(f'4 "ROOT/pipeline/reading/capture.py"\n{FRAME % (260, 260)}\n')
    assert snapshot.differences({"a.jaxexport": before}, {"a.jaxexport": after}) == []
    # A user's file name in the metadata is the input's, and still compared.
    moved = _record(f'4 "ROOT/tests/user.py"\n{FRAME % (262, 262)}\n')
    assert snapshot.differences({"a.jaxexport": before}, {"a.jaxexport": moved}) != []
