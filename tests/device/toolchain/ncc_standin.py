"""A STAND-IN for MediaTek's `ncc-tflite` (test only; the real compiler ships in the NeuroPilot SDK).

It is not a compiler: it checks that it was called with the MT8371 flags, an existing .tflite and an output path,
then writes b"STAND-IN DLA of " + the TFLite graph there. The stand-in Neuron runtime
(tests/device/runner/standin/) runs that graph, so a compiled bundle still decodes real tokens.
"""
from __future__ import annotations

import sys
from pathlib import Path

STAND_IN_NCC = """#!{python}
# STAND-IN for MediaTek's ncc-tflite (test only): checks its arguments, writes the .tflite into the .dla.
import json, os, sys
args = sys.argv[1:]
with open(os.environ["NCC_STANDIN_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if args == ["--version"]:
    if os.environ.get("NCC_STANDIN_NO_VERSION"):
        sys.exit(1)
    print("ncc-tflite stand-in, version 0.0-test")
    sys.exit(0)
if os.environ.get("NCC_STANDIN_FAIL"):
    print("ERROR: op GATHER is not supported on mdla5.3", file=sys.stderr)
    print("ERROR: compilation failed", file=sys.stderr)
    sys.exit(3)
need = ["--arch=mdla5.3,edma3.6", "--l1-size-kb=256", "--num-mdla=1", "--opt-footprint", "--suppress-input",
        "--suppress-output"]
missing = [f for f in need if f not in args]
if ("--relax-fp32" in args) != ("--opt-accuracy" in args):
    missing.append("--relax-fp32 with --opt-accuracy")
if missing or "-o" not in args:
    print(f"stand-in ncc-tflite: missing {{missing or ['-o FILE']}}", file=sys.stderr)
    sys.exit(2)
out = args[args.index("-o") + 1]
inputs = [a for a in args if a.endswith(".tflite")]
if len(inputs) != 1 or not os.path.isfile(inputs[0]) or not out.endswith(".dla"):
    print(f"stand-in ncc-tflite: bad input {{inputs}} or output {{out}}", file=sys.stderr)
    sys.exit(2)
with open(inputs[0], "rb") as f, open(out, "wb") as g:
    g.write(b"STAND-IN DLA of " + f.read())
"""


def write_ncc(folder: Path, log: Path) -> Path:
    """The stand-in as an executable in `folder`, logging its argv to `log` (set NCC_STANDIN_LOG to it)."""
    exe = Path(folder) / "ncc-tflite"
    exe.write_text(STAND_IN_NCC.format(python=sys.executable).replace(
        'os.environ["NCC_STANDIN_LOG"]', f'os.environ.get("NCC_STANDIN_LOG", {str(log)!r})'))
    exe.chmod(0o755)
    return exe
