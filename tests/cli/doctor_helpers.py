"""What the doctor's tests share: one compiled bundle (the installed weights' TFLite graphs put through the
STAND-IN ncc-tflite) and the STAND-IN Neuron runtime libraries, built once per test process."""
from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def workdir() -> Path:
    out = Path(tempfile.mkdtemp(prefix="whisperkv-doctor-"))
    atexit.register(shutil.rmtree, out, True)
    return out


@lru_cache(maxsize=1)
def compiled_bundle() -> Path:
    from device.deploy.deploy import cached_tflite_bundle
    from device.toolchain.compile import compile_bundle
    from tests.device.toolchain.ncc_standin import write_ncc

    bundle = workdir() / "bundle"
    shutil.copytree(cached_tflite_bundle(), bundle)
    compile_bundle(bundle, ncc=write_ncc(workdir(), workdir() / "ncc.log"))
    return bundle


@lru_cache(maxsize=4)
def standin_library(*defines: str) -> Path:
    """The STAND-IN Neuron runtime (tests/device/runner/standin/), or with no runtime symbols at all ("EMPTY")."""
    from tests.device.runner.standin.build import build_empty, build_standin

    return build_empty(workdir()) if defines == ("EMPTY",) else build_standin(workdir(), *defines)


def bundle_for(soc: str, folder: Path) -> Path:
    """The compiled bundle as one built for another SoC: its files linked, its model.json naming `soc` (the STAND-IN
    ncc-tflite compiles for the MT8371 only, and the identity rung reads only what model.json records)."""
    src = compiled_bundle()
    folder.mkdir(parents=True)
    for f in src.iterdir():
        if f.name != "model.json":
            (folder / f.name).symlink_to(f)
    doc = json.loads((src / "model.json").read_text())
    doc["dla"]["soc"] = soc
    (folder / "model.json").write_text(json.dumps(doc))
    return folder


def claim_soc(root: Path, soc: str) -> Path:
    """A folder whose /proc/device-tree/compatible names `soc`, for WHISPERKV_SOC_ROOT (device/spec/soc.py)."""
    f = root / "proc" / "device-tree" / "compatible"
    f.parent.mkdir(parents=True)
    f.write_bytes(f"mediatek,{soc.lower()}-evk\0mediatek,{soc.lower()}\0".encode())
    return root
