"""Model Explorer's web app on localhost, in a child process, showing
graphs made beforehand (`printer.penguin.explorer.module_graph`, or the
chain's `pipeline.explorer.chain_graphs`).

`serve(...)` writes the graphs to a temporary JSON file, starts
`python -m printer.penguin.explorer.serve FILE PORT [EXTENSION ...]`, and
returns once the child prints its address: a `Served` that gives the URL,
shows the app in Jupyter (an iframe) and stops the child (`close()`, or
when this process ends). The server runs apart from the caller because
Model Explorer's `server.start` never returns and owns its process's
signals; its death is a line from `Served`, never the caller's. The child
ends with its parent: it reads its stdin, which only the parent holds.

Model Explorer itself (`ai-edge-model-explorer`) is the optional extra
`explorer`: `pip install -e '.[explorer]'`."""

from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from urllib.parse import quote

INSTALL = "pip install 'hlo2penguin[explorer]' (or -e '.[explorer]' in a clone)"
START_SECONDS = 120.0  # importing Model Explorer and its extensions takes seconds on a loaded machine


class ExplorerError(RuntimeError):
    """Model Explorer is missing, or its server did not start: one line."""


def available() -> str | None:
    """None where Model Explorer can be imported, else why not (one line)."""
    import importlib.util

    if importlib.util.find_spec("model_explorer") is None:
        return f"Model Explorer is not installed: {INSTALL}"
    return None


def free_port(host: str = "localhost") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def model_name(text: str) -> str:
    """A name for a served model (it goes into the app's URL): `text`'s last path part, with
    what a URL path cannot hold made `_`."""
    base = os.path.basename(text.rstrip("/")) or text
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in base).strip("_") or "module"


def model_url(base: str, name: str, node_data: list[str] = (), ui_state: dict | None = None) -> str:
    """The address that opens the served graphs `name` (and its node data)
    directly: Model Explorer's `?data=` parameter, as its config writes it."""
    data: dict = {"models": [{"url": f"graphs://{name}/0"}]}
    if node_data:
        data["nodeData"] = [f"node_data://{n}/{i}" for i, n in enumerate(node_data)]
        data["nodeDataTargets"] = ["" for _ in node_data]
    if ui_state is not None:
        data["uiState"] = ui_state
    return f"{base}/?data={quote(json.dumps(data))}"


class Served:
    """A running Model Explorer: `url` opens the graphs; `base` is the app."""

    def __init__(self, process: subprocess.Popen, base: str, url: str, files: list[str], output: deque,
                 name: str = "", node_data: list[str] = ()):
        self.process, self.base, self.url = process, base, url
        self.name, self.node_data = name, list(node_data)  # what `model_url` needs to open them otherwise
        self._files, self._output = files, output
        atexit.register(self.close)

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """Stop the server (and remove its graphs' file); nothing if it has stopped."""
        if self.process.poll() is None:
            self.process.stdin.close()  # the child's own way out
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for f in self._files:
            try:
                os.unlink(f)
            except FileNotFoundError:
                pass
        self._files = []

    def wait(self) -> int:
        """Until the server stops (Ctrl+C in a terminal stops it): its exit status."""
        try:
            return self.process.wait()
        except KeyboardInterrupt:
            self.close()
            return 0

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Model Explorer at {self.base} ({'running' if self.running else 'stopped'})>"

    def _repr_html_(self) -> str:
        """Jupyter's view: the app in an iframe, and its address."""
        import html

        link = html.escape(self.url, quote=True)
        return (f'<iframe src="{link}" width="100%" height="720" style="border: 1px solid #ccc"></iframe>'
                f'<p>Model Explorer at <a href="{link}" target="_blank">{html.escape(self.base)}</a></p>')


def serve(graphs: dict, name: str, *, node_data: dict[str, dict] | None = None, port: int | None = None,
          host: str = "localhost", extensions: tuple[str, ...] = (), ui_state: dict | None = None) -> Served:
    """Serve `graphs` (Model Explorer's `{"graphs": [...]}` or `{"graphCollections": [...]}`
    JSON) as the model `name`, with `node_data` (name → Model Explorer's node data JSON, one
    graph's data per graph id) to colour its nodes by; `extensions`: adapter modules the app
    loads too (to open other files from its page). A free port unless `port` is given."""
    why = available()
    if why is not None:
        raise ExplorerError(why)
    port = port or free_port(host)
    handle, path = tempfile.mkstemp(prefix="hlo2penguin-explorer-", suffix=".json")
    with os.fdopen(handle, "w") as f:
        json.dump({"name": name, "graphs": graphs, "node_data": node_data or {}, "host": host,
                   "extensions": list(extensions)}, f)
    process = subprocess.Popen([sys.executable, "-m", "printer.penguin.explorer.serve", path, str(port)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    output: deque = deque(maxlen=40)
    base = _address(process, output)
    if base is None:
        process.kill()
        process.wait()
        os.unlink(path)
        last = next((line for line in reversed(output) if line.strip()), "no output")
        raise ExplorerError(f"Model Explorer did not start on {host}:{port}: {last.strip()}")
    threading.Thread(target=_drain, args=(process, output), daemon=True).start()
    return Served(process, base, model_url(base, name, list(node_data or {}), ui_state), [path], output, name,
                  list(node_data or {}))


def _address(process: subprocess.Popen, output: deque) -> str | None:
    """The child's address, once it prints it; None if it ends or is silent too long."""
    found: list[str] = []

    def read():
        for line in process.stdout:
            output.append(line)
            if line.startswith("serving http://"):
                found.append(line.split(None, 1)[1].strip())
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(START_SECONDS)
    return found[0] if found else None


def _drain(process: subprocess.Popen, output: deque) -> None:
    for line in process.stdout:
        output.append(line)


def _child(path: str, port: int) -> None:
    """The server: Model Explorer's app on `port`, the graphs of `path` loaded."""
    with open(path) as f:
        given = json.load(f)
    from model_explorer import config as me_config, server

    # Model Explorer asks the package index and GitHub whether a newer release
    # exists, at start and from its page: a served graph never waits on the network.
    from importlib import metadata

    running = metadata.version("ai-edge-model-explorer")
    server._check_new_version = lambda *a, **k: {"version": "", "runningVersion": running, "releaseUrl": "",
                                                 "desktopAppUrl": ""}
    cfg = me_config()
    cfg.graphs_list.append(json.dumps(given["graphs"]))
    cfg.model_sources.append({"url": f"graphs://{given['name']}/0"})
    for name, data in given["node_data"].items():
        cfg.add_node_data(name, json.dumps(data))
    host = given["host"]
    # The parent holds the child's stdin open: at its end, however it ends, the server ends too.
    threading.Thread(target=_end_with_parent, daemon=True).start()
    # Model Explorer's health check polls until the app answers; then we say where it is.
    ready = threading.Thread(target=_announce, args=(host, port), daemon=True)
    ready.start()
    server.start(host=host, port=port, config=cfg, no_open_in_browser=True, extensions=given["extensions"],
                 skip_health_check=True)


def _end_with_parent() -> None:
    sys.stdin.read()
    os._exit(0)


def _announce(host: str, port: int) -> None:
    import urllib.request

    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{host}:{port}/check_health", timeout=2) as r:
                if r.status == 200:
                    print(f"serving http://{host}:{port}", flush=True)
                    return
        except OSError:
            time.sleep(0.1)


if __name__ == "__main__":
    _child(sys.argv[1], int(sys.argv[2]))
