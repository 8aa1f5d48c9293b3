"""`whisperkv compile DIR`: the bundle's TFLite graphs to MDLA .dla files with ncc-tflite."""
from __future__ import annotations

import json
import sys


def register(subs) -> None:
    from device.toolchain.compile import SOC_FLAGS

    p = subs.add_parser("compile", help="compile a bundle's .tflite graphs to .dla for the NPU "
                        "(needs MediaTek's NeuroPilot SDK: ncc-tflite)")
    p.add_argument("dir", help="a bundle written by `whisperkv export --format tflite --out DIR`")
    p.add_argument("--soc", default="mt8371", choices=sorted(SOC_FLAGS), help="target SoC (default mt8371)")
    p.add_argument("--ncc", default=None, metavar="PATH",
                   help="the ncc-tflite to run (default: the one on PATH)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run_compile)


def run_compile(args) -> int:
    from device.toolchain.compile import CompileFailed, compile_bundle

    try:
        result = compile_bundle(args.dir, args.soc, args.ncc, log=lambda line: print(line, file=sys.stderr))
    except CompileFailed as exc:
        if exc.tail:
            print(exc.tail, file=sys.stderr)
        print(f"whisperkv: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"dir": str(result.dir), "compiler": result.compiler, "version": result.version,
                          "soc": result.soc, "flags": result.flags,
                          "graphs": [vars(g) for g in result.graphs]}, indent=1))
        return 0
    for g in result.graphs:
        print(f"{g.sha256[:16]}  {g.file}  ({g.size / 1e6:.1f} MB, {g.seconds:.1f} s, from {g.source})")
    print(f"compiled {len(result.graphs)} graphs for {result.soc} with {result.compiler} ({result.version}); "
          f"recorded in {result.dir}/model.json; check on the board: neuronrt -a FILE.dla -d")
    return 0
