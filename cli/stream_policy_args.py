"""`whisperkv stream`'s choice of streaming policy: `--policy`, `--margin`, `--min-chunk`, their help generated
from the policy table (core/stream/policies.py), and what the JSON document says about the policy that ran."""
from __future__ import annotations

from core.errors import WhisperKVError
from core.stream.policies import DEFAULT_MARGIN_FRAMES, DEFAULT_POLICY, POLICIES, policy_help

FIX = "e.g. `whisperkv stream clip.wav --realtime --policy alignatt --margin 10 --min-chunk 0.5`"


def add_policy_args(p) -> None:
    p.add_argument("--policy", choices=list(POLICIES), default=DEFAULT_POLICY, help=policy_help())
    p.add_argument("--margin", type=int, default=DEFAULT_MARGIN_FRAMES, metavar="FRAMES",
                   help=f"alignatt: a token is committed only while its attention lies more than FRAMES encoder "
                   f"frames (20 ms each) before the end of the audio heard (default {DEFAULT_MARGIN_FRAMES})")
    chunks = ", ".join(f"{p.name} {p.min_chunk_s:g} s" for p in POLICIES.values())
    p.add_argument("--min-chunk", type=float, default=None, metavar="S",
                   help=f"new audio between passes (default: the policy's own, {chunks})")


def policy_options(args) -> dict:
    """The StreamConfig fields the arguments set; bad values are one clear line."""
    if args.min_chunk is not None and args.min_chunk <= 0:
        raise WhisperKVError("--min-chunk must be above 0", FIX)
    if args.margin < 0:
        raise WhisperKVError("--margin must be at least 0 frames", FIX)
    return {"policy": args.policy, "min_chunk_s": args.min_chunk, "margin_frames": args.margin}


def policy_summary(config) -> dict:
    """The JSON document's fields on the policy that ran and its pass interval (and margin, for alignatt)."""
    out = {"policy": config.policy, "min_chunk_s": config.min_chunk_s}
    if config.policy == "alignatt":
        out["margin_frames"] = config.margin_frames
    return out
