"""The same tokens before and after a change: every backend this PC runs, on every bundled clip, through
`whisperkv transcribe --json` (a fresh process each, as a user runs it).

    python3 bench/same_tokens.py --out before.json                   # on the code before the change
    python3 bench/same_tokens.py --out after.json --against before.json

Prints, per backend and clip, the token count and whether the tokens equal those of --against; exits 1 when any
differs (a backend missing on one side is reported, not failed). Not a CI test: a full run takes minutes.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from device.runner.backends import available_backends  # noqa: E402

AUDIO = ROOT / "resources" / "audio"


def tokens(backend: str, clip: Path) -> list[int] | str:
    """The clip's tokens on `backend`, or the error line when the CLI failed."""
    r = subprocess.run([sys.executable, "-m", "cli", "transcribe", str(clip), "--json", "--backend", backend],
                       cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ["failed"])[-1]
    return json.loads(r.stdout)["tokens"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default=",".join(available_backends()), help="default: every one this PC runs")
    ap.add_argument("--out", default=None, help="write {backend: {clip: tokens}} here")
    ap.add_argument("--against", default=None, help="an earlier --out to compare with")
    args = ap.parse_args()
    before = json.loads(Path(args.against).read_text()) if args.against else {}
    clips = sorted(AUDIO.glob("*.wav"))
    found, differ = {}, 0
    for backend in [b for b in args.backends.split(",") if b]:
        found[backend] = {}
        for clip in clips:
            got = found[backend][clip.name] = tokens(backend, clip)
            old = before.get(backend, {}).get(clip.name)
            verdict = "" if old is None else "same" if old == got else "DIFFERENT"
            differ += verdict == "DIFFERENT"
            size = len(got) if isinstance(got, list) else got
            print(f"{backend:<14} {clip.name:<40} {size!s:>6} {verdict}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(found, indent=1))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
