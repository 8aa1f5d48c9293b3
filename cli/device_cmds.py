"""`whisperkv deploy` and `whisperkv device-info`: put the runner on a board, and see what the board has."""
from __future__ import annotations

import concurrent.futures
import contextlib
import getpass
import json
import os
import sys
import threading
from urllib.parse import parse_qs, urlsplit

from core.errors import WhisperKVError
from device.info.info import device_info, format_info
from device.link.target import parse_target
from device.spec.backend_rows import deploy_help, deploy_modes
from device.spec.neuron_paths import SEARCH_ORDER
from device.spec.settings import SETTINGS


def add_device_args(p, repeatable: bool = False, runner: bool = True) -> None:
    """--device and the device target's settings (device/spec/settings.py, the rows every subcommand takes:
    --model, --backend, --delegate, --neuron-*, --trust-host-key), each also a ?name= of the URL. With `repeatable`
    (qa), --device may be given several times: args.device is then a list, or None. Without `runner` (deploy,
    device-info, doctor, compile: their --model and --backend are their own), only the settings the transport reads."""
    p.add_argument("--device", default=None if repeatable else "local", metavar="URL",
                   action="append" if repeatable else "store",
                   help="local (default: the runner as a subprocess on this PC), ssh://user@host[:port] or "
                        "adb://SERIAL; settings such as ?python=/usr/bin/python3&dir=~/whisperkv may follow. "
                        "`inprocess` decodes inside this process, with no runner"
                        + ("; repeat it to run on several devices in parallel" if repeatable else ""))
    for s in SETTINGS:
        if s.cli and (runner or not s.runner):
            p.add_argument(s.flag, default=s.default, choices=s.choices or None, metavar=s.metavar,
                           help=s.help_text())


def open_cli_decoder(args, workload: str, device: str | None = None):
    """The decoder (device/link/decoder.py::open_decoder) for a subcommand's arguments: its target parsed once
    (device/link/target.py); on a terminal a runner's transport may ask about a host key or a password first.
    `device` picks one of several --device URLs (qa)."""
    from device.link.decoder import open_decoder  # lazy: NumPy and the client load only when a decoder opens

    target = target_from_args(args, workload, device)
    transport = None if target.in_process else open_device(target)
    return open_decoder(target, transport)


def target_from_args(args, workload: str = "lean", device: str | None = None, runner: bool = True):
    """The device target of a subcommand's arguments (the settings add_device_args declared). `runner`: the
    runner's settings are the arguments' (deploy's --model and --backend are what it ships). The SSH password comes
    from WHISPERKV_SSH_PASSWORD when it is set."""
    device = args.device if device is None else device
    password = os.environ.get("WHISPERKV_SSH_PASSWORD") if str(device).startswith("ssh://") else None
    settings = {s.name: getattr(args, s.name, None) for s in SETTINGS if s.cli and (runner or not s.runner)}
    return parse_target(device, **settings, workload=workload, password=password,
                        npu_profile=bool(runner and getattr(args, "npu_profile", None)))


def open_device(target):
    """The transport for a runner target. On a terminal only, as ssh does: offer to trust an unknown host key
    (saving it to ~/.ssh/known_hosts) and ask for a password when key login is refused."""
    from device.link.connect import open_transport  # lazy: NumPy and the client load only when a device opens

    if target.in_process:
        raise WhisperKVError("`inprocess` is no device", "give --device local, ssh://user@host or adb://SERIAL")
    password = target.password
    transport = open_transport(target.url, trust_host_key=target.trust_host_key, password=password)
    if target.url.scheme != "ssh" or not sys.stdin.isatty():
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
        transport = open_transport(target.url, trust_host_key=target.trust_host_key, password=password)
    return transport


def _confirm(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def in_background(fn) -> concurrent.futures.Future:
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
def loading_line(after_s: float = 1.0):
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
    add_device_args(p, runner=False)
    p.add_argument("--dir", default=None, help="directory on the device (default ~/whisperkv, or the URL's ?dir=)")
    p.add_argument("--model", default=None, help="model directory to deploy (default: the installed wheels; "
                   "with --backend tflite, a TFLite bundle exported from them into ~/.cache/whisperkv/bundles)")
    p.add_argument("--backend", default="auto", choices=deploy_modes(), help=deploy_help())
    p.add_argument("--wheels", default=None, metavar="DIR",
                   help="install what the board lacks from the wheels in DIR instead of fetching them from PyPI "
                        "on this PC (no internet; docs/board.md)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run_deploy)

    p = subs.add_parser("device-info", help="show a device's OS, CPU, Python, memory, runner, model and NPU")
    add_device_args(p, runner=False)
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
    from device.deploy.deploy import deploy  # lazy: its toolchain loads only for a deploy

    target = target_from_args(args, runner=False)
    transport = open_device(target)
    try:
        result = deploy(transport, dir=args.dir, model=args.model, progress=_Bar(),
                        log=lambda line: print(line, file=sys.stderr), backend=args.backend,
                        wheels=args.wheels, runner=target.runner)
    finally:
        transport.close()
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        on = f" (Android {result['android']})" if result.get("android") else ""
        print(f"deployed the {result['runner']} runner to {result['device']}:{result['dir']}{on} — "
              f"{len(result['uploaded'])} uploaded, "
              f"{len(result['skipped'])} unchanged; model {result['model_sha256']}")
        if result["backend"] != "auto":
            url = with_settings(args.device, dir=args.dir and result["dir"], backend=result["backend"])
            print(f"run it with --device '{url}'" + {"tflite": " (add &delegate=PATH to load an external delegate)",
                  "dla": " (add &neuron_lib=PATH for a runtime library elsewhere)"}.get(result["backend"], ""))
    return 0


def with_settings(url: str, **settings) -> str:
    """The device URL with these query settings added, unless it already names them."""
    have = parse_qs(urlsplit(url if "://" in url else "local://" + url[len("local"):]).query)
    extra = "&".join(f"{k}={v}" for k, v in settings.items() if v and k not in have)
    return url if not extra else url + ("&" if "?" in url else "?") + extra


def run_info(args) -> int:
    target = target_from_args(args, runner=False)
    transport = open_device(target)
    try:     # ?neuron_lib=PATH names the runtime library as it does for the runner; else the runner's search order
        info = device_info(transport, args.dir, neuron_libraries=(target.neuron_lib,) if target.neuron_lib
                           else SEARCH_ORDER)
    finally:
        transport.close()
    print(json.dumps(info, indent=1) if args.json else format_info(info))
    return 0

