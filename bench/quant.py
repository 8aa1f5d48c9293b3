"""Quantised bundles vs fp32: MDLA check, WER/CER, token agreement and speed on the bundled clips.

    python bench/quant.py [--dtypes fp32,fp16,int8] [--clips ...] [--out DIR]

Exports the fp32 bundle, derives the fp16 and int8 bundles from it (device/graphs/quantize.py), runs
check-dla on each, then transcribes every clip with each bundle under ONNX Runtime (2 threads).
Speed is encoder ms and per-token ms median, one run per clip, systems alternating per clip.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.speed import AUDIO, CLIPS  # noqa: E402
from core.decode.decoding import decode_windows  # noqa: E402
from core.decode.options import DecodeOptions  # noqa: E402
from core.decode.transcript import Transcript  # noqa: E402
from core.model.audio import load_audio  # noqa: E402
from core.model.mel import mel_windows  # noqa: E402
from core.model.weights import load_model  # noqa: E402
from core.qa.scoring import error_rate  # noqa: E402
from device.runner.load import load_model_source  # noqa: E402
from device.toolchain.check_dla import check  # noqa: E402
from device.toolchain.export import (
    export_bundle,  # noqa: E402
    quantize_bundle,  # noqa: E402
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtypes", default="fp32,fp16,int8")
    ap.add_argument("--clips", default=",".join(CLIPS))
    ap.add_argument("--out", default=None, help="where the bundles go (default: a temporary directory)")
    args = ap.parse_args(argv)

    out = Path(args.out or tempfile.mkdtemp(prefix="whisperkv-quant-"))
    export_bundle(load_model(), out / "fp32")
    dtypes = args.dtypes.split(",")
    models, sizes, dla = {}, {}, {}
    for dt in dtypes:
        if dt != "fp32":
            quantize_bundle(out / "fp32", out / dt, dt)
        sizes[dt] = sum(f.stat().st_size for f in (out / dt).glob("*.onnx")) / 1e6
        reports = check(out / dt)
        dla[dt] = (all(r.ok for r in reports),
                   sorted({v.detail for r in reports for v in r.violations if v.kind == "unsupported_op"}))
        models[dt] = load_model_source(out / dt, "onnx")     # a quantised bundle runs as it is

    refs = json.loads((AUDIO / "transcripts.json").read_text())
    rows = {}
    for clip in args.clips.split(","):
        mels = mel_windows(load_audio(AUDIO / clip))
        for dt, model in models.items():
            t = Transcript()
            for ev in decode_windows(model.backend, model.tokenizer, mels, DecodeOptions()):
                t.add(ev)
            s = t.summary()
            ref = refs[clip]
            rows[(dt, clip)] = {"err": error_rate(ref["reference"], s["text"], ref["language"]),
                                "metric": "CER" if ref["language"] == "zh" else "WER", "tokens": s["tokens"],
                                "enc": s["encoder_ms"], "tok": s["per_token_ms_median"] or 0.0, "text": s["text"]}
        print(f"{clip} done", file=sys.stderr, flush=True)

    print("## bundles")
    print(f"{'dtype':<6} {'graphs MB':>9}  check-dla")
    for dt in dtypes:
        ok, ops = dla[dt]
        print(f"{dt:<6} {sizes[dt]:9.0f}  {'PASS' if ok else 'FAIL: ' + ', '.join(ops)}")
    print("\n## per clip (error vs reference; 'same' = tokens identical to fp32)")
    print(f"{'clip':<40} {'dtype':<5} {'err':>9} {'same':>5} {'enc ms':>7} {'ms/tok':>7}  text")
    for clip in args.clips.split(","):
        base = rows[("fp32", clip)]["tokens"] if "fp32" in dtypes else None
        for dt in dtypes:
            r = rows[(dt, clip)]
            same = "-" if base is None else ("yes" if r["tokens"] == base else "no")
            print(f"{clip:<40} {dt:<5} {r['metric']} {r['err']:5.3f} {same:>5} {r['enc']:7.0f} {r['tok']:7.1f}  "
                  f"{r['text'][:48]!r}")
    print("\n## mean over clips")
    for dt in dtypes:
        rs = [rows[(dt, c)] for c in args.clips.split(",")]
        n = len(rs)
        print(f"{dt:<5} mean error {sum(r['err'] for r in rs) / n:.3f}  encoder {sum(r['enc'] for r in rs) / n:7.0f} ms  "
              f"per token {sum(r['tok'] for r in rs) / n:6.1f} ms")
    print(f"\nbundles in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
