"""The product's and the benchmarks' import graph, drawn from the source with every import in it, those inside
functions included, and the backend registry's "module:function" strings (device/runner/backends.py imports them
when a backend is built): no module imports itself round a cycle, and core/ never imports device/ or app/."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "device", "app", "cli", "bench")
FACTORY = re.compile(r"^([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+):[a-z_][a-z0-9_]*$")   # "module:function"


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the product modules it imports anywhere in its text (`from a import b` is a.b when that is a
    module, else a)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and FACTORY.match(node.value):
                targets = [FACTORY.match(node.value).group(1)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in modules and t != name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_product_has_no_import_cycle_counting_imports_inside_functions():
    assert cycles(import_graph()) == []


def test_the_graph_holds_imports_inside_functions_and_the_finder_sees_a_cycle_through_one():
    graph = import_graph()
    # onnx_backend imports the graph builders only inside full(), to keep a cached start from importing onnx
    assert "device.graphs.onnx_graphs" in graph["device.runner.onnx.onnx_backend"]
    graph["device.runner.onnx.ort_session"] = graph["device.runner.onnx.ort_session"] | {"device.runner.onnx.onnx_backend"}
    assert any({"device.runner.onnx.onnx_backend", "device.runner.onnx.ort_session"} <= set(c) for c in cycles(graph))


def test_the_graph_holds_the_registry_factories_and_the_benchmarks():
    graph = import_graph()
    assert "device.runner.neuron.dla_backend" in graph["device.runner.backends"]     # only a factory string names it
    assert "device.runner.native.library" in graph["device.runner.backends"]  # a probe's string
    assert "bench.step_bytes" in graph["bench.bytes_by_dtype"]


def test_core_imports_neither_device_nor_app():
    graph = import_graph()
    assert {m: sorted(t for t in targets if t.startswith(("device", "app")))
            for m, targets in graph.items() if m.startswith("core") and any(t.startswith(("device", "app"))
                                                                             for t in targets)} == {}
