"""Which SoC a board has, and what its NPU is: one table for the runner (hello, device-info, run records)
and the toolchain (`whisperkv compile` flags).

Stdlib only, and self-contained: device-info runs this file's text with the board's Python before any
runner is deployed. The SoC is read on the board, never guessed: an SoC the table lacks is reported by
its name with the NPU unknown, and a board that names none reports unknown.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

from device.spec.board_files import read_text

PORT_SOURCE = ("superLin006/MTK_model_zoo whisper/mtk/python/step3_tflite_to_dla.py (commit 24b523af): "
               "platform_configs['MT8371'] = arch mdla5.3,edma3.6, l1 256, mdla 1, passed as "
               "--arch= --l1-size-kb= --num-mdla= (its keys are named l1/mdla; the flags are not)")
GENIO_SOURCE = ("R300-AI/MTK-NeuronPilot-API-docker README (Genio 510 and 700: MDLA 3.0; Genio 1200: MDLA 2.0); "
                "R300-AI/ITRI-AI-Hub YOLOv8 README spells the flag `ncc-tflite --arch=mdla3.0`")
# name -> NPU generation, ncc-tflite target flags, what the SoC is, and where the row comes from.
# Flags beyond --arch (L1 size, MDLA count) only where a source gives them for that SoC.
SOCS = {
    "MT8371": {"npu": "MDLA 5.3", "flags": ["--arch=mdla5.3,edma3.6", "--l1-size-kb=256", "--num-mdla=1"],
               "about": "MT8189 family, 8 Arm cores", "source": PORT_SOURCE},
    "MT8391": {"npu": "MDLA 5.3", "flags": ["--arch=mdla5.3,edma3.6"],
               "about": "MT8189 family, Genio 720 EVK",
               "source": "Linux MMC patch series naming the MT8189 variants MT8371 and MT8391; a public Genio 720 "
                         "guide compiles with --arch=mdla5.3,edma3.6"},
    # A family row answers only where no member is named: an Android image of an MT8371 names its platform mt8189
    # (ro.board.platform; its libraries sit in /vendor/lib64/mt8189, superLin006/MTK_model_zoo), and both members
    # above have the same NPU and --arch.
    "MT8189": {"npu": "MDLA 5.3", "flags": ["--arch=mdla5.3,edma3.6"], "family": True,
               "about": "the MT8189 family (MT8371, MT8391), as an Android image names its platform",
               "source": "the MT8371 and MT8391 rows; superLin006/MTK_model_zoo's /vendor/lib64/mt8189 paths"},
    "MT8390": {"npu": "MDLA 3.0", "flags": ["--arch=mdla3.0"], "about": "Genio 700", "source": GENIO_SOURCE},
    "MT8370": {"npu": "MDLA 3.0", "flags": ["--arch=mdla3.0"], "about": "Genio 510", "source": GENIO_SOURCE},
    "MT8395": {"npu": "MDLA 2.0", "flags": ["--arch=mdla2.0"], "about": "Genio 1200 (no transformer support)",
               "source": "Radxa NIO 12L documentation; " + GENIO_SOURCE},
}
UNKNOWN = "unknown"
# Where a board names its SoC, in the order asked. /proc/device-tree is a link to the second on Linux.
COMPATIBLE = ("/proc/device-tree/compatible", "/sys/firmware/devicetree/base/compatible")
SOC0 = ("/sys/devices/soc0/soc_id", "/sys/devices/soc0/machine", "/sys/devices/soc0/family")
GETPROP = ("ro.soc.model", "ro.board.platform", "ro.hardware")
# where a replica board or a test keeps the files that name the SoC it poses as (board_soc's `root`)
ROOT_VARIABLE = "WHISPERKV_SOC_ROOT"


def _read(path: str) -> str:
    return read_text(path, 4096).replace("\0", " ").strip()


def _getprop(name: str) -> str:
    exe = shutil.which("getprop")
    if not exe:
        return ""
    try:
        return subprocess.run([exe, name], capture_output=True, timeout=5, stdin=subprocess.DEVNULL,
                              text=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def soc_names(text: str) -> list[str]:
    """MTxxxx names in a compatible string or property, in order: 'mediatek,mt8371-evk' -> ['MT8371']."""
    return [m.upper() for m in re.findall(r"(?<![0-9a-z])(mt\d{4})", text.lower())]


def describe(name: str | None, read_from: str | None = None, raw: str = "") -> dict:
    """The SoC record that hello, device-info, run records and reports carry."""
    row = SOCS.get(name or "")
    return {"name": name or UNKNOWN, "npu": row["npu"] if row else UNKNOWN, "flags": row["flags"] if row else [],
            "read_from": read_from, "raw": raw[:200]}


def board_soc(root: str | None = None) -> dict:
    """The SoC this board names: the first source that names one the table knows, else the first MTxxxx seen
    (NPU unknown), else unknown. A family's row (MT8189) answers only when no member is named. getprop (Android)
    is asked only when no file names anything. `root`: where the board's / is; by default WHISPERKV_SOC_ROOT, where
    a replica board or a test keeps the files that name the SoC it poses as, else /."""
    root = root or os.environ.get(ROOT_VARIABLE) or "/"
    sources = [(p, _read(root.rstrip("/") + p)) for p in COMPATIBLE + SOC0]
    sources += [(f"getprop {p}", _getprop(p)) for p in GETPROP if not any(t for _, t in sources)]
    found = [(name, where, text) for where, text in sources for name in soc_names(text)]
    for family in (False, True):
        for name, where, text in found:
            if name in SOCS and SOCS[name].get("family", False) == family:
                return describe(name, where, text)
    return describe(*found[0]) if found else describe(None)


def flags_for(name: str) -> list[str]:
    """ncc-tflite target flags of a known SoC; KeyError for one the table lacks."""
    return list(SOCS[name.upper()]["flags"])
