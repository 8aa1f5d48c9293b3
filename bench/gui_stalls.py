"""UI frame stalls while tokens stream into the main window.

A 5 ms QTimer heartbeat runs on the UI thread; any gap between its ticks is time the UI thread could not
paint or react. Two decodes are measured in the real MainWindow:

1. the local runner on a real clip (runner start, model load, encoder and decode all off the UI thread);
2. a fast replayed stream: 4 windows × 448 tokens, one token every 0.5 ms, through the same worker
   signals — far faster than any backend, so the UI work per token is what shows; once without and once
   with each token's cross-attention (the heatmap's rows).

Target: no gap over 50 ms. Prints a Markdown table; never fails on a time.

    QT_QPA_PLATFORM=offscreen python bench/gui_stalls.py
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import soundfile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.main_window import MainWindow  # noqa: E402
from app.work.decode_worker import TranscribeWorker  # noqa: E402
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent  # noqa: E402
from core.model.audio import SAMPLE_RATE, load_audio  # noqa: E402
from core.model.dims import ModelDims  # noqa: E402
from device.link.decoder import Decoder  # noqa: E402
from device.link.runner_info import RunnerInfo  # noqa: E402

DIMS = ModelDims()
CACHE_BYTES_PER_TOKEN = DIMS.cache_bytes_per_token()
HEARTBEAT_MS = 5
TARGET_MS = 50.0


class ReplayDecoder(Decoder):
    """Stands in for a runner's decoder: streams synthetic events of a window as fast as the UI could ever
    receive them (the worker's seek loop asks for one window after another)."""

    def __init__(self, tokens: int = DIMS.n_text_ctx, gap_s: float = 0.0005):
        super().__init__()
        self.tokens, self.gap_s = tokens, gap_s
        self.label = "replay"
        self._cancel = False

    def connect(self):
        self.info = RunnerInfo(2, "replay", "replay", "0" * 64, {}, DIMS.n_text_ctx, CACHE_BYTES_PER_TOKEN)
        return self.info

    def window(self, mel, options=None, n_frames=None):
        self._cancel = False
        rng = np.random.default_rng(0)

        def arrival(ev):
            time.sleep(self.gap_s)
            self._arrived(time.monotonic())
            return ev

        with_attention = options is not None and options.attention
        yield arrival(EncodedEvent(0, 5.0, "en"))
        for step in range(self.tokens - 4):
            if self._cancel:
                break
            p = float(rng.uniform(-3, 0))
            yield arrival(TokenEvent(0, step, 1000 + step, f" w{step}", p, float(10 ** rng.uniform(-9, -1)),
                                     [(1000 + step, p), (11, p - 1)], 4 + step,
                                     (4 + step) * CACHE_BYTES_PER_TOKEN, 0.4,
                                     attention=attention_at(step * 3) if with_attention else None))
        yield arrival(DoneEvent(0, "cancelled" if self._cancel else "cache_full", [], "", 100.0, "en"))

    def cancel(self):
        self._cancel = True

    def close(self):
        pass


def attention_at(position: int) -> np.ndarray:
    """The alignment heads' cross-attention of one step as the runner sends it: fp16 [8, 1500], peaked."""
    a = np.full((8, 1500), 1e-4, np.float32)
    a[:, position % 1500:position % 1500 + 5] = 1.0
    return (a / a.sum(-1, keepdims=True)).astype(np.float16)


def measure(app, window, label: str) -> dict:
    # Each tick records wall time and the UI thread's own CPU time: a gap in which the thread used little
    # CPU was spent waiting (for a core or the GIL), not running our code.
    ticks: list[tuple[float, float]] = []
    heartbeat = QTimer()
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(lambda: ticks.append((time.perf_counter(), time.thread_time())))
    finished = []
    window.runFinished.connect(finished.append)
    heartbeat.start()
    t0 = time.perf_counter()
    run = window.transcribe()
    while not finished:
        QTest.qWait(10)
    wall = time.perf_counter() - t0
    heartbeat.stop()
    window.runFinished.disconnect(finished.append)
    t = np.array(ticks) if len(ticks) > 1 else np.zeros((2, 2))
    gaps, cpu = np.diff(t[:, 0]) * 1e3, np.diff(t[:, 1]) * 1e3
    first = t0 + (run.ttft_ms or 0) / 1e3
    decoding = t[1:, 0] > first
    worst = int(gaps.argmax())
    return {"label": label, "tokens": len(run.rows), "wall_s": wall, "max_gap_ms": float(gaps.max()),
            "max_gap_cpu_ms": float(cpu[worst]), "p99_gap_ms": float(np.percentile(gaps, 99)),
            "over_target": int((gaps > TARGET_MS).sum()),
            "max_gap_decoding_ms": float(gaps[decoding].max(initial=0.0)), "reason": run.stop_reason}


def run_window(app, settings_dir: Path, audio: Path, worker: TranscribeWorker | None, label: str, **options):
    store = QSettings(str(settings_dir / f"{label[:8]}.ini"), QSettings.Format.IniFormat)
    window = MainWindow(store=store, worker=worker)
    window.resize(1600, 1000)
    window.show()
    loaded = []
    window.clipLoaded.connect(loaded.append)
    window.open_audio(str(audio))
    while not loaded:
        QTest.qWait(10)
    window.controls.set_options(replace(window.controls.options(), **options))
    result = measure(app, window, label)
    window.close()
    return result


def four_windows(tmp: Path, audio: Path) -> Path:
    """The audio repeated to 4 windows of 30 s: the replayed stream's seek loop asks for four."""
    samples = load_audio(audio)
    path = tmp / "four_windows.wav"
    soundfile.write(path, np.resize(samples, 4 * 30 * SAMPLE_RATE), SAMPLE_RATE)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audio", default=str(ROOT / "resources" / "audio" / "test_en.wav"))
    parser.add_argument("--skip-local", action="store_true", help="only the replayed fast stream")
    args = parser.parse_args(argv)
    app = QApplication.instance() or QApplication([])
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_local:
            results.append(run_window(app, Path(tmp), Path(args.audio), None,
                                      f"local runner, {Path(args.audio).name}, cache on, attention on",
                                      language="en", attention=True))
        for attention in (False, True):
            replay = TranscribeWorker(decoder_factory=lambda profile, password: ReplayDecoder())
            results.append(run_window(app, Path(tmp), four_windows(Path(tmp), Path(args.audio)), replay,
                                      f"replayed stream, 4×{DIMS.n_text_ctx} tokens at 0.5 ms, attention "
                                      f"{'on' if attention else 'off'}", max_tokens=DIMS.n_text_ctx,
                                      attention=attention))
    print(f"| decode | tokens | wall s | max UI gap ms (UI-thread CPU in it) | max gap after first token ms "
          f"| p99 gap ms | gaps > {TARGET_MS:.0f} ms |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['label']} | {r['tokens']} | {r['wall_s']:.1f} | {r['max_gap_ms']:.1f} ({r['max_gap_cpu_ms']:.1f}) "
              f"| {r['max_gap_decoding_ms']:.1f} | {r['p99_gap_ms']:.1f} | {r['over_target']} |")
    if any(r["tokens"] == 0 for r in results):
        print("\na decode produced no tokens: the figures above measure nothing", file=sys.stderr)
        return 1
    worst = max(r["max_gap_ms"] for r in results)
    print(f"\nworst UI gap {worst:.1f} ms (target ≤ {TARGET_MS:.0f} ms): {'met' if worst <= TARGET_MS else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
