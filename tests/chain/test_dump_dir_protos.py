"""`sources.from_dump_dir` over a folder XLA dumped as protos alone
(`--xla_dump_hlo_as_proto`): the modules, stages and edges of the same
programs dumped as text, each module's report the text's."""

from __future__ import annotations

import re

import pipeline
import proto_dumps
from pipeline.reading.capture import from_dump_dir


def run_free(name: str) -> str:
    """A dump name without the count newer XLA appends to a pass that runs once per compilation
    (`before_apply-xla-transforms-12`): the count goes on across a process's compilations, so two
    dumps made one after the other in one process number the same stage differently."""
    return re.sub(r"-\d+$", "", name)


def test_a_proto_dump_folder_captures_what_its_text_twin_does(tmp_path):
    text = from_dump_dir(proto_dumps.dump(tmp_path / "text", text=True, proto=False))
    proto = from_dump_dir(proto_dumps.dump(tmp_path / "proto", text=False, proto=True))
    assert len(text.modules) >= len(proto_dumps.NAMES)
    assert ([(run_free(m.name), run_free(m.stage)) for m in proto.all]
            == [(run_free(m.name), run_free(m.stage)) for m in text.all])
    assert ([(run_free(m.name), m.edges) for m in proto.modules]
            == [(run_free(m.name), m.edges) for m in text.modules])
    assert proto.pre_optimization.name == text.pre_optimization.name
    for a, b in zip(proto.modules, text.modules):
        assert pipeline.run(a).report.as_dict() == pipeline.run(b).report.as_dict(), a.name
