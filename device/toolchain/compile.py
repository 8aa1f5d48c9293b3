"""Compile a bundle's TFLite graphs to MDLA `.dla` files with MediaTek's `ncc-tflite` (NeuroPilot SDK).

    DIR/encoder.tflite      -> DIR/encoder.dla, and each shorter window's: encoder_10s.tflite -> encoder_10s.dla
    DIR/decoder_step.tflite -> DIR/decoder_step.dla, and for a float bundle its attention variant (the
                               alignment heads' cross-attention as one more output, for word timings and a live
                               stream), built from the step's own weights -> DIR/decoder_step_attention.dla
    DIR/model.json          gains "dla": the slot contract (device/runner/neuron/neuron_slots.py: its version, and per
                            graph the flags and each slot's name, shape, .tflite dtype and an integer slot's
                            scale and zero point), the compiler, its version, the SoC and the sha256 of each .dla;
                            and the .dla files in "files"

The `.tflite` graphs keep their own I/O types, so one bundle serves the tflite and the dla backends, and a dla
runtime with the conversion on or suppressed.

The compiler needs MediaTek's SDK download, so nothing here runs it unless it is installed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import WhisperKVError
from core.model.alignment import alignment_heads
from core.model.dims import ModelDims
from core.model.file_hash import sha256_files
from device.graphs import tflite_read
from device.graphs.tflite_graphs import build_decoder_step_tflite
from device.spec.slot_contract import CONTRACT
from device.spec.soc import SOCS
from device.toolchain import int_quantize

COMPILER = "ncc-tflite"
# The SoC's target flags (--arch, --l1-size-kb, --num-mdla) come from device/spec/soc.py's table, which the
# runner also reads the board's SoC with. The rest: the public MT8371 port (soc.PORT_SOURCE).
# --relax-fp32 computes fp32 graphs in fp16; MediaTek advises pairing it with --opt-accuracy.
RELAX_FLAGS = ["--relax-fp32", "--opt-accuracy"]
# The slots in the NPU's native form, as the one public Whisper runner on this family compiles its graphs
# (hhlqwq/mtk_models whisper_tiny: ncc-tflite --suppress-input --suppress-output) and feeds them with the
# runtime's conversion suppressed (device/runner/neuron/neuron_slots.py).
COMMON_FLAGS = ["--opt-footprint", "--suppress-input", "--suppress-output"]
ATTENTION_GRAPH = "decoder_step_attention"
FLOAT_DTYPES = ("fp32", "fp16")
# The public MT8371 port (step3_tflite_to_dla.py above) names the output DLA with -o; this was
# not checked against a real compiler here (none is installed).
OUTPUT_FLAG = "-o"
SDK_FIX = ("install MediaTek's NeuroPilot SDK so `ncc-tflite` is on PATH, or name it with "
           "--ncc PATH (e.g. neuron_sdk/host/bin/ncc-tflite)")
EXPORT_FIX = "write the TFLite graphs first: `whisperkv export --format tflite --out DIR`"
STDERR_LINES = 20


class CompilerMissing(WhisperKVError):
    code = "sdk_missing"


class NoTFLite(WhisperKVError):
    code = "no_tflite"


class CompileFailed(WhisperKVError):
    """ncc-tflite ran and failed; `tail` holds the end of what it printed."""

    code = "compile_failed"

    def __init__(self, problem: str, fix: str = "", tail: str = ""):
        super().__init__(problem, fix)
        self.tail = tail


@dataclass
class CompiledGraph:
    source: str          # encoder.tflite
    file: str            # encoder.dla
    sha256: str
    size: int
    seconds: float


@dataclass
class CompileResult:
    dir: Path
    compiler: str
    version: str
    soc: str
    flags: list[str]
    graphs: list[CompiledGraph] = field(default_factory=list)


def precision_flags(dtype: str, float_ops: int = 0) -> list[str]:
    """A float bundle (fp32, or fp16 weights dequantized to fp32) is computed in fp16: --relax-fp32. An
    integer one (a16w8, a8w8, mixed) runs in int8/int16 as written and takes no --relax-fp32, unless its
    graphs still hold `float_ops` ops the quantizer left in float, which the MDLA takes only relaxed."""
    return RELAX_FLAGS if dtype in FLOAT_DTYPES or float_ops else []


def flags_for(soc: str, dtype: str = "fp32", float_ops: int = 0) -> list[str]:
    key = soc.upper()
    if key not in SOCS:
        raise WhisperKVError(f"no compile flags for SoC {soc!r}", f"use one of: {', '.join(s.lower() for s in SOCS)}")
    return SOCS[key]["flags"] + precision_flags(dtype, float_ops) + COMMON_FLAGS


def bundle_precision(bundle: Path, graphs: list[Path]) -> tuple[str, int]:
    """The bundle's dtype, and how many ops its graphs compute in float when it is an integer bundle."""
    dtype = json.loads((bundle / "model.json").read_text()).get("dtype", "fp32")
    if dtype in FLOAT_DTYPES:
        return dtype, 0
    return dtype, sum(sum(int_quantize.float_ops(g.read_bytes()).values()) for g in graphs)


def find_compiler(ncc: str | Path | None = None) -> Path:
    """--ncc PATH, else `ncc-tflite` on PATH; CompilerMissing names the SDK and --ncc."""
    if ncc is not None:
        path = Path(ncc).expanduser()
        if path.is_dir():
            path = path / COMPILER
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise CompilerMissing(f"--ncc {ncc} is not an executable {COMPILER}", SDK_FIX)
        return path
    found = shutil.which(COMPILER)
    if not found:
        raise CompilerMissing(f"{COMPILER} (MediaTek NeuroPilot SDK) is not installed: it is not on PATH", SDK_FIX)
    return Path(found)


def compiler_env(compiler: Path) -> dict:
    # The SDK's host/bin tools load their own libraries from host/lib, which is not on the loader path
    # unless the SDK's setup script ran; the public port sets LD_LIBRARY_PATH the same way.
    env = dict(os.environ)
    lib = compiler.resolve().parent.parent / "lib"
    if lib.is_dir():
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(lib), env.get("LD_LIBRARY_PATH")]))
    return env


def compiler_version(compiler: Path) -> str:
    """The first line of `ncc-tflite --version` naming a version, or "unknown"."""
    try:
        p = subprocess.run([str(compiler), "--version"], capture_output=True, text=True, timeout=60,
                           env=compiler_env(compiler), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = [ln.strip() for ln in (p.stdout + "\n" + p.stderr).splitlines() if ln.strip()]
    if p.returncode != 0 or not lines:
        return "unknown"
    return next((ln for ln in lines if "version" in ln.lower()), lines[0])


def tflite_graphs(bundle: Path) -> list[Path]:
    if not (bundle / "model.json").is_file():
        raise NoTFLite(f"{bundle} is not a model bundle (no model.json)", EXPORT_FIX)
    graphs = sorted(bundle.glob("*.tflite"))
    if not graphs:
        raise NoTFLite(f"{bundle} has no .tflite graphs to compile", EXPORT_FIX)
    return graphs


def _tail(text: str) -> str:
    return "\n".join([ln for ln in text.splitlines() if ln.strip()][-STDERR_LINES:])


def compile_graph(compiler: Path, tflite: Path, flags: list[str], dla: Path,
                  timeout: float = 3600) -> float:
    """Run the compiler on one graph, writing `dla`; returns the seconds it took."""
    argv = [str(compiler), str(tflite), *flags, OUTPUT_FLAG, str(dla)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=compiler_env(compiler),
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise CompileFailed(f"{COMPILER} took over {timeout:.0f} s on {tflite.name}", "check the machine's load",
                            _tail(err)) from exc
    except OSError as exc:
        raise CompilerMissing(f"cannot run {compiler}: {exc}", SDK_FIX) from exc
    if p.returncode != 0:
        raise CompileFailed(f"{COMPILER} failed on {tflite.name} (exit {p.returncode})",
                            "see the compiler's messages above; `whisperkv check-dla DIR` lists unsupported ops",
                            _tail(p.stderr or p.stdout))
    if not dla.is_file():
        raise CompileFailed(f"{COMPILER} exited 0 but wrote no {dla.name}", "run it by hand: " + " ".join(argv),
                            _tail(p.stderr or p.stdout))
    return time.perf_counter() - t0


def graph_slots(tflite: Path) -> dict:
    """The compiled graph's input and output slots with their byte sizes, from the TFLite graph it was compiled
    from (the compiler keeps their order): the dla backend checks the runtime's sizes against them at load."""
    try:
        return tflite_read.slots(tflite.read_bytes())
    except ValueError:        # not a TFLite flatbuffer: nothing to record, the backend then refuses to load it
        return {}


def contract_slots(tflite: Path) -> dict:
    """The slot contract of a graph: each slot's name, shape, .tflite dtype, and scale and zero point when it is
    an integer slot (its bytes follow from these; the runtime says the form it takes them in)."""
    return {kind: [{k: v for k, v in slot.items() if k != "bytes"} for slot in slots]
            for kind, slots in graph_slots(tflite).items()}


def attention_variant(bundle: Path, folder: Path) -> Path | None:
    """The step graph's attention variant for a float bundle, written into `folder`, else None (an integer
    bundle's step is quantized as it is; the variant is built from float weights)."""
    doc = json.loads((bundle / "model.json").read_text())
    step = bundle / "decoder_step.tflite"
    if doc.get("dtype", "fp32") not in FLOAT_DTYPES or not step.is_file():
        return None
    try:
        data = step.read_bytes()
        params, windowed = tflite_read.params_from_tflite(data), "cross_mask" in tflite_read.io(data)["inputs"]
    except ValueError:        # not a TFLite flatbuffer: the compiler says so for the step itself
        return None
    dims = ModelDims(**doc["dims"])
    out = folder / f"{ATTENTION_GRAPH}.tflite"
    out.write_bytes(build_decoder_step_tflite(params, dims, doc.get("dtype", "fp32"), alignment_heads(dims),
                                              doc.get("cross", "kv"), windowed))
    return out


def record(bundle: Path, result: CompileResult, sources: dict[str, Path] | None = None) -> dict:
    """Add the compiled graphs to model.json: the "dla" section (the slot contract) and their sha256 in
    "files". `sources`: where a graph's .tflite is when not in the bundle (the attention variant)."""
    path = bundle / "model.json"
    doc = json.loads(path.read_text())
    sources = sources or {}
    heads = [list(h) for h in alignment_heads(ModelDims(**doc["dims"]))] if "dims" in doc else []
    doc["dla"] = {"contract": CONTRACT, "compiler": COMPILER, "version": result.version, "soc": result.soc,
                  "flags": result.flags,
                  "graphs": {g.file.rsplit(".", 1)[0]: {
                      "file": g.file, "from": g.source, "sha256": g.sha256, "flags": result.flags,
                      **contract_slots(sources.get(g.source, bundle / g.source)),
                      **({"alignment_heads": heads} if g.file.startswith(ATTENTION_GRAPH) else {})}
                      for g in result.graphs}}
    doc["files"] = dict(sorted({**doc.get("files", {}), **{g.file: g.sha256 for g in result.graphs}}.items()))
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return doc


def compile_bundle(bundle: str | Path, soc: str = "mt8371", ncc: str | Path | None = None,
                   log=lambda line: None) -> CompileResult:
    """Compile every .tflite in the bundle to a .dla beside it and record them in model.json."""
    bundle = Path(bundle)
    flags_for(soc)
    graphs = tflite_graphs(bundle)
    flags = flags_for(soc, *bundle_precision(bundle, graphs))
    compiler = find_compiler(ncc)
    result = CompileResult(bundle, str(compiler), compiler_version(compiler), soc.lower(), flags)
    log(f"{compiler} ({result.version}), {result.soc}: {' '.join(flags)}")
    # All or nothing: the .dla files land in the bundle only once every graph compiled, so a failed
    # run leaves the bundle (and what model.json lists) as it was.
    with tempfile.TemporaryDirectory(prefix=".compile-", dir=bundle) as tmp:
        variant = attention_variant(bundle, Path(tmp))
        for tflite in graphs + ([variant] if variant else []):
            dla = Path(tmp) / tflite.with_suffix(".dla").name
            log(f"  {tflite.name} -> {dla.name}")
            seconds = compile_graph(compiler, tflite, flags, dla)
            result.graphs.append(CompiledGraph(tflite.name, dla.name, sha256_files([dla]), dla.stat().st_size,
                                               round(seconds, 2)))
        for g in result.graphs:
            os.replace(Path(tmp) / g.file, bundle / g.file)
        record(bundle, result, {variant.name: variant} if variant else None)
    if not variant:
        (bundle / f"{ATTENTION_GRAPH}.dla").unlink(missing_ok=True)
    return result
