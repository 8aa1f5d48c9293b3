"""Deploy the runner and the model bundle to a device directory (default ~/whisperkv; on Android, see below).

Layout on the device:  DIR/device/{runner,graphs}/  DIR/core/{model,decode}/  (RUNNER_FOLDERS)
                       DIR/model/model.bin + tokenizer.json  (the installed wheels' split parts, joined)
                       DIR/manifest.json  (device/deploy/deploy_record.py: sha256 of every file shipped, the
                                           model's sha256 and source, the bundle's model.json, the runner version,
                                           the deploy mode)
Files whose sha256 already matches are skipped; every uploaded file is hashed again on the device. The transport says
how it copied (`upload` in the result): over SSH sftp, or an exec channel into `cat` where sshd has no sftp.

`backend="tflite"` ships an exported bundle's TFLite graphs (.tflite, and .dla if compiled), its
embedding tables (.npy), tokenizer.json and model.json (listing only those files): no ONNX, no weights.
Without a model directory it exports one from the installed wheels into BUNDLE_CACHE first.
`backend="dla"` ships a compiled bundle's .dla graphs, its tables, tokenizer.json and model.json: no .tflite.
Before uploading, it asks the board's Python what it lacks of what that backend needs, fetches it on the PC as
wheels for the board (or takes them from `wheels`, a folder) and installs them there with no index
(device/deploy/board_install.py); the manifest's `packages` says where.
Where the board has no Python the runner can use (Android: none), or `runner="native"` asks, the native runner ships
instead, with the compiled bundle's .dla graphs and native tables (device/deploy/native_deploy.py); the record names
the runner and Android's release (DIR there: /data/local/tmp/whisperkv, device/link/android.py)."""
from __future__ import annotations

import inspect
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from core.errors import WhisperKVError
from core.model.file_hash import sha256_files
from core.model.weights import INSTALL_FIX, find_installed_model, load_model
from device import ROOT, protocol
from device.deploy import board_install, native_deploy
from device.deploy.deploy_record import DeployRecord, remote_hashes, write_record
from device.link.android import LINUX_DIR
from device.link.runner_choice import NATIVE
from device.link.transport import Transport
from device.runner.cache_paths import cache_home
from device.spec import native_tables
from device.spec.backend_rows import ROWS, deploy_modes
from device.toolchain.export import export_bundle

DEFAULT_DIR = LINUX_DIR            # off Android, where the transport names none
TFLITE_EXPORT_FIX = ("export one with `whisperkv export --format tflite --out DIR`, then deploy it with "
                     "--model DIR --backend tflite")
DLA_COMPILE_FIX = ("run `whisperkv compile DIR` first (DIR: a bundle from `whisperkv export --format tflite "
                   "--out DIR`), then deploy it with --model DIR --backend dla")
# What each bundle mode ships besides tokenizer.json and model.json (rewritten to list only what ships).
BUNDLE_SUFFIXES = {"tflite": (".tflite", ".dla", ".npy"), "dla": (".dla", ".npy")}
# What ships to the board: the runner, the graphs it builds from weights, and the Qt-free model
# and decoding core. docs/architecture.md draws the same line.
RUNNER_FOLDERS = ("device/runner", "device/spec", "device/graphs", "core/model", "core/decode")
RUNNER_FILES = ("device/protocol.py", "core/errors.py")
# Besides .py files, the ones a backend reads (the C step's source and header, built on the board); a backend's folder
# ships only to a board whose CPU architecture it runs on (the registry's `arches`).
RUNNER_SUFFIXES = (".py", ".c", ".h")


class DeployError(WhisperKVError):
    code = "deploy"


@dataclass
class BundleFile:
    rel: str                 # path under the deploy directory, with / separators
    sources: list[Path]      # concatenated in order (the wheels split model.bin in two)
    sha256: str
    size: int


def _bundle_file(rel: str, sources: list[Path]) -> BundleFile:
    return BundleFile(rel, sources, sha256_files(sources), sum(p.stat().st_size for p in sources))


def runner_modules(arch: str | None = None) -> list[str]:
    """The files (relative to ROOT) that run on a board of CPU architecture `arch` (uname -m; None: any): the
    sources of whole folders and RUNNER_FILES, listed, never guessed, less the folders of backends that cannot run
    there."""
    files = {f"{pkg}/__init__.py" for pkg in ("core", "device")} | set(RUNNER_FILES)
    for folder in RUNNER_FOLDERS:
        files |= {p.relative_to(ROOT).as_posix() for p in (ROOT / folder).rglob("*")
                  if p.suffix in RUNNER_SUFFIXES and "__pycache__" not in p.parts}
    left_out = [spec.folder for spec in ROWS.values() if spec.folder and arch and not spec.runs_on(arch)]
    return sorted(f for f in files if not any(f.startswith(folder + "/") for folder in left_out))


def runner_files(arch: str | None = None) -> list[BundleFile]:
    """This PC's runner, as it ships to a board of `arch`."""
    return [_bundle_file(rel, [ROOT / rel]) for rel in runner_modules(arch)]


def board_arch(transport: Transport) -> str | None:
    """The board's CPU architecture (uname -m), or None when it does not say."""
    res = transport.run(["uname", "-m"])
    return (res.text.strip() or None) if res.rc == 0 else None


def model_bundle(model: str | Path | None = None) -> list[BundleFile]:
    """The model files to deploy: the installed wheels (joined into one model.bin) or a model directory."""
    if model is None:
        parts = find_installed_model()
        if parts is None:
            raise DeployError("the Whisper base weights are not installed on this PC", INSTALL_FIX)
        files = [("model/model.bin", parts), ("model/tokenizer.json", [parts[0].parent / "tokenizer.json"])]
    elif (Path(model).expanduser() / "model.json").is_file():     # an exported ONNX bundle (device/toolchain/export.py)
        d = Path(model).expanduser()
        files = [(f"model/{p.name}", [p]) for p in sorted(d.iterdir()) if p.is_file()]
    else:
        d = Path(model).expanduser()
        names = [n for n in ("model.bin", "model.safetensors", "config.json", "tokenizer.json",
                             "vocabulary.json", "preprocessor_config.json") if (d / n).is_file()]
        if not {"model.bin", "model.safetensors"} & set(names) or "tokenizer.json" not in names:
            raise DeployError(f"{d} is not a model directory (needs model.bin or model.safetensors, and "
                              "tokenizer.json)", INSTALL_FIX)
        files = [(f"model/{n}", [d / n]) for n in names]
    missing = [str(s) for _, srcs in files for s in srcs if not s.is_file()]
    if missing:
        raise DeployError(f"model files missing: {', '.join(missing)}", INSTALL_FIX)
    return [_bundle_file(rel, srcs) for rel, srcs in files]


def bundle_cache() -> Path:
    return cache_home() / "bundles"


def whole_export(out: Path) -> bool:
    """An export of this version there: a bundle made before the native tables existed is made again (the native
    runner reads them)."""
    return (out / "model.json").is_file() and any(out.glob("*.tflite")) and (out / native_tables.JSON_FILE).is_file()


def cached_tflite_bundle() -> Path:
    """An exported TFLite bundle of the installed weights, made once per model in bundle_cache()."""
    parts = find_installed_model()
    if parts is None:
        raise DeployError("the Whisper base weights are not installed on this PC", INSTALL_FIX)
    out = bundle_cache() / f"{sha256_files(parts)}-tflite"
    if whole_export(out):
        return out
    if "formats" not in inspect.signature(export_bundle).parameters:
        raise DeployError("this version of `whisperkv export` writes no TFLite graphs yet", TFLITE_EXPORT_FIX)
    # Each process exports into a folder of its own and renames it into place: only a whole export is ever
    # reused, and of two processes exporting at once (CI runs the board tests beside the rest) the first wins.
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=out.parent, prefix=out.name + ".partial-"))
    try:
        export_bundle(load_model(), partial, formats=("tflite",))
        if out.exists() and not whole_export(out):
            shutil.rmtree(out, ignore_errors=True)       # an interrupted export, or one of an older version
        try:
            partial.rename(out)
        except OSError:
            if not whole_export(out):
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return out


def _shipped_by(mode: str, name: str) -> bool:
    if mode == NATIVE:
        return native_deploy.ships(name)
    return Path(name).suffix in BUNDLE_SUFFIXES[mode] or name == "tokenizer.json"


def graph_bundle(model: str | Path | None, tmp: Path, mode: str = "tflite") -> list[BundleFile]:
    """What the tflite or dla backend (or the native runner, `mode` native) reads from a bundle; its model.json is
    rewritten (into tmp) to list only that, and only the graphs that ship."""
    if mode in ("dla", NATIVE) and model is None:
        who = "the native runner" if mode == NATIVE else "deploy --backend dla"
        raise DeployError(f"{who} ships a compiled bundle, and --model names none", DLA_COMPILE_FIX)
    d = Path(model).expanduser() if model is not None else cached_tflite_bundle()
    if not (d / "model.json").is_file():
        raise DeployError(f"{d} is not an exported bundle (no model.json)",
                          DLA_COMPILE_FIX if mode == "dla" else TFLITE_EXPORT_FIX)
    shipped = sorted(p for p in d.iterdir() if p.is_file() and _shipped_by(mode, p.name))
    graph = ".tflite" if mode == "tflite" else ".dla"
    if not any(p.suffix == graph for p in shipped):
        if graph == ".dla":
            raise DeployError(f"the bundle at {d} has no compiled .dla graphs", DLA_COMPILE_FIX)
        raise DeployError(f"the bundle at {d} has no .tflite graphs", TFLITE_EXPORT_FIX)
    doc = json.loads((d / "model.json").read_text())
    if mode == NATIVE:
        native_deploy.check_tables(doc, d)
    names = {p.name for p in shipped}
    lost = sorted(n for n in doc.get("files", {}) if n not in names and _shipped_by(mode, n))
    if lost:
        raise DeployError(f"the bundle at {d} is missing {', '.join(lost)}, which its model.json lists",
                          "export it again (and compile it again if it had .dla files)")
    # The runner checks that every file model.json lists is there: list only what ships.
    doc["files"] = {name: digest for name, digest in doc.get("files", {}).items() if name in names}
    doc["graphs"] = {role: g for role, g in doc.get("graphs", {}).items() if g.get("file") in names}
    manifest = tmp / "model.json"
    manifest.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return [_bundle_file(f"model/{p.name}", [p]) for p in shipped] + [_bundle_file("model/model.json", [manifest])]


def bundle(model: str | Path | None = None, backend: str = "auto", tmp: Path | None = None,
           arch: str | None = None, runner: str = "python", android: bool = False) -> list[BundleFile]:
    """The runner's files for a board of `arch` (runner_modules, or the native runner, for Android if `android`) and
    the model's; `tmp` (needed for tflite, dla and the native runner) holds files written for this deploy."""
    if backend not in deploy_modes():
        raise DeployError(f"deploy has no backend {backend!r}", f"use one of: {', '.join(deploy_modes())}")
    if runner == NATIVE:
        native_deploy.check_backend(backend)
        assert tmp is not None, "a bundle deploy writes its model.json into tmp"
        return ([_bundle_file(rel, srcs) for rel, srcs in native_deploy.runner_parts(arch, android)]
                + graph_bundle(model, tmp, NATIVE))
    runner = runner_files(arch)
    if backend in BUNDLE_SUFFIXES:
        assert tmp is not None, "a bundle deploy writes its model.json into tmp"
        return runner + graph_bundle(model, tmp, backend)
    return runner + model_bundle(model)


def model_source(model: str | Path | None, backend: str) -> str | None:
    """The folder on this PC the model shipped from, for the fix a later check names (None: the installed wheels)."""
    if model is not None:
        return str(Path(model).expanduser().resolve())
    return str(cached_tflite_bundle()) if backend == "tflite" else None


def source_weights_sha256(files: list[BundleFile]) -> str:
    """The identity hello reports, the sha256 of the weights the shipped model came from: an exported bundle's
    recorded one (not a hash of its own files), else the shipped weights' hash."""
    by_rel = {f.rel: f for f in files}
    if "model/model.json" in by_rel:
        return json.loads(by_rel["model/model.json"].sources[0].read_text()).get("model_sha256", "")
    return next(by_rel[r].sha256 for r in ("model/model.bin", "model/model.safetensors") if r in by_rel)


def deploy(transport: Transport, dir: str | None = None, model: str | Path | None = None,
           progress: Callable[[int, int], None] | None = None, log: Callable[[str], None] | None = None,
           backend: str = "auto", wheels: str | Path | None = None, runner: str | None = None) -> dict:
    """Push what is missing or changed, verify it by sha256 on the device, write deploy's record (manifest.json).

    progress(done_bytes, total_bytes) covers the whole upload; log(line) narrates each file.
    backend: "auto" ships the whole model, "tflite" and "dla" only what that backend reads (module docstring).
    wheels: a folder of wheels to install what the board lacks from, instead of fetching them (no internet).
    runner: python or native (None: python where the board has a Python the runner can use, else native).
    """
    with tempfile.TemporaryDirectory(prefix="whisperkv-deploy-") as tmp:
        return _deploy(transport, dir, model, progress, log or (lambda line: None), backend, Path(tmp),
                       Path(wheels).expanduser() if wheels else None, runner)


def _deploy(transport, dir, model, progress, say, backend: str, tmp: Path, wheels: Path | None,
            runner: str | None) -> dict:
    target = dir or (transport.runner_dir if transport.runner_dir and
                     Path(transport.runner_dir).resolve() != ROOT else DEFAULT_DIR)
    root = transport.resolve(target).rstrip("/")
    if transport.label == "local" and Path(root).resolve() == ROOT:
        raise DeployError(f"{root} is this source tree", "deploy to another directory, e.g. --dir ~/whisperkv")
    runner = native_deploy.deployed_runner(transport, runner, say)
    native = runner == NATIVE
    backend = "dla" if native and backend == "auto" else backend
    files = bundle(model, backend, tmp, board_arch(transport), runner, bool(transport.android()))
    have = remote_hashes(transport, root, [f.rel for f in files], python=not native)
    packages = None if native else board_install.plan(transport, root, backend, wheels, tmp, say)
    todo = [f for f in files if have.get(f.rel) != f.sha256]
    skipped = [f.rel for f in files if have.get(f.rel) == f.sha256]
    total = sum(f.size for f in todo)
    say(f"{transport.label}:{root}: {len(todo)} to upload ({total / 1e6:.1f} MB), {len(skipped)} unchanged")
    dirs = sorted({f"{root}/{f.rel.rsplit('/', 1)[0]}" for f in files})
    res = transport.run(["mkdir", "-p", *dirs])
    if res.rc != 0:
        raise DeployError(f"cannot create {root} on {transport.label}: {res.stderr.decode(errors='replace').strip()}",
                          "pick a writable directory with --dir")
    done = 0
    if progress:
        progress(0, total)
    for f in todo:
        say(f"  {f.rel} ({f.size / 1e6:.1f} MB)")
        base = done
        transport.put(f.sources, f"{root}/{f.rel}", (lambda d, _t, base=base: progress(base + d, total))
                      if progress else None)
        done += f.size
    after = remote_hashes(transport, root, [f.rel for f in todo], python=not native)
    bad = [f.rel for f in todo if after.get(f.rel) != f.sha256]
    if bad:
        raise DeployError(f"sha256 mismatch after copying {', '.join(bad)} to {transport.label}",
                          "check free space on the board and deploy again")
    if native:
        native_deploy.make_executable(transport, root)
    installed = {"installed": [], "into": None} if native else board_install.install(transport, root, packages, say)
    model_hash = source_weights_sha256(files)
    shipped_json = next((f.sources[0] for f in files if f.rel == "model/model.json"), None)
    write_record(transport, root, DeployRecord(
        runner_version=protocol.RUNNER_VERSION, protocol=protocol.PROTOCOL, model_sha256=model_hash, backend=backend,
        runner=runner, android=transport.android(), packages=installed, files={f.rel: f.sha256 for f in files},
        model_source=model_source(model, backend),
        model_json=json.loads(shipped_json.read_text()) if shipped_json else None), tmp)
    if progress:
        progress(total, total)
    say(f"uploaded {len(todo)} files {transport.upload_method}, verified by sha256; model {model_hash[:16]}…")
    return {"device": transport.label, "dir": root, "uploaded": [f.rel for f in todo], "skipped": skipped,
            "bytes": total, "model_sha256": model_hash, "runner_version": protocol.RUNNER_VERSION, "backend": backend,
            "runner": runner, "android": transport.android(), "upload": transport.upload_method, "packages": installed}
