"""`whisperkv deploy` and `whisperkv device-info`: put the runner on a board, and see what the board has."""
from __future__ import annotations

import concurrent.futures
import contextlib
import getpass
import json
import os
import sys
import threading
import time

from device.runner.backends import deploy_help, deploy_modes


def add_device_args(p, repeatable: bool = False) -> None:
    """--device, --trust-host-key and the SSH password source, shared with `transcribe`. With
    `repeatable` (qa), --device may be given several times: args.device is then a list, or None."""
    p.add_argument("--device", default=None if repeatable else "local", metavar="URL",
                   action="append" if repeatable else "store",
                   help="local (default: the runner as a subprocess on this PC), ssh://user@host[:port] or "
                        "adb://SERIAL; settings such as ?python=/usr/bin/python3&dir=~/whisperkv may follow. "
                        "`inprocess` decodes inside this process, with no runner"
                        + ("; repeat it to run on several devices in parallel" if repeatable else ""))
    p.add_argument("--trust-host-key", default=None, metavar="SHA256:...",
                   help="accept this SSH host key fingerprint although known_hosts lacks it")


def ssh_password(url: str) -> str | None:
    """The SSH password from WHISPERKV_SSH_PASSWORD (open_device prompts only on a terminal)."""
    if not url.startswith("ssh://"):
        return None
    return os.environ.get("WHISPERKV_SSH_PASSWORD")


def open_device(args):
    """The transport for --device. On a terminal only, as ssh does: offer to trust an unknown host key
    (saving it to ~/.ssh/known_hosts) and ask for a password when key login is refused."""
    from device.link.connect import open_transport

    password = ssh_password(args.device)
    transport = open_transport(args.device, trust_host_key=args.trust_host_key, password=password)
    if not args.device.startswith("ssh://") or not sys.stdin.isatty():
        return transport
    from device.link.ssh import AuthError, HostKeyError, add_known_host  # paramiko: only for ssh://

    for _ in range(3):
        try:
            transport.client()
            return transport
        except HostKeyError as exc:
            if exc.known_hosts_line is None or not _confirm(f"{exc.problem}.\nTrust it and add it to "
                                                            "~/.ssh/known_hosts? [yes/no] "):
                raise
            print(f"added to {add_known_host(exc.known_hosts_line)}", file=sys.stderr)
        except AuthError:
            if password:
                raise
            password = getpass.getpass(f"password for {transport.label}: ")
        transport = open_transport(args.device, trust_host_key=args.trust_host_key, password=password)
    return transport


def _confirm(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def transcribe_on_device(args, open_audio, report) -> int:
    """`whisperkv transcribe --device URL`: stream through a BoardClient, one request per 30 s window
    (`open_audio()` -> (feed, seconds): core.decode.window_feed); --json gains a `link` section. The runner
    starts, and loads its model, while the audio is read. total_ms counts reading the audio plus the
    requests, not the runner's start-up."""
    from device.link.connect import workload_args

    transport = open_device(args)
    client = device_client(args, transport)
    client.runner_args += workload_args(args.device, "one-shot")
    link: dict = {"device": transport.label, "upload_ms": 0.0, "host_ms": []}
    try:
        connecting = _in_background(client.connect)
        feed, audio_s = open_audio()        # bad audio: the finally below stops the runner
        with _loading_line():
            info = connecting.result()
        t0 = time.perf_counter() - audio_s
        t_link = time.monotonic()
        samples: list[dict] = []           # what the board reported while the windows ran (`sample` events)
        client.on_sample = samples.append

        def decode_one(mel, options, n_frames):
            # max_windows: the runner ends the request at this window's done (a runner that does not
            # know the field decodes on, and closing the stream cancels it)
            stream = client.transcribe(mel, {**options.to_wire(), "max_windows": 1}, n_frames=n_frames)
            try:
                for i, arrival in enumerate(stream):
                    if i == 0:
                        link["upload_ms"] = round(link["upload_ms"] + client.upload_ms, 3)
                    # ms since the first request went out: one per event, in order, across the windows
                    link["host_ms"].append(round((arrival.host_t - t_link) * 1e3, 3))
                    yield arrival.event
            finally:
                stream.close()

        return report(feed(decode_one), args, t0, backend=info.backend, model_sha256=info.model_sha256,
                      runner_version=info.runner_version, link=link, ran_on=info.ran_on.to_dict(),
                      # filled as the windows run: --json prints it after the last one
                      **({"soc": info.soc, "samples": samples} if info.soc else {}))
    finally:
        client.close()
        transport.close()


def device_client(args, transport):
    """A BoardClient (not yet connected) for --device, with --model, --backend and --delegate for its runner."""
    from device.link.connect import open_client

    client = open_client(args.device, transport=transport)
    if getattr(args, "model", None):
        client.runner_args += ["--model", args.model]      # a path on the device
    if getattr(args, "backend", "auto") not in (None, "auto") and "--backend" not in client.runner_args:
        client.runner_args += ["--backend", args.backend]  # resolved by the runner, on the device
    if getattr(args, "delegate", None) and "--delegate" not in client.runner_args:
        client.runner_args += ["--delegate", args.delegate]   # a path on the device
    return client


def _in_background(fn) -> concurrent.futures.Future:
    """fn() on a daemon thread (a hung connect must not hold the process at exit; close() ends it)."""
    future: concurrent.futures.Future = concurrent.futures.Future()

    def run():
        try:
            future.set_result(fn())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, daemon=True, name="connect").start()
    return future


@contextlib.contextmanager
def _loading_line(after_s: float = 1.0):
    """The runner loads its model inside connect(): on a terminal, say so when that is not instant, and
    wipe the line once it is done (scripts reading stderr keep their one line per error)."""
    if not sys.stderr.isatty():
        yield
        return
    shown = threading.Event()

    def show():
        print("loading model…", end="", file=sys.stderr, flush=True)
        shown.set()

    timer = threading.Timer(after_s, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()
        if shown.is_set():
            print("\r\033[K", end="", file=sys.stderr, flush=True)


def register(subs) -> None:
    p = subs.add_parser("deploy", help="copy the runner and the model bundle to a device")
    add_device_args(p)
    p.add_argument("--dir", default=None, help="directory on the device (default ~/whisperkv, or the URL's ?dir=)")
    p.add_argument("--model", default=None, help="model directory to deploy (default: the installed wheels; "
                   "with --backend tflite, a TFLite bundle exported from them into ~/.cache/whisperkv/bundles)")
    p.add_argument("--backend", default="auto", choices=deploy_modes(), help=deploy_help())
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run_deploy)

    p = subs.add_parser("device-info", help="show a device's OS, CPU, Python, memory, runner, model and NPU")
    add_device_args(p)
    p.add_argument("--dir", default=None, help="runner directory on the device (default ~/whisperkv)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run_info)


class _Bar:
    """Progress on stderr: a redrawn bar on a terminal, a line per 10 % otherwise."""

    def __init__(self):
        self.tty = sys.stderr.isatty()
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        pct = 100 if total == 0 else int(100 * done / total)
        if self.tty:
            bar = "#" * (pct // 4)
            print(f"\r  [{bar:25}] {pct:3d}% {done / 1e6:7.1f}/{total / 1e6:.1f} MB", end="", file=sys.stderr)
            if done >= total:
                print(file=sys.stderr)
        elif pct // 10 != self.last // 10:
            print(f"  {pct}% ({done / 1e6:.1f}/{total / 1e6:.1f} MB)", file=sys.stderr)
        self.last = pct


def run_deploy(args) -> int:
    from device.link.deploy import deploy

    transport = open_device(args)
    try:
        result = deploy(transport, dir=args.dir, model=args.model, progress=_Bar(),
                        log=lambda line: print(line, file=sys.stderr), backend=args.backend)
    finally:
        transport.close()
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"deployed to {result['device']}:{result['dir']} — {len(result['uploaded'])} uploaded, "
              f"{len(result['skipped'])} unchanged; model {result['model_sha256']}")
        if result["backend"] != "auto":
            url = with_settings(args.device, dir=args.dir and result["dir"], backend=result["backend"])
            print(f"run it with --device '{url}'" + {"tflite": " (add &delegate=PATH to load the Neuron delegate)",
                  "dla": " (add &neuron_lib=PATH for a runtime library elsewhere)"}.get(result["backend"], ""))
    return 0


def with_settings(url: str, **settings) -> str:
    """The device URL with these query settings added, unless it already names them."""
    from urllib.parse import parse_qs, urlsplit

    have = parse_qs(urlsplit(url if "://" in url else "local://" + url[len("local"):]).query)
    extra = "&".join(f"{k}={v}" for k, v in settings.items() if v and k not in have)
    return url if not extra else url + ("&" if "?" in url else "?") + extra


def run_info(args) -> int:
    from device.link.info import device_info, format_info

    transport = open_device(args)
    try:
        info = device_info(transport, args.dir)
    finally:
        transport.close()
    print(json.dumps(info, indent=1) if args.json else format_info(info))
    return 0

