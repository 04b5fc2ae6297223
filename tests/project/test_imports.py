"""No import cycle among the project's modules, lazy imports included.

Every `import` and `from … import` of a project module is an edge, wherever
it stands: at module level, inside a function, a method, a `try` or an `if`.
`from pkg import name` is an edge to the submodule `pkg.name` when that is a
module file, else to `pkg` (its `__init__`). The implicit import of the parent
packages of an imported module is not an edge (importing `a.b.c` runs
`a/__init__.py` and `a/b/__init__.py`; counting that would make every package
that imports one of its own submodules a cycle).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from paths import REPO as ROOT

PACKAGES = ("pipeline", "passes", "printer", "bench")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    where: str  # path:line of the import statement
    lazy: bool  # inside a function


def project_modules(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name → its file, for every .py file of `packages`."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if "__pycache__" in parts:
                continue
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _targets(node: ast.AST, module: str, is_package: bool, modules: dict[str, Path]):
    """The project modules an import statement imports (parent packages aside)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name
            while name and name not in modules:  # `import a.b.missing`: the deepest module there is
                name = name.rpartition(".")[0]
            if name:
                yield name
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            package = module if is_package else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = ".".join(p for p in (package, node.module) if p)
        else:
            base = node.module or ""
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if alias.name != "*" and submodule in modules:
                yield submodule
            elif base in modules:
                yield base


def import_edges(root: Path = ROOT, packages=PACKAGES) -> list[Edge]:
    modules = project_modules(root, packages)
    edges = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            lazy, up = False, parents.get(node)
            while up is not None:
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    lazy = True
                    break
                up = parents.get(up)
            where = f"{path.relative_to(root)}:{node.lineno}"
            for target in _targets(node, module, path.name == "__init__.py", modules):
                edges.append(Edge(module, target, where, lazy))
    return edges


def _graph(edges: list[Edge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of `graph` (Tarjan's, iteratively), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return sorted(components)


def find_cycles(edges: list[Edge]) -> list[list[str]]:
    """One shortest cycle `[a, b, …, a]` through the first module (by name) of
    every strongly connected component that has one."""
    graph = _graph(edges)
    cycles = []
    for component in strongly_connected(graph):
        first = component[0]
        if len(component) == 1 and first not in graph[first]:
            continue
        inside = set(component)
        # Breadth first from `first` back to `first`, within the component.
        previous: dict[str, str] = {}
        frontier, found = [first], None
        while frontier and found is None:
            following = []
            for node in frontier:
                for succ in sorted(graph[node] & inside):
                    if succ == first:
                        found = node
                        break
                    if succ not in previous:
                        previous[succ] = node
                        following.append(succ)
                if found is not None:
                    break
            frontier = following
        path = [first]
        node = found
        while node != first:
            path.append(node)
            node = previous[node]
        cycles.append([first] + path[:0:-1] + [first])
    return cycles


def describe(cycles: list[list[str]], edges: list[Edge]) -> str:
    """Each cycle as `a -> b -> a`, then where each of its imports stands, and
    the other modules of its ring (they stay in a cycle until it is broken)."""
    by_pair: dict[tuple[str, str], list[Edge]] = {}
    for e in edges:
        by_pair.setdefault((e.source, e.target), []).append(e)
    ring_of = {m: c for c in strongly_connected(_graph(edges)) for m in c}
    lines = []
    for cycle in cycles:
        lines.append(" -> ".join(cycle))
        for a, b in zip(cycle, cycle[1:]):
            e = by_pair[(a, b)][0]
            lines.append(f"    {a} -> {b}: {e.where}{' (inside a function)' if e.lazy else ''}")
        others = [m for m in ring_of[cycle[0]] if m not in cycle]
        if others:
            lines.append(f"    in the same ring: {', '.join(others)}")
    return "\n".join(lines)


def test_no_import_cycle_among_the_projects_modules():
    edges = import_edges()
    cycles = find_cycles(edges)
    assert not cycles, "import cycles among the project's modules:\n" + describe(cycles, edges)


def test_the_edges_include_imports_inside_functions_and_resolve_submodules():
    edges = {(e.source, e.target) for e in import_edges()}
    # printer/__init__.py imports the printer on first use, inside __getattr__.
    assert ("printer", "printer.python_printer") in edges
    # `from printer.penguin import op_rules` is the submodule, not the package.
    assert ("printer.penguin.execute", "printer.penguin.op_rules") in edges
    assert ("printer.penguin.execute", "printer.penguin") not in edges


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_lazy_import_that_closes_a_ring_is_a_cycle(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from pkg.a import A\nfrom pkg.b import B\n",
        "pkg/a.py": "class A:\n    def run(self):\n        from pkg.b import run\n        return run(self)\n",
        "pkg/b.py": "from pkg import a\n\ndef run(x):\n    return x\n\nclass B:\n    pass\n",
        "pkg/c.py": "from . import b\nfrom .a import A\n",
    })
    edges = import_edges(tmp_path, ("pkg",))
    assert {(e.source, e.target, e.lazy) for e in edges} == {
        ("pkg", "pkg.a", False), ("pkg", "pkg.b", False), ("pkg.a", "pkg.b", True),
        ("pkg.b", "pkg.a", False), ("pkg.c", "pkg.b", False), ("pkg.c", "pkg.a", False)}
    cycles = find_cycles(edges)
    assert cycles == [["pkg.a", "pkg.b", "pkg.a"]]
    message = describe(cycles, edges)
    assert message.splitlines()[0] == "pkg.a -> pkg.b -> pkg.a"
    assert "pkg/a.py:3 (inside a function)" in message


def test_the_implicit_import_of_parent_packages_is_no_edge(tmp_path):
    # Importing pkg.sub.helper runs pkg/__init__.py, which imports pkg.a: were
    # that an edge, every package importing its own submodules would be a ring.
    _write(tmp_path, {
        "pkg/__init__.py": "from pkg.a import A\n",
        "pkg/a.py": "A = 1\n\ndef f():\n    import pkg.sub.helper\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/helper.py": "import os\n",
    })
    edges = import_edges(tmp_path, ("pkg",))
    assert {(e.source, e.target) for e in edges} == {("pkg", "pkg.a"), ("pkg.a", "pkg.sub.helper")}
    assert find_cycles(edges) == []
    _write(tmp_path, {"pkg/sub/helper.py": "from pkg.a import A\n"})
    edges = import_edges(tmp_path, ("pkg",))
    assert describe(find_cycles(edges), edges).splitlines()[0] == "pkg.a -> pkg.sub.helper -> pkg.a"


def _private_jaxlib(name: str) -> bool:
    """Whether a dotted name is in a private module of jaxlib: any part after
    `jaxlib` starts with `_` (`jaxlib._hlo`, `jaxlib.mlir._mlir_libs._jax_mlir_ext`)."""
    first, *rest = name.split(".")
    return first == "jaxlib" and any(part.startswith("_") for part in rest)


def _jaxlib_private_imports(root: Path = ROOT, packages=("pipeline", "passes", "printer", "bench")
                            ) -> dict[str, list[str]]:
    """Module → the private jaxlib modules it imports, wherever the import
    stands: `import`, `from … import` (the module and each name it takes),
    and `importlib.import_module` or `__import__` of a constant name."""
    found: dict[str, list[str]] = {}
    for module, path in project_modules(root, packages).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)
                  and (getattr(node.func, "id", None) == "__import__"
                       or getattr(node.func, "attr", None) == "import_module")):
                names = [node.args[0].value]
            else:
                names = []
            private = [n for n in names if _private_jaxlib(n)]
            if private:
                found.setdefault(module, []).extend(private)
    return found


def test_only_the_xla_bridge_imports_jaxlibs_private_modules():
    # jaxlib's private modules change between releases: one module holds every use.
    assert set(_jaxlib_private_imports()) == {"pipeline.xla.native"}


def test_the_private_import_scan_finds_every_spelling(tmp_path):
    files = {
        "pipeline/a.py": "def f():\n    import jaxlib._jax as x\n",
        "pipeline/b.py": "from jaxlib._hlo import HloModule\nfrom jaxlib import mlir\n",
        "pipeline/c.py": "from jaxlib import _jax\n",
        # private deeper down: the MLIR extension the context builder needs
        "pipeline/d.py": "from jaxlib.mlir._mlir_libs import _jax_mlir_ext\nfrom jaxlib.mlir import ir\n",
        "pipeline/e.py": "from jaxlib.mlir import _mlir_libs\nimport jaxlib.mlir.dialects.stablehlo\n",
        "pipeline/f.py": "import importlib\nx = importlib.import_module('jaxlib._hlo')\ny = __import__('jaxlib.mlir')\n",
        "bench/g.py": "import jaxlib._hlo as xla_hlo\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert _jaxlib_private_imports(tmp_path, ("pipeline", "bench")) == {
        "pipeline.a": ["jaxlib._jax"], "pipeline.b": ["jaxlib._hlo.HloModule"], "pipeline.c": ["jaxlib._jax"],
        "pipeline.d": ["jaxlib.mlir._mlir_libs._jax_mlir_ext"], "pipeline.e": ["jaxlib.mlir._mlir_libs"],
        "pipeline.f": ["jaxlib._hlo"], "bench.g": ["jaxlib._hlo"]}


LAYERS = ("passes", "printer", "pipeline")  # each imports only those before it (and itself)


def _upward(edges: list[Edge]) -> list[Edge]:
    rank = {name: i for i, name in enumerate(LAYERS)}
    return [e for e in edges if e.source.split(".")[0] in rank and e.target.split(".")[0] in rank
            and rank[e.target.split(".")[0]] > rank[e.source.split(".")[0]]]


def test_imports_run_one_way_pipeline_printer_passes():
    up = _upward(import_edges())
    assert not up, "imports against pipeline -> printer -> passes:\n" + "\n".join(
        f"  {e.source} -> {e.target}: {e.where}" for e in up)


def test_the_layer_check_sees_a_lazy_upward_import(tmp_path):
    (tmp_path / "passes").mkdir()
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "run.py").write_text("")
    (tmp_path / "passes" / "pass_.py").write_text("def f():\n    from pipeline import run\n")
    up = _upward(import_edges(tmp_path, ("passes", "pipeline")))
    assert [(e.source, e.target, e.lazy) for e in up] == [("passes.pass_", "pipeline.run", True)]
