"""`whisperkv`: one entry point, one module per subcommand."""
from __future__ import annotations

import argparse
import importlib
import sys

from core.errors import WhisperKVError
from device.spec.runtime_config import quiet_blas_threads

quiet_blas_threads()                # before a command's module loads NumPy

# Each command and the module that registers it, in --help order. Only the asked-for command's module is
# imported: `transcribe` then loads no QA, export or GUI code (less start-up time and resident memory
# beside the runner, docs/benchmarks-history.md "Whole process").
COMMANDS = {"transcribe": "transcribe", "stream": "stream_cmd", "gui": "gui_cmd", "deploy": "device_cmds",
            "device-info": "device_cmds", "export": "export_cmds", "check-dla": "export_cmds",
            "compile": "compile_cmd", "qa": "qa_cmd", "doctor": "doctor_cmd"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command, or only `command` (a known name) and whatever else its module registers."""
    parser = argparse.ArgumentParser(prog="whisperkv", description="Whisper base with a KV-cached decoder, "
                                     "locally or on an MT8371 board.")
    subs = parser.add_subparsers(dest="command", required=True)
    names = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for name in names:
        importlib.import_module(f"cli.{name}").register(subs)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
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
