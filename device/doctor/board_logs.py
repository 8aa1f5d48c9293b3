"""What `whisperkv doctor --out DIR` keeps beside the report for a bug: the ladder's runner's stderr (its last lines)
and, on Android, the Neuron lines of `logcat -d` (the runtime and the APU driver log there, not on the runner's
stderr: lines naming neuron, apusys or mdla, in any case). Read after the climb, before the ladder closes the
runner and the link; a link that fails to answer is one line in the file, never a failed report."""
from __future__ import annotations

import re

from core.errors import WhisperKVError
from device.doctor.checkup import Checkup

NEURON_LINES = re.compile(r"neuron|apusys|mdla", re.IGNORECASE)
RUNNER_LOG, LOGCAT = "runner-stderr.txt", "logcat-neuron.txt"


def neuron_lines(logcat: str) -> str:
    """The lines of a logcat dump that name the Neuron runtime or the APU."""
    return "".join(line for line in logcat.splitlines(keepends=True) if NEURON_LINES.search(line))


def board_logs(c: Checkup) -> dict[str, str]:
    """File name -> its text: the runner's stderr when a runner ran, logcat's Neuron lines on Android."""
    client = getattr(c.decoder, "client", None)
    logs = {RUNNER_LOG: client.stderr_tail() + "\n"} if client is not None else {}
    if c.board.get("android") and c.transport is not None:
        try:
            res = c.transport.run(["logcat", "-d"], timeout=120)
            said = res.text if res.rc == 0 else f"`logcat -d` failed (exit {res.rc}): " \
                f"{res.stderr.decode(errors='replace').strip()}\n"
            logs[LOGCAT] = neuron_lines(said) if res.rc == 0 else said
        except WhisperKVError as exc:
            logs[LOGCAT] = f"`logcat -d` could not run: {exc}\n"
    return logs
