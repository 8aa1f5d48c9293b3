"""Fake decodes and small suites for the QA tests (a module with a unique name, so it never shadows another)."""
from __future__ import annotations

from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.transcript import Transcript
from core.qa.farm import DeviceRun, QAReport
from core.qa.run import SuiteResult, score
from core.qa.suite import load_suite
from tests.conftest import AUDIO, special_tokens

EOT_TOKEN = special_tokens().eot
CLIP = f'[[clip]]\naudio = "{AUDIO / "test_en.wav"}"\nlanguage = "en"\nreference = "ask not"\n'


def write(tmp_path, text, name="suite.toml"):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path / name


def fake_events(tokens, text, reason, eot_p=0.9, ms=10.0):
    """One window's events: encoded, a token per step (step i takes ms + i), done."""
    out = [EncodedEvent(window=0, ms=100.0, language="en")]
    for i, tok in enumerate(tokens + ([EOT_TOKEN] if reason == "eot" else [])):
        out.append(TokenEvent(window=0, step=i, token=tok, text="", logprob=-0.1,
                              eot_prob=eot_p if tok == EOT_TOKEN else 0.01, top=[(tok, -0.1)], cache_len=4 + i,
                              cache_bytes=0, ms=ms + i, is_special=tok == EOT_TOKEN))
    out.append(DoneEvent(window=0, reason=reason, tokens=tokens, text=text, ms_total=500.0, language="en"))
    return out


def fake_transcript(tokens, text, reason, eot_p=0.9, ms=10.0):
    t = Transcript()
    for ev in fake_events(tokens, text, reason, eot_p, ms):
        t.add(ev)
    return t


def hello_suite(tmp_path, names=("a",), max_wer=0.5):
    """A suite of short clips (the 1.4 s hello-world recording), scored against "hello world"."""
    clips = "".join(f'[[clip]]\nname = "{n}"\naudio = "{AUDIO / "en_asterisk_hello-world.wav"}"\nlanguage = "en"\n'
                    f'reference = "hello world"\nmax_wer = {max_wer}\n' for n in names)
    return load_suite(write(tmp_path, clips))


def result(clip, tokens=(1, 2), text="hello world", reason="eot", ms=10.0):
    """A ClipResult of `clip` as if a device had decoded `text` in `tokens`."""
    return score(clip, fake_transcript(list(tokens), text, reason, ms=ms), wall_ms=100, duration_s=1.0)


def decoder(model, encoder_cache):
    """A QA decode on the in-process `model` (the session's weights on the NumPy or ONNX Runtime backend)."""
    return lambda mels, options, n_frames: model.transcribe(mels, options, encoder_cache=encoder_cache,
                                                            n_frames=n_frames)


def two_devices(tmp_path, error=""):
    """local decoded both clips; the board decoded `a` differently and slower, and (with error) died before `b`."""
    a, b = hello_suite(tmp_path, names=("a", "b")).clips
    local = DeviceRun("local", SuiteResult("s", "s.toml", [result(a), result(b)], {"device": "local"}))
    board_clips = [result(a, tokens=(1, 3), text="hello word", ms=20.0)] + ([] if error else [result(b)])
    board = DeviceRun("ssh://root@board", SuiteResult("s", "s.toml", board_clips, {"device": "ssh://root@board"}),
                      error=error)
    return QAReport("s", "s.toml", [local, board], meta={"cache": "on"})
