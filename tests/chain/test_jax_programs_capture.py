"""Tests for the JAX program corpus in ``tests/jax_programs.py``."""

from __future__ import annotations

import os
import tempfile

import pytest

import jax_programs as jp
from jaxlib import _hlo

MIN_PROGRAMS_WITH_EDGES = 6


def _by_program() -> dict[str, list[tuple[str, str]]]:
    groups: dict[str, list[tuple[str, str]]] = {name: [] for name, _, _ in jp.PROGRAMS}
    for ident, text in jp.corpus():
        prog, file_name = ident.split("/", 1)
        groups[prog].append((file_name, text))
    return groups


def test_program_names_unique_and_enough():
    names = [name for name, _, _ in jp.PROGRAMS]
    assert len(names) == len(set(names))
    assert len(names) >= 8


@pytest.mark.parametrize("name", [name for name, _, _ in jp.PROGRAMS])
def test_every_program_yields_a_module(name):
    files = _by_program()[name]
    assert files, f"{name}: no HLO module dumps captured"
    # Only HLO module dumps, never the buffer/memory reports.
    for file_name, _ in files:
        assert jp.is_hlo_dump_name(file_name), file_name


def test_enough_programs_have_control_edges():
    with_edges = {
        prog
        for prog, files in _by_program().items()
        if any("control-predecessors=" in text for _, text in files)
    }
    assert len(with_edges) >= MIN_PROGRAMS_WITH_EDGES, sorted(with_edges)


def test_edges_appear_in_interference_stage():
    # The documented claim: the first copy-insertion sub-stage carries edges.
    for prog, files in _by_program().items():
        stage = [t for f, t in files if "after_adding_copies_to_resolve_interference" in f]
        assert stage, prog
        assert any(jp.count_control_edges(t) > 0 for t in stage), prog


def test_count_control_edges():
    text = (
        "%a = f32[] copy(%x), control-predecessors={%b, %c}\n"
        "%d = f32[] copy(%y), control-predecessors={%e}\n"
        "%f = f32[] copy(%z)\n"
    )
    assert jp.count_control_edges(text) == 3
    assert jp.count_control_edges("") == 0


def test_every_text_parses():
    items = jp.corpus()
    assert items
    for ident, text in items:
        try:
            _hlo.hlo_module_from_text(text)
        except Exception as exc:  # pragma: no cover - only on failure
            pytest.fail(f"{ident} does not parse: {exc}")


def test_corpus_is_memoized_and_sorted_per_program():
    assert jp.corpus() == jp.corpus()
    for files in _by_program().values():
        names = [f for f, _ in files]
        assert names == sorted(names)


def test_dump_folder_removed(monkeypatch):
    created: list[str] = []
    real = tempfile.TemporaryDirectory

    def recording(*args, **kwargs):
        td = real(*args, **kwargs)
        created.append(td.name)
        return td

    monkeypatch.setattr(jp.tempfile, "TemporaryDirectory", recording)
    name, fn, args = jp.PROGRAMS[0]
    files = jp.capture_dumps(fn, args)
    assert files, name
    assert len(created) == 1
    assert not os.path.exists(created[0])
