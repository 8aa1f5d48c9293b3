"""`whisperkv stream` as a user runs it: a file as fast as possible, a file in real time, the microphone
(through a stand-in microphone: there is no sound card here), and bad input."""
import json
import subprocess
import sys
import threading

import numpy as np
import soundfile as sf

from cli.main import main
from core.model.audio import load_audio
from core.qa.scoring import normalize
from core.stream.feed import realtime_blocks
from tests.conftest import AUDIO, ROOT

SR = 16000


def whisperkv(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "cli", *args], check=False, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_json_document_has_text_commits_and_passes():
    r = whisperkv("stream", str(AUDIO / "en_arctic_slt_a0009.wav"), "--json", "--language", "en")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "he turned sharply and faced gregson across the table" in normalize(doc["text"])
    assert len(doc["commits"]) > 1 and len(doc["passes"]) > 1
    for c in doc["commits"]:
        assert set(c) >= {"text", "start_s", "end_s", "emitted_s"} and c["start_s"] <= c["end_s"] <= c["emitted_s"]
    for p in doc["passes"]:
        assert set(p) >= {"audio_s", "encoder_ms", "tokens", "decode_ms", "cache_len"}
        assert p["cache_len"] >= p["tokens"] + 4
    assert doc["text"] == "".join(c["text"] for c in doc["commits"]).strip()
    assert doc["compute_per_audio_s"] > 0 and doc["backend"] and not doc["realtime"]


def test_realtime_prints_the_text_as_it_is_confirmed():
    proc = subprocess.Popen([sys.executable, "-m", "cli", "stream", str(AUDIO / "en_arctic_slt_a0009.wav"),
                             "--realtime", "--language", "en"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "turned sharply" in out.lower() and "gregson" in out.lower()
    assert "commits" in err and "lag median" in err


def test_a_silent_file_prints_no_text(tmp_path):
    sf.write(tmp_path / "silence.wav", np.zeros(SR * 5, np.float32), SR)
    r = whisperkv("stream", str(tmp_path / "silence.wav"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["text"] == "" and doc["commits"] == [] and doc["passes"] == []


def one_clear_line(r):
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("whisperkv: error:"), r.stderr
    return lines[0]


def test_bad_input_is_one_clear_line(tmp_path):
    assert "--mic" in one_clear_line(whisperkv("stream"))
    assert "one of them" in one_clear_line(whisperkv("stream", str(AUDIO / "test_en.wav"), "--mic"))
    assert "not found" in one_clear_line(whisperkv("stream", str(tmp_path / "missing.wav")))
    assert "unknown language" in one_clear_line(whisperkv("stream", str(AUDIO / "test_en.wav"), "--language", "xx"))


class StandInMicrophone:
    """Stand-in for sounddevice.InputStream (no sound card here): plays a file into the input callback from
    its own thread, one block at a time at real-time pace, then goes inactive as an unplugged device does."""

    def __init__(self, audio, **kw):
        self.audio, self.callback, self.blocksize = audio, kw["callback"], kw["blocksize"]
        self.active = False

    def start(self):
        self.active = True
        threading.Thread(target=self._play, daemon=True).start()

    def _play(self):
        for block in realtime_blocks(self.audio, self.blocksize / SR):
            if not self.active:
                return
            self.callback(block[:, None], len(block), None, None)
        self.active = False

    def stop(self):
        self.active = False

    def close(self):
        pass


def test_the_microphone_path_through_a_stand_in_microphone(monkeypatch, capsys):
    gap = np.zeros(SR // 2, np.float32)
    audio = np.concatenate([gap, load_audio(AUDIO / "en_arctic_slt_a0009.wav"), gap])
    opened = []

    def factory(**kw):
        assert kw["samplerate"] == SR and kw["channels"] == 1
        opened.append(StandInMicrophone(audio, **kw))
        return opened[-1]

    monkeypatch.setattr("core.stream.mic.sounddevice_stream", factory)
    assert main(["stream", "--mic", "--json", "--language", "en"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(opened) == 1 and doc["realtime"]
    assert "turned sharply" in doc["text"].lower()
    assert doc["audio_s"] >= len(audio) / SR - 0.2
