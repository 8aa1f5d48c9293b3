"""`whisperkv transcribe AUDIO`: stream the transcript as tokens arrive."""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field, replace

from cli.device_cmds import add_device_args, in_background, loading_line, open_cli_decoder
from cli.transcript_printer import TranscriptPrinter
from cli.window_args import add_window_args, window_rule
from core.decode import subtitles
from core.decode.diagnostics import diagnose_transcript
from core.decode.options import (
    MAX_TOKENS,
    UNCACHED_HAS_NO_ATTENTION,
    AttentionNeedsCache,
    DecodeOptions,
)
from core.decode.transcript import Transcript
from core.decode.window_choice import WindowMisfit
from core.decode.window_feed import decode_source
from core.errors import WhisperKVError
from core.model.dims import FULL_WINDOW_S
from core.model.mel import FRAMES_PER_SECOND
from core.model.mel_file import MelSource
from core.model.npu_profile import profile_text, profiles, to_json, write_reports
from core.model.placement import RanOn
from device.link.decoder import Decoder
from device.runner.serve.heap import steady_heap
from device.spec.backend_rows import ROWS


def register(subs) -> None:
    p = subs.add_parser("transcribe", help="transcribe an audio file")
    p.add_argument("audio", help="wav, flac, mp3, ogg, m4a, webm, a video's sound ... any rate, any channel count")
    p.add_argument("--language", default="auto", help="auto (detect), en, zh, ... (default: auto)")
    p.add_argument("--task", choices=("transcribe", "translate"), default="transcribe")
    p.add_argument("--cache", choices=("on", "off"), default="on", help="KV cache on, or the uncached reference")
    p.add_argument("--max-tokens", type=int, default=MAX_TOKENS,
                   help=f"sampled tokens per 30 s window (default {MAX_TOKENS})")
    p.add_argument("--top-k", type=int, default=5, help="alternatives reported per step")
    p.add_argument("--json", action="store_true", help="print one JSON document with every step")
    p.add_argument("--timestamps", action="store_true", help="print timed segments (audio over 30 s is "
                   "decoded with Whisper's timestamp tokens and advances by the last complete segment either way)")
    p.add_argument("--word-timestamps", action="store_true", help="words with start, end and probability, by "
                   "openai-whisper's DTW over the alignment heads' cross-attention (needs --cache on)")
    p.add_argument("--temperature-fallback", action="store_true", help="as openai-whisper: re-decode a window "
                   "whose compression ratio is over 2.4 or avg logprob under -1.0 at T=0.2, 0.4 … 1.0, sampling")
    p.add_argument("--seed", type=int, default=0, help="the fallback's sampling seed (default 0): same seed, "
                   "same transcript")
    add_window_args(p)
    p.add_argument("--npu-profile", default=None, metavar="DIR", help="run the runner with the Neuron runtime's "
                   "profiler on, save its CSV reports in DIR and print each graph's slowest ops (dla, or tflite "
                   "with the Neuron delegate)")
    p.add_argument("--srt", default=None, metavar="PATH", help="also write SRT subtitles (per word with "
                   "--word-timestamps)")
    p.add_argument("--vtt", default=None, metavar="PATH", help="also write WebVTT subtitles (per word with "
                   "--word-timestamps)")
    add_device_args(p)
    p.set_defaults(run=run)


def options_from_args(args) -> DecodeOptions:
    try:
        return DecodeOptions(language=args.language, task=args.task, cache=args.cache == "on",
                             max_tokens=args.max_tokens, top_k=args.top_k, timestamps=args.timestamps,
                             word_timestamps=args.word_timestamps, temperature_fallback=args.temperature_fallback,
                             seed=args.seed)
    except AttentionNeedsCache as exc:
        flag = "--" + exc.asked.replace("_", "-")
        raise WhisperKVError(f"{flag} needs --cache on: {UNCACHED_HAS_NO_ATTENTION}", "drop --cache off") from exc
    except ValueError as exc:
        raise WhisperKVError(str(exc), "see `whisperkv transcribe --help`") from exc


def sized(options: DecodeOptions, args, n_frames: int, windows: tuple[int, ...]) -> DecodeOptions:
    """`options` with the window --window asks for, given the audio's frames and the runner's windows."""
    try:
        return replace(options, window_s=window_rule(args).window_for(n_frames, windows))
    except WindowMisfit as exc:      # a length the runner lacks, the audio longer
        raise WhisperKVError(exc.problem, f"use --window auto or {FULL_WINDOW_S}") from None


def check_language(language: str | None, known: dict | None) -> None:
    """`known` None: the decoder checks (a runner answers an unknown language with one line)."""
    if language is not None and known is not None and language not in known:
        raise WhisperKVError(f"unknown language {language!r}",
                             "use auto or one of: " + ", ".join(sorted(known)))


def check_attention(options: DecodeOptions, info) -> None:
    """Word timings and attention need a backend with the step graph's attention variant (hello.features)."""
    asked = "word_timestamps" if options.word_timestamps else "attention"
    if options.wants_attention and asked not in info.features:
        raise WhisperKVError(f"backend {info.backend!r} cannot report cross-attention, so --word-timestamps "
                             "cannot time words", "use --backend " + ", ".join(s.name for s in ROWS.values()
                                                                               if s.attention))


def run(args) -> int:
    # The log-mel's large temporaries go back to the system once freed, rather than stay resident in
    # this process beside the runner while it encodes (docs/benchmarks-history.md, "Whole process").
    steady_heap()
    options = options_from_args(args)
    if args.npu_profile:
        make_folder(args.npu_profile)       # an unwritable folder fails now, not after the decode
    with open_cli_decoder(args, "one-shot") as decoder:   # a bad URL or backend fails here, before anything slow
        # A runner starts, and loads its model, while the audio is read; in this process the audio is read first.
        connecting = None if decoder.target.in_process else in_background(decoder.connect)
        t_audio = time.perf_counter()
        source = MelSource.of_file(args.audio)   # the scan reads the whole file: bad audio fails here
        audio_s = time.perf_counter() - t_audio
        with loading_line():
            info = connecting.result() if connecting else decoder.connect()
        check_language(options.language, decoder.languages)
        check_attention(options, info)
        options = sized(options, args, source.n_frames, info.windows)
        levels: dict = {}     # window → per-frame loudness of the host's mel, for the EOT focus in the verdict
        t0 = time.perf_counter() - audio_s       # total_ms: reading the audio plus decoding, not the start-up
        events = decode_source(source, options, decoder.window, levels=levels)
        code = report(events, args, t0, Ran(decoder, levels, source.n_frames / FRAMES_PER_SECOND, options.window_s))
        if args.npu_profile:
            show_npu_profile(decoder, args.npu_profile)
        return code


@dataclass
class Ran:
    """What a report says besides the events: who decoded (and the link's figures), the mel's loudness, the
    audio's length."""

    decoder: Decoder
    levels: dict = field(default_factory=dict)
    duration_s: float = 0.0
    window_s: int = FULL_WINDOW_S     # the encoder window asked for (the runner's encoded events say what it ran)

    def meta(self) -> dict:
        d = self.decoder
        found = profiles(d.npu_files())
        return {**d.meta(), "window_s": self.window_s, **({"link": link} if (link := d.link()) else {}),
                **({"npu_profile": to_json(found)} if found else {}),
                # filled as the windows run: --json prints it after the last one
                **({"samples": d.samples} if d.info is not None and d.info.soc else {})}


def report(events, args, t0: float, ran: Ran) -> int:
    """Print events as they arrive (or one JSON document at the end); return the exit code. A decode that fails
    part-way (the link drops, the runner dies) still hands over what it decoded, with the error, and exits 2."""
    result = Transcript()
    stream = None if args.json else TranscriptPrinter()
    failure = None
    try:
        for ev in events:
            result.add(ev)
            if stream:
                stream.feed(ev, result)
    except WhisperKVError as exc:
        failure = exc
    total_ms = (time.perf_counter() - t0) * 1e3
    meta = ran.meta()
    if failure is not None:
        return report_failure(result, args, failure, total_ms, stream, ran.duration_s, **meta)
    diagnosis = diagnose_transcript(result, levels=ran.levels)
    verdict = diagnosis.verdict
    if args.word_timestamps and result.steps and all(s.attention is None for s in result.steps):
        raise WhisperKVError("the runner sent no cross-attention, so no word could be timed (a runner older than "
                             "this CLI ignores word_timestamps)", "deploy this runner with `whisperkv deploy`")
    if args.json:
        doc = result.summary() | {"verdict": verdict, "total_ms": round(total_ms, 3),
                                   "steps": result.steps_json(), "cache": args.cache, **meta}
        print(json.dumps(doc, ensure_ascii=False, indent=1))
    else:
        s = result.summary()
        stream.end()
        for g in s["segments"]:
            print(f"[{g['start']:7.2f}s --> {g['end']:7.2f}s] {g['text'].strip()}")
        if args.word_timestamps:
            print_words(result.words)
        if s["no_speech"]:
            print("[no speech detected: every window fell under Whisper's no-speech rule]", file=sys.stderr)
        placed, window = RanOn.from_dict(meta.get("ran_on")), meta.get("window_s", FULL_WINDOW_S)
        print(f"[stop: {s['stop_reason']} — {verdict} | {quality_label(diagnosis)}language {s['language']} | "
              f"{s['n_steps']} steps | encoder {s['encoder_ms']:.0f} ms | "
              f"per token {s['per_token_ms_median'] or 0:.1f} ms median | total {total_ms:.0f} ms | "
              f"cache {args.cache} | " + (f"window {window} s | " if window != FULL_WINDOW_S else "")
              + f"{meta.get('runner') or '?'} runner | "
              + (f"{meta['os']} | " if meta.get("os") else "") + f"backend {meta.get('backend') or '?'} | "
              f"ran on {placed.label if placed else '?'}"
              + (f" | {placed.runtime}" if placed and placed.runtime else "")
              + "]", file=sys.stderr)
    write_subtitles(result, args, ran.duration_s)
    return 0


def report_failure(result: Transcript, args, failure: WhisperKVError, total_ms: float, stream, duration_s: float,
                   **meta) -> int:
    """What was decoded before `failure`: the text (the unfinished window's tokens too), subtitles, and with
    --json every step plus an `error` object; then the error on stderr."""
    if args.json:
        doc = result.summary() | {"text": result.live_text, "complete": False, "total_ms": round(total_ms, 3),
                                   "error": {"code": failure.code, "problem": failure.problem, "fix": failure.fix},
                                   "steps": result.steps_json(), "cache": args.cache, **meta}
        print(json.dumps(doc, ensure_ascii=False, indent=1))
    else:
        stream.unfinished(result)
        stream.end()
    write_subtitles(result, args, duration_s)
    print(f"whisperkv: error: {failure} (the text decoded before it was printed: {len(result.windows)} "
          f"window(s), {len(result.steps)} steps)", file=sys.stderr)
    return 2


def show_npu_profile(decoder: Decoder, folder: str) -> None:
    """--npu-profile: the runner's Neuron profiler reports saved into `folder`, and each graph's slowest ops on
    stderr (also after a failed decode: the windows that ran keep theirs)."""
    written = write_reports(decoder.npu_reports, folder)
    found = profiles(decoder.npu_files())
    if found:
        print(profile_text(found), file=sys.stderr)
        print(f"[npu profile: {len(written)} report(s) in {folder}]", file=sys.stderr)
    else:
        backend = decoder.info.backend if decoder.info else "?"
        print(f"[npu profile: the runner's Neuron runtime wrote no report (backend {backend}); the profile comes "
              "from the dla backend, or tflite with the Neuron delegate]", file=sys.stderr)


def make_folder(folder: str) -> None:
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise WhisperKVError(f"cannot make the folder {folder}: {exc.strerror}", "pass a writable folder") from exc


def print_words(words: list[dict]) -> None:
    """One line per word: its span, its probability, the word."""
    for w in words:
        print(f"[{w['start']:7.2f}s --> {w['end']:7.2f}s] p={w['probability']:.2f} {w['word'].strip()}")


def quality_label(diagnosis) -> str:
    """The verdict window's quality signals, and any of whisper's thresholds it fails."""
    q = next((w.quality for w in diagnosis.windows if w.window == diagnosis.window), None)
    if q is None:
        return ""
    fails = q.failures()
    return f"{q.label()}{' (fails ' + ', '.join(fails) + ')' if fails else ''} | "


def write_subtitles(result: Transcript, args, duration_s: float) -> None:
    """--srt/--vtt: the transcript's cues, or one cue per word with --word-timestamps."""
    if not (args.srt or args.vtt):
        return
    cues = subtitles.word_cues(result.words) if args.word_timestamps else subtitles.cues(result, duration_s)
    for path, render in ((args.srt, subtitles.srt), (args.vtt, subtitles.vtt)):
        if path:
            try:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(render(cues))
            except OSError as exc:
                raise WhisperKVError(f"cannot write {path}: {exc.strerror}", "pass a writable path") from exc
