"""The house's imports: no cycle (counting imports inside functions and the strings that name a module for
importlib), every arrow one that the folder table of docs/architecture.md allows, the runner reached from beside it
only to load or probe a model, and every import inside a function saying why it is not at the top."""
from tests.import_graph import (
    PRODUCT,
    ROOT,
    cycles,
    folder_table,
    forbidden_arrows,
    import_arrows,
    local_imports,
    modules,
)

# The arrows into device/runner/ from the link, the doctor, deploy and device-info (at most 7): each loads or
# probes a model.
INTO_THE_RUNNER = {
    ("device.link.decoder", "device.runner.load"),                  # the in-process decoder loads the model...
    ("device.link.decoder", "device.runner.serve.served_model"),    # ... and says the runner's hello
    ("device.doctor.reference", "device.runner.load"),              # the PC's reference model
    ("device.doctor.reference", "device.runner.serve.probe"),       # the PC's numbers, as the board probes them
    ("device.doctor.numbers", "device.runner.serve.probe"),         # which probe outputs to compare
    ("device.deploy.deploy", "device.runner.cache_paths"),          # one cache root for the generated models
}
BESIDE_THE_RUNNER = ("device.link.", "device.doctor.", "device.deploy.", "device.info.")


def _files() -> dict[str, str]:
    return {m: p.relative_to(ROOT).as_posix() for m, p in modules().items()}


def _table() -> dict[str, list[str]]:
    return folder_table((ROOT / "docs" / "architecture.md").read_text())


def test_the_product_has_no_import_cycle_counting_imports_inside_functions_and_module_strings():
    assert cycles(import_arrows()) == []


def test_the_graph_holds_imports_inside_functions_and_the_finder_sees_a_cycle_through_one():
    graph = import_arrows()
    # onnx_backend imports the graph builders only inside full(), to keep a cached start from importing onnx
    assert "device.graphs.onnx_graphs" in graph["device.runner.onnx.onnx_backend"]
    graph["device.runner.onnx.ort_session"] = {**graph["device.runner.onnx.ort_session"],
                                               "device.runner.onnx.onnx_backend": 1}
    assert any({"device.runner.onnx.onnx_backend", "device.runner.onnx.ort_session"} <= set(c) for c in cycles(graph))


def test_the_graph_holds_the_registry_factories_the_command_table_and_the_benchmarks():
    graph = import_arrows()
    assert "device.runner.neuron.dla_backend" in graph["device.runner.backends"]     # only a factory string names it
    assert "device.runner.native.library" in graph["device.runner.backends"]  # a probe's string
    assert "cli.doctor_cmd" in graph["cli.main"]          # importlib.import_module(f"cli.{name}")
    assert "cli.__main__" not in graph["cli.main"]
    assert "bench.step_bytes" in graph["bench.bytes_by_dtype"]


def test_a_cycle_hidden_in_factory_strings_and_import_module_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("import importlib\n\n\ndef load():\n    return importlib.import_module('pkg.b')\n")
    (package / "b.py").write_text('_C, _X = "pkg.c", "other"\nROWS = (f"{_C}:run", f"{_X}:run")\n')
    (package / "c.py").write_text("import importlib\n\n\ndef run(name):\n"
                                  "    return importlib.import_module(f'pkg.{name}')\n")
    (package / "d.py").write_text('COMMAND = ["python3", "-m", "pkg.a"]   # another process: no arrow\n'
                                  'def row(name):\n    return f"{name}.a:run"   # it could be any module: none\n')
    graph = import_arrows(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.b": 5}
    assert graph["pkg.b"] == {"pkg.c": 2}
    assert set(graph["pkg.c"]) == {"pkg.a", "pkg.b", "pkg.d"}
    assert graph["pkg.d"] == {}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_every_arrow_keeps_the_folder_table_of_docs_architecture():
    assert forbidden_arrows(import_arrows(), _table(), _files()) == []


def test_an_arrow_the_table_forbids_fails_with_its_file_and_line():
    graph, table, files = import_arrows(), _table(), _files()
    injected = {("core.model.audio", "device.runner.load"), ("app.launch", "device.runner.bundle"),
                ("device.link.client", "device.runner.load"), ("device.spec.soc", "device.link.transport"),
                ("cli.transcribe", "app.launch"), ("device.runner.load", "device.link.client")}
    for module, target in injected:
        graph[module] = {**graph[module], target: 7}
    assert sorted(forbidden_arrows(graph, table, files)) == sorted(f"{files[m]}:7 imports {t}" for m, t in injected)


def test_the_folder_table_names_paths_that_exist_and_holds_every_module():
    table = {row: items for row, items in _table().items() if row.split("/")[0] in PRODUCT + ("bench",)}
    named = set(table) | {item for items in table.values() for item in items}
    assert [p for p in sorted(named) if not (ROOT / p).exists()] == []
    assert [f for f in sorted(_files().values()) if not any(
        f.startswith(row) if row.endswith("/") else f == row for row in table)] == []


def test_the_runner_is_imported_from_beside_it_only_to_load_or_probe_a_model():
    graph = import_arrows()
    found = {(m, t) for m, targets in graph.items() if m.startswith(BESIDE_THE_RUNNER)
             for t in targets if t.startswith("device.runner")}
    assert found == INTO_THE_RUNNER and len(INTO_THE_RUNNER) <= 7
    assert {(m, t) for m, targets in graph.items() if m.startswith("app")
            for t in targets if t.startswith("device.runner")} == set()
    top = [p.name for p in (ROOT / "device" / "runner").iterdir() if p.is_file() and not p.name.startswith(".")]
    assert len(top) <= 8, sorted(top)


def test_every_import_inside_a_function_of_the_product_says_why_it_stays_there():
    # A comment on the import, or on the line above its run of imports: what it keeps out of a start (onnx,
    # LiteRT, sounddevice, Qt ...), or the cycle it avoids.
    paths = sorted(path for package in PRODUCT for path in (ROOT / package).rglob("*.py"))
    silent = [f"{path.relative_to(ROOT)}:{line}" for path in paths for line, said in local_imports(path) if not said]
    assert silent == []
