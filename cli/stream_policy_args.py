"""`whisperkv stream`'s choice of streaming policy: `--policy` and a flag per policy parameter, each with its help,
generated from the policy tables (POLICIES and PARAMS in core/stream/policies.py)."""
from __future__ import annotations

from core.stream.policies import DEFAULT_POLICY, PARAMS, POLICIES, policy_help


def add_policy_args(p) -> None:
    p.add_argument("--policy", choices=list(POLICIES), default=DEFAULT_POLICY, help=policy_help())
    for param in PARAMS.values():
        p.add_argument(param.flag, dest=param.name, type=param.kind, default=None,
                       metavar=param.unit.upper(), help=param.help)


def policy_options(args) -> dict:
    """The StreamConfig fields the arguments set (a parameter left out takes its default); bad values are one
    clear line (StreamConfig checks them against their rows)."""
    return {"policy": args.policy,
            "params": {name: getattr(args, name) for name in PARAMS if getattr(args, name) is not None}}
