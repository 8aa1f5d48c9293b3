"""`whisperkv`: one entry point, one module per subcommand."""
from __future__ import annotations

import argparse
import sys

from cli import compile_cmd, device_cmds, export_cmds, gui_cmd, qa_cmd, stream_cmd, transcribe
from core.errors import WhisperKVError

SUBCOMMANDS = [transcribe, stream_cmd, gui_cmd, device_cmds, export_cmds, compile_cmd, qa_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="whisperkv", description="Whisper base with a KV-cached decoder, "
                                     "locally or on an MT8371 board.")
    subs = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.register(subs)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args) or 0
    except WhisperKVError as exc:
        print(f"whisperkv: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("whisperkv: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
