"""Link overhead: host-observed vs runner-reported per-token latency, and mel upload time.

    python bench/link.py [--runs 3] [--uploads 10] [--backend auto] [--update-doc]

For the local pipe and a loopback SSH link (its own throwaway sshd, as in the tests) it decodes
test_en.wav `--runs` times and reports, per token, the host's arrival gap minus the runner's
own step time (`ms`): the median and p95 of that overhead. The mel upload is the time from starting
to send a transcribe to the arrival of `encoded`, minus the encoder time, with the runner's encoder
cache warm (so `encoded.ms` ≈ 0): framing, transfer, and the runner's checks of the payload.
Figures are one run's; nothing here fails on a time.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.decode.events import EncodedEvent, TokenEvent  # noqa: E402
from core.model.audio import load_audio  # noqa: E402
from core.model.mel import mel_windows  # noqa: E402
from device.link.client import BoardClient  # noqa: E402
from device.link.local import LocalTransport  # noqa: E402
from device.link.ssh import SshTransport  # noqa: E402
from tests.device.sshd import start_sshd  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "## Link"


@dataclass
class LinkFigures:
    link: str
    tokens: int
    step_ms_median: float
    overhead_ms_median: float
    overhead_ms_p95: float
    latency_ms_median: float          # token written by the runner -> parsed by the host (one clock)
    latency_ms_p95: float
    upload_ms: dict[str, float]       # dtype -> median ms, request start to encoder start
    write_ms: dict[str, float]        # dtype -> median ms for the host to hand the frame to the link


def token_overheads(arrivals) -> tuple[list[float], list[float], list[float]]:
    """Per token: host gap since the previous event minus the runner's step time, the step times, and
    the one-way latency (arrival minus the runner's sent_t: valid because runner and host share a clock)."""
    over, steps, lat = [], [], []
    for prev, cur in zip(arrivals, arrivals[1:]):
        if isinstance(cur.event, TokenEvent):
            over.append((cur.host_t - prev.host_t) * 1000 - cur.event.ms)
            steps.append(cur.event.ms)
            lat.append((cur.host_t - cur.sent_t) * 1000)
    return over, steps, lat


def upload_times(client: BoardClient, mel: np.ndarray, n: int) -> tuple[float, float]:
    """Median (request start → encoder start) and median host write time, encoder cache warm."""
    list(client.transcribe(mel, {"language": "en", "max_tokens": 1}))      # warm the cross K/V cache
    uploads, writes = [], []
    for _ in range(n):
        for a in client.transcribe(mel, {"language": "en", "max_tokens": 1}):
            if isinstance(a.event, EncodedEvent):
                uploads.append(a.host_ms - a.event.ms)
        writes.append(client.upload_ms)
    return float(np.median(uploads)), float(np.median(writes))


def measure(name: str, client: BoardClient, mel: np.ndarray, runs: int, uploads: int) -> LinkFigures:
    client.connect()
    over, steps, lat = [], [], []
    for _ in range(runs):
        o, s, la = token_overheads(list(client.transcribe(mel, {"language": "en"})))
        over += o
        steps += s
        lat += la
    up, wr = {}, {}
    for dtype in ("float16", "float32"):
        client.mel_dtype = dtype
        up[dtype], wr[dtype] = upload_times(client, mel, uploads)
    client.mel_dtype = "float16"
    return LinkFigures(name, len(over), float(np.median(steps)), float(np.median(over)),
                       float(np.percentile(over, 95)), float(np.median(lat)), float(np.percentile(lat, 95)),
                       up, wr)


def cpu_model() -> str:
    """What `lscpu | grep 'Model name'` says, so the doc names the machine beside its figures."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def markdown(figs: list[LinkFigures], cmd: str, backend: str, load: float) -> str:
    mb16, mb32 = 80 * 3000 * 2 / 1e6, 80 * 3000 * 4 / 1e6
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [SECTION, "", f"**{cpu_model()}, {when}**, measured with `{cmd}` (one run: {os.cpu_count()} cores, "
             f"load average {load:.1f} from other work during the run, runner backend `{backend}`, test_en.wav, "
             "one 30 s window; p95 mostly shows scheduling delays on busy cores). Overhead per token = host arrival "
             "gap − runner step `ms`; latency = host arrival − the runner's `sent_t` stamp (same machine, same "
             "monotonic clock); mel upload = request start → `encoded` arrival − encoder `ms`, encoder cache warm. "
             "Targets: median overhead ≤ 1 ms on loopback SSH, upload ≤ 50 ms.", "",
             "| link | tokens | runner step median (ms) | overhead median / p95 (ms) | latency median / p95 (ms) | "
             f"upload fp16 {mb16:.2f} MB (ms) | upload fp32 {mb32:.2f} MB (ms) |",
             "|---|---|---|---|---|---|---|"]
    for f in figs:
        lines.append(f"| {f.link} | {f.tokens} | {f.step_ms_median:.1f} | {f.overhead_ms_median:.2f} / "
                     f"{f.overhead_ms_p95:.2f} | {f.latency_ms_median:.2f} / {f.latency_ms_p95:.2f} | "
                     f"{f.upload_ms['float16']:.1f} | {f.upload_ms['float32']:.1f} |")
    lines += ["", "Host write time of the transcribe frame (returns once the bytes are in the pipe or the SSH "
              "window): " + "; ".join(f"{f.link} fp16 {f.write_ms['float16']:.1f} ms, fp32 "
                                      f"{f.write_ms['float32']:.1f} ms" for f in figs) + ".", ""]
    return "\n".join(lines)


def update_doc(section: str, doc: Path = DOC) -> None:
    """Replace (or append) only the ## Link section; other sections belong to other benchmarks."""
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    section = section.rstrip("\n") + "\n"
    start = text.find(SECTION + "\n")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        nxt = text.find("\n## ", start + len(SECTION))
        text = text[:start] + section + ("\n" + text[nxt + 1:] if nxt >= 0 else "")
    doc.parent.mkdir(exist_ok=True)
    doc.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="full decodes of test_en.wav per link")
    ap.add_argument("--uploads", type=int, default=10, help="upload timings per dtype per link")
    ap.add_argument("--backend", default="auto", help="runner backend (auto, numpy, onnx, ...)")
    ap.add_argument("--update-doc", action="store_true", help=f"write the results into {DOC.relative_to(ROOT)}")
    args = ap.parse_args(argv)

    mel = mel_windows(load_audio(ROOT / "resources" / "audio" / "test_en.wav"))
    runner_args = ["--backend", args.backend]
    figs = []
    with tempfile.TemporaryDirectory() as tmp:
        server = start_sshd(Path(tmp) / "sshd")
        try:
            kh = server.write_known_hosts(Path(tmp) / "known_hosts")
            links = [("local pipe", LocalTransport()),
                     ("loopback SSH", SshTransport("127.0.0.1", server.user, server.port, key=str(server.user_key),
                                                   known_hosts=[str(kh)], allow_agent=False,
                                                   python=sys.executable, dir=str(ROOT)))]
            for name, transport in links:
                client = BoardClient(transport, runner_args=runner_args)
                try:
                    figs.append(measure(name, client, mel, args.runs, args.uploads))
                    backend = client.info.backend
                finally:
                    client.close()
                    transport.close()
                print(figs[-1], file=sys.stderr)
        finally:
            server.stop()
    cmd = "python bench/link.py " + " ".join(argv if argv is not None else sys.argv[1:])
    section = markdown(figs, cmd.strip(), backend, os.getloadavg()[0])
    print(section)
    if args.update_doc:
        update_doc(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
