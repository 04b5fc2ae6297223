"""The pytest plugin (pipeline/pytest_plugin.py) in real pytest runs
(pytester, in this process): a corpus and HLO module files become items,
judged by the real chain, named for -k, one JUnit case each (read back
with junitparser)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from junitparser import JUnitXml

from pipeline.chain.example import EXAMPLE_HLO
from pipeline.cli.regress import check_program, read_program
from pipeline.xla import versions

pytest_plugins = ["pytester"]

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
PLUGIN = ("-p", "pipeline.pytest_plugin", "-p", "no:cacheprovider")


def copy_corpus(folder: Path, *names: str) -> Path:
    """`names` of the repository's corpus with their inputs, expected outputs and goldens."""
    for sub, suffix in (("", ".jaxexport"), ("inputs", ".npz"), ("expected", ".npz"), ("goldens", ".json")):
        (folder / sub).mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy(CORPUS / sub / f"{name}{suffix}", folder / sub / f"{name}{suffix}")
    for name in names:  # the golden's Penguin programs, beside its JSON
        shutil.copytree(CORPUS / "goldens" / name, folder / "goldens" / name)
    return folder


def regress_rows(folder: Path, name: str) -> list[str]:
    """The items regress's rows call for, named as the plugin names them (the oracle: regress itself)."""
    rows, _ = check_program(read_program(str(folder), name), False)
    return [f"{r.program}:{r.module}[{r.dialect}]" for r in rows]


@pytest.fixture(scope="module", autouse=True)
def warm():
    """The chain imported before pytester's first run (it restores sys.modules after each)."""
    regress_rows(CORPUS, "fori_inplace")


def test_a_corpus_gives_one_passing_item_per_regress_row_and_one_junit_case_each(pytester):
    corpus = copy_corpus(pytester.path / "corpus", "fori_inplace", "while_swap_buffers")
    want = regress_rows(corpus, "fori_inplace") + regress_rows(corpus, "while_swap_buffers")
    result = pytester.runpytest(*PLUGIN, "--hlo2penguin-corpus", "corpus", "--junitxml", "results.xml")
    result.assert_outcomes(passed=len(want))
    cases = [case for suite in JUnitXml.fromfile(str(pytester.path / "results.xml")) for case in suite]
    assert sorted(case.name for case in cases) == sorted(want)
    assert all(case.is_passed for case in cases)


def test_k_selects_items_by_program_and_dialect(pytester):
    corpus = copy_corpus(pytester.path / "corpus", "fori_inplace", "while_swap_buffers")
    want = [n for n in regress_rows(corpus, "while_swap_buffers") if n.endswith("[mhlo]")]
    result = pytester.runpytest(*PLUGIN, "--hlo2penguin-corpus", "corpus", "-k", "while_swap and mhlo", "-v")
    result.assert_outcomes(passed=len(want))
    assert len(want) > 1
    result.stdout.fnmatch_lines([f"*{name.replace('[', '[[]')} PASSED*" for name in want], consecutive=False)


def _golden_record(golden: dict, module: str, dialect: str) -> dict:
    """The part of a golden record this jax reads (its own fields, or what its by_jax entry replaces)."""
    record = golden[module][dialect]
    return record.get("by_jax", {}).get(versions.JAX, record) if "report" in record.get("by_jax", {}).get(
        versions.JAX, {}) else record


def test_a_golden_altered_by_hand_fails_its_item_naming_the_change(pytester):
    corpus = copy_corpus(pytester.path / "corpus", "fori_inplace")
    path = corpus / "goldens" / "fori_inplace.json"
    golden = json.loads(path.read_text())
    module = next(iter(golden))
    edge = _golden_record(golden, module, "stablehlo")["report"]["edges"][0]
    fate = edge["fate"]
    edge["fate"] = "dropped" if fate != "dropped" else "preserved"
    # The mhlo program as an older chain might have printed it: one line more, its hash the golden's.
    record = golden[module]["mhlo"]
    program = corpus / "goldens" / record["program"]
    program.write_text("# printed by an older chain\n" + program.read_text())
    record["penguin_sha256"] = hashlib.sha256(program.read_bytes()).hexdigest()
    record.get("by_jax", {}).get(versions.JAX, {}).pop("penguin_sha256", None)
    path.write_text(json.dumps(golden))
    result = pytester.runpytest(*PLUGIN, "--hlo2penguin-corpus", "corpus")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        f"fori_inplace {module} [[]stablehlo]: a regression *",
        "  golden: changed: edge report",
        f"    %*: %{edge['predecessor']} -> %{edge['successor']}: {edge['fate']} → {fate}",
    ])
    result.stdout.fnmatch_lines([
        "  golden: changed: penguin program",
        f"  --- goldens/{record['program']}*",
        "  +++ this run*",
        "  -# printed by an older chain",
    ])
    assert "Traceback" not in result.stdout.str()


def test_a_folder_of_modules_gives_an_item_per_module_and_dialect(pytester):
    modules = pytester.mkdir("modules")
    (modules / "example.txt").write_text(EXAMPLE_HLO)
    (modules / "refused.hlo").write_text("HloModule refused\n\nENTRY %main { nonsense }\n")
    (modules / "buffer-assignment.txt").write_text("BufferAssignment:\nallocation 0\n")  # in XLA's dumps: not a module
    result = pytester.runpytest(*PLUGIN, "--hlo2penguin-corpus", "modules", "-v")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*example.txt[[]stablehlo] PASSED*", "*example.txt[[]mhlo] PASSED*"],
                                consecutive=False)
    result.stdout.fnmatch_lines(["refused.hlo: the chain refuses it: XlaRejected: *refused.hlo:3:*"])
    only = pytester.runpytest(*PLUGIN, "--hlo2penguin-corpus", "modules/example.txt", "--hlo2penguin-dialect", "mhlo",
                              "-v")
    only.assert_outcomes(passed=1)
    only.stdout.fnmatch_lines(["*example.txt[[]mhlo] PASSED*"])


def test_the_ini_option_names_paths_from_the_ini_file_and_items_are_not_collected_twice(pytester):
    corpus = copy_corpus(pytester.path / "corpus", "fori_inplace")
    pytester.makeini("[pytest]\ntestpaths = .\nhlo2penguin_corpus = corpus\n")
    sub = pytester.mkdir("elsewhere")
    sub.joinpath("test_one.py").write_text("def test_one():\n    pass\n")
    result = pytester.runpytest(*PLUGIN, "--collect-only", "-q")
    want = regress_rows(corpus, "fori_inplace")
    assert sorted(line.split("::")[-1] for line in result.outlines if "jaxexport::" in line) == sorted(want)
    result.stdout.fnmatch_lines(["elsewhere/test_one.py::test_one"], consecutive=False)
    (pytester.path / "example.txt").write_text(EXAMPLE_HLO)
    flagged = pytester.runpytest(*PLUGIN, "--collect-only", "-q", "--hlo2penguin-corpus", "example.txt")
    assert sorted(line for line in flagged.outlines if "::" in line) == [  # the flag takes the ini value's place
        "elsewhere/test_one.py::test_one", "example.txt::example.txt[mhlo]", "example.txt::example.txt[stablehlo]"]


def test_without_the_option_the_plugin_collects_nothing(pytester):
    copy_corpus(pytester.path / "corpus", "fori_inplace")
    (pytester.path / "example.txt").write_text(EXAMPLE_HLO)
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = pytester.runpytest(*PLUGIN, "--collect-only", "-q")
    assert [line for line in result.outlines if "::" in line] == ["test_one.py::test_one"]


@pytest.mark.parametrize("argv, said", [
    (["--hlo2penguin-corpus", "nowhere"], "ERROR: --hlo2penguin-corpus: '*nowhere' does not exist"),
    (["--hlo2penguin-corpus", "empty"], "ERROR: --hlo2penguin-corpus: '*empty' holds no HLO module *"),
    (["--hlo2penguin-corpus", "corpus", "--hlo2penguin-dialect", "tosa"], "ERROR: hlo2penguin: unknown dialect tosa; *"),
])
def test_bad_configuration_is_one_usage_error(pytester, argv, said):
    copy_corpus(pytester.path / "corpus", "fori_inplace")
    pytester.mkdir("empty").joinpath("notes.md").write_text("nothing to collect\n")
    result = pytester.runpytest(*PLUGIN, *argv)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([said])
    assert "Traceback" not in result.stderr.str()


def test_a_lost_edge_is_named_as_the_verifier_names_it_with_its_link():
    import pipeline
    from pipeline.cli.regress import Row
    from pipeline.pytest_plugin import describe

    result = pipeline.run(EXAMPLE_HLO, reify=False)  # link #1 skipped: the importer drops the edges
    lost = result.report.lost
    assert lost and all(edge.lost_at for edge in lost)
    row = Row("example", "example:stage", "stablehlo", numerics="FAIL: result 0 differs from JAX's by up to 2")
    row.count(result.report)
    said = describe(row, {"example:stage": {"stablehlo": {"report": result.report.as_dict()}}}, {}).splitlines()
    assert said[0].startswith(f"example example:stage [stablehlo]: a regression ({row.edges} edges:")
    assert [f"  lost: {edge}" for edge in lost] == [line for line in said if line.startswith("  lost: ")]
    assert "  numerics: FAIL: result 0 differs from JAX's by up to 2" in said


def test_the_plugins_dialects_are_the_chains():
    from passes.dialects import DIALECTS
    from pipeline.pytest_plugin import ALL_DIALECTS

    assert ALL_DIALECTS == tuple(DIALECTS)  # its own copy keeps `import pytest` light for every session


def test_an_xla_dump_folder_collects_its_modules_not_its_reports(pytester):
    """XLA dumps options and memory-usage reports as *.pb beside the modules'
    protos: the plugin collects what `hlo2penguin check` counts as modules."""
    from proto_dumps import dump

    from pipeline.reading import binary

    folder = dump(pytester.path / "xla_dump", text=False, proto=True)
    found = sorted(p.name for p in folder.glob("*.pb"))
    modules = []
    for name in found:
        try:
            binary.read_binary((folder / name).read_bytes(), name)
            modules.append(name)
        except binary.BadBinary:
            pass
    assert len(modules) < len(found)  # the dump holds other messages too (the oracle: the binary reader)
    result = pytester.runpytest(*PLUGIN, "--hlo2penguin-corpus", "xla_dump", "--hlo2penguin-dialect", "stablehlo",
                                "--collect-only", "-q")
    collected = sorted({line.split("::")[0].rsplit("/", 1)[-1] for line in result.outlines if "::" in line})
    assert collected == modules
