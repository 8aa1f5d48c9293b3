"""`whisperkv doctor --device URL [--model BUNDLE] [--quick] [--json] [--out DIR] [--npu-profile]`: climb the board's
ladder (device/doctor/ladder.py), one line per rung as it is decided, and the report to attach to a bug.
Exit 0 when no rung fails (warnings allowed), 1 when one fails, 2 when the doctor itself cannot run."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from cli.device_cmds import add_device_args, open_device, target_from_args
from core.errors import WhisperKVError
from device.doctor.checkup import Checkup
from device.doctor.ladder import RUNGS, examine
from device.doctor.report import write_report


def register(subs) -> None:
    ladder = "; ".join(f"{r.name}: {r.checks}" for r in RUNGS)
    p = subs.add_parser("doctor", help="check a board rung by rung, from reaching it to the NPU's tokens and speed, "
                        "and stop at the first that fails with its fix",
                        description="The rungs, in order: " + ladder + ". docs/doctor.md says what a real board "
                        "must show.")
    add_device_args(p, runner=False)
    p.add_argument("--model", default=None, metavar="BUNDLE", help="the bundle on this PC that the board runs (its "
                   "model.json is read and its files compared with the board's); default: the board's own, checked "
                   "against what deploy recorded there and its model.json read there")
    p.add_argument("--quick", action="store_true", help="decode the short hello-world clip only (the tokens rung)")
    p.add_argument("--json", action="store_true", help="print the report as JSON (the rung lines go to stderr)")
    p.add_argument("--out", default=None, metavar="DIR", help="write doctor.json and a self-contained doctor.html, "
                   "with the runner's stderr (runner-stderr.txt) and on Android the Neuron lines of `logcat -d` "
                   "(logcat-neuron.txt)")
    p.add_argument("--npu-profile", action="store_true", help="run the Neuron runtime's profiler on the ladder's "
                   "runner, for the placement rung's per-graph report (a profiled runner re-creates its runtimes "
                   "after every request; the speed rung times a runner of its own without it); default: placement "
                   "from what the backend reports in hello alone")
    p.set_defaults(run=run_doctor)


def checkup_for(args):
    """The doctor's Checkup: the target whose runner runs what is deployed, or, on the local runner of this
    checkout, the bundle in place."""
    bundle = Path(args.model).expanduser().resolve() if args.model else None
    if bundle is not None and not (bundle / "model.json").is_file():
        raise WhisperKVError(f"{bundle} is not an exported bundle (no model.json)",
                             "give --model the folder `whisperkv export` (and `whisperkv compile`) wrote")
    runner = getattr(args, "runner", None)
    target = target_from_args(_Args(args.device, args.trust_host_key, None, runner))
    if target.in_process:
        raise WhisperKVError("the doctor checks a runner, and `inprocess` has none",
                             "give --device local, ssh://user@host or adb://SERIAL")
    if target.url.scheme == "local" and not target.url.dir and not target.model and bundle is not None:
        target = target_from_args(_Args(args.device, args.trust_host_key, str(bundle), runner))
    return Checkup(target, bundle, args.quick, open_transport=lambda: open_device(target),
                   npu_profile=bool(getattr(args, "npu_profile", False) or target.npu_profile))


class _Args:
    """The device arguments target_from_args reads: the runner's model is the board's, not --model's."""

    def __init__(self, device, trust_host_key, model, runner=None):
        self.device, self.trust_host_key, self.model, self.runner = device, trust_host_key, model, runner
        self.backend = self.delegate = None


def run_doctor(args) -> int:
    checkup = checkup_for(args)
    out = sys.stderr if args.json else sys.stdout
    doc = examine(checkup, on_rung=lambda r: print(r.line(), file=out, flush=True), logs=bool(args.out))
    if args.out:
        write_report(Path(args.out), doc, checkup.runs, checkup.logs)
    if args.json:
        print(json.dumps(doc, indent=1, ensure_ascii=False))
    return 1 if any(r["status"] == "fail" for r in doc["rungs"]) else 0
