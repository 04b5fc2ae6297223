"""Model Explorer, served with the chain's graphs and its adapter on
localhost, loaded in headless Chromium: what the page itself shows (its
info panel, its overlay menu, the graphs it loaded, the colours it drew)
against the executed program and the verifier's report."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

import pipeline
from paths import CORPUS, REPO
from pipeline import explorer
from pipeline.chain.example import EXAMPLE_HLO
from printer.penguin.explorer.serve import model_url
from test_graphs import program_nodes, xla_printed, _read_text

LOAD_SECONDS = float(__import__("os").environ.get("LOAD_SECONDS", "90"))


def page_text(driver) -> str:
    return driver.find_element("tag name", "body").text


def open_page(driver, url: str, needle: str = "op node count") -> str:
    """Load `url` and wait until the page shows `needle`: its text."""
    driver.get(url)
    deadline = time.monotonic() + LOAD_SECONDS
    while time.monotonic() < deadline:
        text = page_text(driver)
        if needle in text:
            time.sleep(1.0)  # the canvas draws after the panel fills
            return page_text(driver)
        time.sleep(0.25)
    pytest.fail(f"the page never showed {needle!r}; it shows: {page_text(driver)[:500]!r}")


def counts_shown(text: str) -> list[int]:
    """Every `op node count` the page's info panels show."""
    return [int(n) for n in re.findall(r"op node count\n(\d+)", text)]


def overlay_menu(driver) -> str:
    """The edge overlay menu's text (opened from the toolbar, then closed)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    (button,) = [b for b in driver.find_elements(By.XPATH, "//*[normalize-space(text())='polyline']")
                 if b.is_displayed()][:1]
    button.click()
    time.sleep(1.0)
    text = page_text(driver)
    driver.find_element("tag name", "body").send_keys(Keys.ESCAPE)
    time.sleep(0.5)
    return text[text.index("EDGE OVERLAYS"):]


def loaded_graphs(driver) -> dict:
    """The graphs the page loaded from its server, fetched by the page."""
    raw = driver.execute_async_script(
        "const done = arguments[0];"
        "fetch('/api/v1/load_graphs_json?graph_index=0').then(r => r.text()).then(done);")
    (collection,) = json.loads(raw)["graphCollections"]
    return {g["id"]: g for g in collection["graphs"]}


def pixels_near(png: bytes, color: str, within: int = 40) -> int:
    """How many pixels of the screenshot are within `within` (per channel) of `color`."""
    import numpy as np
    from PIL import Image

    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)
    want = np.array([int(color[k:k + 2], 16) for k in (1, 3, 5)], dtype=np.int16)
    return int(np.all(np.abs(image - want) <= within, axis=-1).sum())


def keep(driver, name: str) -> None:
    """Where HLO2PENGUIN_SCREENSHOTS names a folder, the page's screenshot goes there (the docs' pictures)."""
    folder = os.environ.get("HLO2PENGUIN_SCREENSHOTS")
    if folder:
        driver.save_screenshot(str(Path(folder) / f"{name}.png"))


@pytest.fixture(scope="module")
def unflattened():
    """The built-in example without link #3: a lost edge and two spurious dep edges."""
    result = pipeline.run(EXAMPLE_HLO, pipeline.Options(flatten=False))
    assert result.report.lost and result.report.spurious
    return result


@pytest.fixture(scope="module")
def served(unflattened, model_explorer):
    with explorer.explore(unflattened, side_by_side=False) as served:
        yield served


def test_the_page_draws_every_op_and_every_dep_edge(chromium, served, unflattened):
    module = unflattened.module()
    text = open_page(chromium, served.url)
    assert counts_shown(text) == [program_nodes(module)]
    menu = overlay_menu(chromium)
    assert f"every dep edge ({len(module.dependencies)})" in menu
    totals = unflattened.report.totals()
    assert f"lost ({totals['lost']} edge)" in menu and f"spurious ({totals['spurious']} edges)" in menu
    graphs = loaded_graphs(chromium)
    (menu_data,) = graphs[explorer.PENGUIN_GRAPH]["tasksData"]["edgeOverlaysDataListLeftPane"]
    every = next(o for o in menu_data["overlays"] if o["name"].startswith("every dep edge"))
    pairs = {(e["sourceNodeId"], e["targetNodeId"]) for e in every["edges"]}
    assert pairs == {(d.predecessor.name, d.successor.name) for d in module.dependencies}


@pytest.mark.parametrize("fate", ["lost", "spurious"])
def test_lost_and_spurious_edges_are_drawn_in_their_colour(chromium, served, unflattened, fate):
    """With the edge's successor selected, the page draws the overlay in the fate's colour;
    the same op of the program the chain gets right (link #3 on) shows none of it. Opened without
    node data: a node coloured by its worst fate would show the colour too."""
    report = unflattened.report
    edge = report.lost[0] if fate == "lost" else report.spurious[0]
    state = explorer.ui_state(explorer.PENGUIN_GRAPH, select=edge.successor)
    open_page(chromium, model_url(served.base, served.name, [], state), "NODE INFO")
    drawn = pixels_near(chromium.get_screenshot_as_png(), explorer.FATE_COLORS[fate])
    keep(chromium, f"explorer-{fate}")
    with explorer.explore(pipeline.run(EXAMPLE_HLO), side_by_side=False) as right:
        open_page(chromium, model_url(right.base, right.name, [], state), "NODE INFO")
        clean = pixels_near(chromium.get_screenshot_as_png(), explorer.FATE_COLORS[fate])
    assert drawn > 50 and clean < drawn / 10, (drawn, clean)


def test_hlo2penguin_explore_serves_a_jax_program(chromium, tmp_path):
    """`hlo2penguin ARTIFACT --explore`: the address on stderr, the HLO and the program side by side,
    Ctrl+C ends the server."""
    artifact = CORPUS / "rnn_grad.jaxexport"
    process = subprocess.Popen([sys.executable, "-m", "pipeline.cli", str(artifact), "--explore",
                                "-o", str(tmp_path / "out.py")], cwd=REPO, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 180
        while not any(line.startswith("http://") for line in lines) and time.monotonic() < deadline:
            assert process.poll() is None, "".join(lines)
            time.sleep(0.2)
        url = next(line.strip() for line in lines if line.startswith("http://"))
        result = pipeline.run(str(artifact))
        names, _ = xla_printed(_read_text(result))
        text = open_page(chromium, url)
        assert sorted(counts_shown(text)) == sorted([len(names), program_nodes(result.module())])
        keep(chromium, "explorer-side-by-side")
        graphs = loaded_graphs(chromium)
        (menu_data,) = graphs[explorer.PENGUIN_GRAPH]["tasksData"]["edgeOverlaysDataListLeftPane"]
        every = next(o for o in menu_data["overlays"] if o["name"].startswith("every dep edge"))
        assert len(every["edges"]) == len(result.module().dependencies) == result.report.dep_edges > 0
    finally:
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert status == 0
    base = url.split("/?", 1)[0]
    with pytest.raises(OSError):
        urllib.request.urlopen(base + "/check_health", timeout=5)


def _training_step_module(blocks: int) -> str:
    """XLA's module after copy insertion of a JAX training step: `blocks` scans of a small
    two-matmul layer, their gradient and an update (66 blocks: 30k to 34k instructions)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from pipeline import sources

    def model(params, x):
        def layer(h, w):
            h = jnp.tanh(h @ w["a"] + w["b"])
            h = h + jax.nn.softmax(h @ w["c"], axis=-1) @ w["c"].T
            return h, h.sum()
        for block in params:
            x, s = jax.lax.scan(layer, x, block)
            x = x.at[0].add(s[-1])
        return (x ** 2).mean()

    def step(params, x):
        loss, grads = jax.value_and_grad(model)(params, x)
        return loss, jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

    width = 8
    params = [{"a": np.full((3, width, width), 0.1, np.float32), "b": np.zeros((3, width), np.float32),
               "c": np.full((3, width, width), 0.05, np.float32)} for _ in range(blocks)]
    captured = sources.from_jax(step, params, np.ones((4, width), np.float32))
    return max(captured.modules, key=lambda m: m.hlo_text.count(" = ")).hlo_text


def test_a_training_step_of_30k_instructions_opens_with_its_spurious_edges_drawn(chromium):
    """At scale, with an op inside a loop body selected: the page lays out the program, opens the
    layer and draws the op's overlay edges (an overlay that drew all its edges would open every
    layer they touch and stop the page). The chain is run with link #1 bundling and link #3
    skipped, so that every dep edge is spurious."""
    text = _training_step_module(66)  # 460 to 510 instructions a block, as jax releases compile it
    assert text.count(" = ") > 30_000
    result = pipeline.run(text, pipeline.Options(flatten=False, bundle=True))
    spurious = result.report.spurious
    assert len(spurious) == result.report.dep_edges > 500
    edge = spurious[len(spurious) // 2]
    with explorer.explore(result, side_by_side=False, select=edge.successor) as served:
        state = explorer.ui_state(explorer.PENGUIN_GRAPH, select=edge.successor)
        text = open_page(chromium, model_url(served.base, served.name, [], state), "NODE INFO")
        assert f"op name\n{edge.successor}\n" in text
        drawn = pixels_near(chromium.get_screenshot_as_png(), explorer.FATE_COLORS["spurious"])
        keep(chromium, "explorer-30k-spurious")
        state = explorer.ui_state(explorer.PENGUIN_GRAPH)
        counts = counts_shown(open_page(chromium, model_url(served.base, served.name, [], state)))
    assert drawn > 50
    assert counts == [program_nodes(result.module())]
