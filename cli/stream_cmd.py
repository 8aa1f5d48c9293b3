"""`whisperkv stream [AUDIO | --mic]`: live transcription, committed text printed as it is confirmed
(core/stream/policy.py: AlignAtt or LocalAgreement-2 over a growing buffer, gated by Silero VAD)."""
from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading

from cli.device_cmds import add_device_args, loading_line, open_cli_decoder
from cli.stream_policy_args import add_policy_args, policy_options
from cli.transcribe import check_language
from core.errors import WhisperKVError

USAGE_FIX = "e.g. `whisperkv stream clip.wav --realtime`, or `whisperkv stream --mic`"


def register(subs) -> None:
    p = subs.add_parser("stream", help="live transcription of a file (as fast as possible, or --realtime) or "
                        "the microphone: text printed as it is confirmed")
    p.add_argument("audio", nargs="?", help="wav, flac, mp3, ogg, m4a, webm ... (or --mic)")
    p.add_argument("--mic", action="store_true", help="stream from the microphone until Ctrl-C")
    p.add_argument("--mic-device", type=int, default=None, metavar="N", help="input device index (sounddevice)")
    p.add_argument("--realtime", action="store_true", help="feed the file at 1x speed, as a microphone would")
    p.add_argument("--language", default="auto", help="auto (detect on the first speech, then keep), en, zh, ...")
    p.add_argument("--json", action="store_true", help="print one JSON document at the end: text, commits "
                   "[{text, start_s, end_s, emitted_s}], passes [{audio_s, encoder_ms, tokens, decode_ms, cache_len}]")
    add_policy_args(p)
    p.add_argument("--prompt-chars", type=int, default=100, metavar="N", help="prompt each pass with up to N "
                   "characters of committed text that has left the buffer (0: no prompt; default 100)")
    p.add_argument("--no-vad", action="store_true", help="no voice activity gate: every second is transcribed")
    add_device_args(p)
    p.set_defaults(run=run)


@contextlib.contextmanager
def stop_on_interrupt(stop: threading.Event):
    """The first Ctrl-C ends the stream (what was heard is still committed and printed); a second one aborts."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run(args) -> int:
    # Imported when a stream runs: every other subcommand starts without the stream's modules (cli/main.py
    # registers them all at start-up).
    from cli.commit_printer import CommitPrinter
    from core.model.audio import load_audio
    from core.stream.feed import blocks_of, realtime_blocks
    from core.stream.mic import mic_blocks, sounddevice_stream
    from core.stream.policy import StreamConfig
    from core.stream.session import StreamSession

    if bool(args.audio) == bool(args.mic):
        raise WhisperKVError("give an audio file or --mic, one of them", USAGE_FIX)
    if args.prompt_chars < 0:
        raise WhisperKVError("--prompt-chars must be at least 0", USAGE_FIX)
    config = StreamConfig(language=args.language, prompt_chars=args.prompt_chars, **policy_options(args))
    audio = None if args.mic else load_audio(args.audio)     # bad audio fails before the runner starts
    printer = None if args.json else CommitPrinter()
    stop = threading.Event()
    # a pass a second: the runner keeps its buffers (serve), and in this process the cross K/V of a pass heard again
    with open_cli_decoder(args, "serve") as decoder, stop_on_interrupt(stop):
        with loading_line():
            decoder.connect()
        meta = decoder.meta()
        check_language(config.language, decoder.tokenizer.languages)
        session = StreamSession(decoder.window, decoder.tokenizer, config, vad=not args.no_vad,
                                takes_prompt=decoder.takes("prompt"), windows=decoder.info.windows, stop=stop,
                                on_event=printer.feed if printer else lambda event: None)   # --json: one document
        if session.prompt_refused:
            print("whisperkv: the runner takes no prompt (deploy this version for better accuracy); "
                  "streaming without one", file=sys.stderr)
        if args.mic:
            blocks = mic_blocks(sounddevice_stream, args.mic_device, should_stop=lambda: session.stopped)
        else:
            blocks = realtime_blocks(audio) if args.realtime else blocks_of(audio)
        doc = session.run(blocks, live=bool(args.mic or args.realtime))
    doc |= {"realtime": bool(args.realtime or args.mic), **meta}
    if args.json:
        print(json.dumps(doc, ensure_ascii=False, indent=1))
        return 0
    printer.end()
    lag, n_commits = doc["lag_s"], len(doc["commits"])
    lag_text = f"lag median {lag['median']:.2f} s, p90 {lag['p90']:.2f} s" if lag["n"] else "no text committed"
    print(f"[stream: {n_commits} commits · {lag_text} · compute {doc['compute_per_audio_s'] or 0:.2f} s per audio s · "
          f"{len(doc['passes'])} passes, {len(doc['skipped'])} skipped ahead · language {doc['language'] or '?'} · "
          f"backend {meta.get('backend', '?')} · policy {config.policy}]", file=sys.stderr)
    return 0
