"""`whisperkv transcribe` as a user runs it: a real process, real weights, real clips."""
import json
import subprocess
import sys

import numpy as np
import soundfile as sf

from core.qa.scoring import error_rate
from tests.conftest import AUDIO, ROOT


def whisperkv(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_chinese_clip_prints_the_sentence():
    r = whisperkv("transcribe", str(AUDIO / "test_zh.wav"), "--language", "zh")
    assert r.returncode == 0, r.stderr
    assert "甚至出现交易几乎停" in r.stdout and "的情况" in r.stdout
    assert "stop: eot" in r.stderr


def test_json_carries_every_step():
    r = whisperkv("transcribe", str(AUDIO / "test_en.wav"), "--json", "--max-tokens", "6")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    for key in ("text", "language", "stop_reason", "encoder_ms", "tokens", "steps", "total_ms"):
        assert key in doc
    assert doc["language"] == "en" and doc["stop_reason"] == "max_tokens" and len(doc["tokens"]) == 6
    assert doc["total_ms"] > doc["encoder_ms"] > 0
    step = doc["steps"][0]
    assert set(step) >= {"step", "token", "text", "logprob", "eot_prob", "top", "cache_len", "cache_bytes", "ms"}
    assert [s["step"] for s in doc["steps"]] == list(range(6))


def one_clear_line(r):
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("whisperkv: error:"), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


def test_errors_exit_non_zero_with_one_line(tmp_path):
    assert "not found" in one_clear_line(whisperkv("transcribe", str(tmp_path / "missing.wav")))
    (tmp_path / "corrupt.wav").write_bytes(b"RIFF" + b"\x00" * 100)
    assert "unreadable" in one_clear_line(whisperkv("transcribe", str(tmp_path / "corrupt.wav")))
    sf.write(tmp_path / "zero.wav", np.zeros(0, np.float32), 16000)
    one_clear_line(whisperkv("transcribe", str(tmp_path / "zero.wav")))
    assert "--model" in one_clear_line(whisperkv("transcribe", str(AUDIO / "test_en.wav"), "--model", str(tmp_path)))
    assert "unknown language" in one_clear_line(whisperkv("transcribe", str(AUDIO / "test_en.wav"), "--language", "xx"))


def test_a_phone_recording_in_m4a_prints_the_sentence(tmp_path):
    """AAC in an .m4a, as phones write it (made from test_en.wav): libsndfile cannot read it, FFmpeg can."""
    from tests.audio_files import write_as

    r = whisperkv("transcribe", str(write_as(AUDIO / "test_en.wav", tmp_path / "jfk.m4a")))
    assert r.returncode == 0, r.stderr
    assert "ask not what your country can do for you" in r.stdout


def test_silence_ends_and_says_how(tmp_path):
    sf.write(tmp_path / "silence.wav", np.zeros(16000 * 4, np.float32), 16000)
    r = whisperkv("transcribe", str(tmp_path / "silence.wav"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["stop_reason"] in ("eot", "max_tokens") and doc["no_speech"] is True and doc["text"] == ""


def test_tflite_bundle_on_the_local_runner_prints_the_numpy_tokens(tmp_path):
    """The issue's check: `export --format tflite`, then transcribe with --backend tflite vs --backend numpy."""
    bundle = tmp_path / "b"
    r = whisperkv("export", "--out", str(bundle), "--format", "tflite")
    assert r.returncode == 0, r.stderr
    assert not list(bundle.glob("*.onnx")) and (bundle / "decoder_step.tflite").is_file()
    docs = {}
    for backend in ("tflite", "numpy"):
        r = whisperkv("transcribe", str(AUDIO / "test_zh.wav"), "--backend", backend, "--model", str(bundle), "--json")
        assert r.returncode == 0, r.stderr
        docs[backend] = json.loads(r.stdout)
    assert docs["tflite"]["backend"] == "tflite" and docs["numpy"]["backend"] == "numpy"
    assert docs["tflite"]["tokens"] == docs["numpy"]["tokens"] and len(docs["numpy"]["tokens"]) > 5


def test_hostile_audio_gets_one_line_naming_it_and_exit_2(tmp_path):
    (tmp_path / "clips").mkdir()
    r = whisperkv("transcribe", str(tmp_path / "clips"))
    assert "is a directory, not an audio file" in one_clear_line(r) and r.returncode == 2
    for bad in (np.nan, np.inf):
        audio = np.zeros(22050, np.float32)
        audio[777] = bad
        sf.write(tmp_path / "bad.wav", audio, 22050, subtype="FLOAT")
        r = whisperkv("transcribe", str(tmp_path / "bad.wav"))
        assert "contains NaN/Inf samples" in one_clear_line(r) and r.returncode == 2


def test_a_clip_shorter_than_one_mel_frame_is_transcribed_as_a_padded_clip(tmp_path):
    sf.write(tmp_path / "ten.wav", np.full(10, 0.1, np.float32), 16000)
    r = whisperkv("transcribe", str(tmp_path / "ten.wav"), "--json", "--max-tokens", "4")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    doc = json.loads(r.stdout)
    assert doc["stop_reason"] in ("eot", "max_tokens") and doc["language"]


def test_long_audio_keeps_the_speech_after_a_pause_without_timestamps(tmp_path, references):
    """JFK (11 s), 15 s of silence, then the LibriVox sentence from 26 s to 33 s. Seeking by 30 s, the first
    window's decoder stopped at the pause and its next window began at 30 s: "And Mr. John Dashwood had then
    leisure to consider how" was lost. Long audio now seeks to the last complete segment (timestamp tokens,
    as openai-whisper), and the output stays plain text."""
    jfk, austen = "test_en.wav", "en_librivox_sense_sensibility_0870.wav"
    audio = np.concatenate([sf.read(AUDIO / jfk, dtype="float32")[0], np.zeros(15 * 16000, np.float32),
                            sf.read(AUDIO / austen, dtype="float32")[0]])
    sf.write(tmp_path / "pause.wav", audio, 16000)
    r = whisperkv("transcribe", str(tmp_path / "pause.wav"), "--language", "en")
    assert r.returncode == 0, r.stderr
    assert "Dashwood" in r.stdout and "leisure" in r.stdout, r.stdout
    assert error_rate(references[jfk]["reference"] + " " + references[austen]["reference"], r.stdout) <= 0.1
    assert len(r.stdout.splitlines()) == 1 and "-->" not in r.stdout      # plain text, no timed segments


def two_windows(tmp_path) -> str:
    """JFK (11 s), 15 s of silence, the LibriVox sentence: two windows."""
    audio = np.concatenate([sf.read(AUDIO / "test_en.wav", dtype="float32")[0], np.zeros(15 * 16000, np.float32),
                            sf.read(AUDIO / "en_librivox_sense_sensibility_0870.wav", dtype="float32")[0]])
    sf.write(tmp_path / "two.wav", audio, 16000)
    return str(tmp_path / "two.wav")


def dying_runner_url(tmp_path) -> str:
    """A local device whose runner is killed right after window 1's step-3 token (tests/cli/dying_runner.py)."""
    wrapper = tmp_path / "python-that-dies"
    wrapper.write_text(f"#!/bin/sh\nDIE_ENCODED=2 DIE_STEP=3 exec {sys.executable} "
                       f"{ROOT / 'tests' / 'cli' / 'dying_runner.py'} \"$@\"\n")
    wrapper.chmod(0o755)
    return f"local?python={wrapper}"


def test_a_runner_that_dies_half_way_leaves_the_text_decoded_so_far(tmp_path):
    r = whisperkv("transcribe", two_windows(tmp_path), "--language", "en", "--device", dying_runner_url(tmp_path))
    assert r.returncode == 2
    assert "ask what you can do for your country" in r.stdout, r.stdout     # window 0, and window 1's tokens
    assert len(r.stdout.split()) > 22
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("whisperkv: error:")]
    assert len(errors) == 1 and "closed" in errors[0] and "Traceback" not in r.stderr


def test_json_of_a_decode_that_fails_half_way_has_everything_decoded_and_the_error(tmp_path):
    r = whisperkv("transcribe", two_windows(tmp_path), "--language", "en", "--json",
                  "--device", dying_runner_url(tmp_path))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    doc = json.loads(r.stdout)
    assert doc["complete"] is False and doc["error"]["code"] == "link_lost" and doc["error"]["fix"]
    assert "ask what you can do for your country" in doc["text"]
    assert [s["window"] for s in doc["steps"]].count(1) == 4     # window 1's steps 0-3 arrived
    assert doc["windows"][0]["reason"] and not doc["windows"][1]["reason"]


def test_window_auto_encodes_a_short_clip_in_a_sized_window_and_says_so():
    """Opt-in (docs/benchmarks.md, "Encoder windows"): test_zh's 4.2 s in the 10 s window, the same sentence."""
    r = whisperkv("transcribe", str(AUDIO / "test_zh.wav"), "--window", "auto", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["window_s"] == 10 and "甚至出现交易几乎停" in doc["text"] and doc["stop_reason"] == "eot"
    assert doc["windows"][0]["window_s"] == 10            # what the runner's encoded event says it encoded
    r = whisperkv("transcribe", str(AUDIO / "test_zh.wav"), "--window", "auto", "--window-floor", "15")
    assert r.returncode == 0 and "| window 20 s |" in r.stderr.splitlines()[-1], r.stderr
    line = one_clear_line(whisperkv("transcribe", str(AUDIO / "test_en.wav"), "--window", "10"))
    assert "longer than a 10 s window" in line and "--window auto or 30" in line
