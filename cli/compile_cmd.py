"""`whisperkv compile DIR`: the bundle's TFLite graphs to MDLA .dla files with ncc-tflite."""
from __future__ import annotations

import json
import sys

from cli.device_cmds import add_device_args, open_device, target_from_args
from core.errors import WhisperKVError
from device.spec.soc import SOCS
from device.toolchain.compile import CompileFailed, compile_bundle


def register(subs) -> None:
    p = subs.add_parser("compile", help="compile a bundle's .tflite graphs to .dla for the NPU "
                        "(needs MediaTek's NeuroPilot SDK: ncc-tflite)")
    p.add_argument("dir", help="a bundle written by `whisperkv export --format tflite --out DIR`")
    p.add_argument("--soc", default="mt8371", choices=["auto", *sorted(s.lower() for s in SOCS)],
                   help="target SoC (default mt8371); auto: the SoC the board of --device names")
    add_device_args(p, runner=False)
    p.add_argument("--ncc", default=None, metavar="PATH",
                   help="the ncc-tflite to run (default: the one on PATH)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run_compile)


def run_compile(args) -> int:
    soc = board_soc_name(args) if args.soc == "auto" else args.soc
    try:
        result = compile_bundle(args.dir, soc, args.ncc, log=lambda line: print(line, file=sys.stderr))
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
    if args.soc == "auto":
        print(f"SoC {soc} read from the board {args.device}", file=sys.stderr)
    for g in result.graphs:
        print(f"{g.sha256[:16]}  {g.file}  ({g.size / 1e6:.1f} MB, {g.seconds:.1f} s, from {g.source})")
    print(f"compiled {len(result.graphs)} graphs for {result.soc} with {result.compiler} ({result.version}); "
          f"recorded in {result.dir}/model.json; check on the board: neuronrt -a FILE.dla -d")
    return 0


def board_soc_name(args) -> str:
    """--soc auto: the SoC the board of --device names, which the table must know (never a guess)."""
    from device.info.info import device_info  # device-info's probes (~60 ms): only for --soc auto

    if args.device == "local":
        raise WhisperKVError("--soc auto reads the SoC from a board, and --device is local",
                             "name the board with --device ssh://root@BOARD, or the SoC with --soc mt8371")
    transport = open_device(target_from_args(args, runner=False))
    try:
        soc = device_info(transport).get("soc") or {}
    finally:
        transport.close()
    if soc.get("name") not in SOCS:
        raise WhisperKVError(f"the board {args.device} names SoC {soc.get('name', 'unknown')!r}"
                             f"{' (read from ' + soc['read_from'] + ')' if soc.get('read_from') else ''}, "
                             "which the SoC table (device/spec/soc.py) has no compile flags for",
                             f"pass --soc with one of: {', '.join(s.lower() for s in SOCS)}")
    return soc["name"].lower()
