"""The GUI's TXT export is the text `whisperkv transcribe` gives, on a clip where they used to differ:
en_asterisk_demo-congrats.wav (30.3 s) once ended in a 0.28 s window that Whisper's no-speech rule left out.
Long audio now seeks by timestamp tokens, so both decode a second window from the last complete segment of
the first one, and both must agree on where it starts and what is shown."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.app.conftest import (
    make_window,
    open_and_wait,
    settings_file,
    transcribe_and_wait,
)
from tests.conftest import AUDIO, ROOT

CLIP = AUDIO / "en_asterisk_demo-congrats.wav"


def test_txt_export_equals_the_cli_text(qapp, tmp_path):
    printed = subprocess.run([sys.executable, "-m", "cli", "transcribe", str(CLIP)], cwd=ROOT,
                             capture_output=True, text=True, timeout=600)
    assert printed.returncode == 0, printed.stderr
    cli = subprocess.run([sys.executable, "-m", "cli", "transcribe", str(CLIP), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert cli.returncode == 0, cli.stderr
    doc = json.loads(cli.stdout)
    assert printed.stdout == doc["text"] + "\n"      # what it prints is what --json says
    window = make_window(settings_file(tmp_path / "app.ini"))
    try:
        open_and_wait(window, CLIP.name)
        # The CLI's defaults: auto language, transcribe, cache on, 224 tokens, no timestamps.
        run = transcribe_and_wait(window, language=None, task="transcribe", cache=True, max_tokens=224,
                                  timestamps=False, suppress_eot=False)
        assert run.error is None and run.stop_reason == "eot"
        # The same windows, from the same offsets, with the same verdicts of the no-speech rule.
        assert [(w["offset_s"], w["silent"]) for w in doc["windows"]] == \
            [(w.offset_s, w.silent) for w in run.transcript.windows]
        assert len(doc["windows"]) == 2 and 0 < doc["windows"][1]["offset_s"] < 30
        assert not doc["segments"] and not run.transcript.segments     # timestamps not asked for: plain text
        window.exports.export("txt", str(tmp_path / "run.txt"))
        assert (tmp_path / "run.txt").read_text(encoding="utf-8") == printed.stdout
    finally:
        window.close()
