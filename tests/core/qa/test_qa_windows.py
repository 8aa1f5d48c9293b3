"""`qa --window`: each clip is decoded in the encoder window the rule picks for it among those the decoder's runner
serves (its hello's `windows`), the clip's result recording the window its encoded event names; a clip the asked
length cannot hold, or a length the runner lacks, fails that clip alone with one line, and the suite goes on."""
from dataclasses import replace
from types import SimpleNamespace

from core.decode.window_choice import WindowRule
from core.qa.run import run_suite
from core.qa.suite import load_suite
from tests.conftest import AUDIO
from tests.core.qa.qa_helpers import fake_events, write


class Decoder:
    """A decode answering "hello world" that records the window each request asked for."""

    def __init__(self, windows):
        self.info, self.asked = SimpleNamespace(windows=windows), []

    def __call__(self, mels, options, n_frames):
        self.asked.append(options.window_s)
        encoded, *rest = fake_events([1, 2], " hello world", "eot")
        return [replace(encoded, window_s=options.window_s), *rest]     # as a runner names the window it ran


def suite(tmp_path):
    """The 1.4 s hello-world clip, then the 30.3 s congrats one (two requests: the seek loop's windows)."""
    files = (("short", "en_asterisk_hello-world.wav"), ("long", "en_asterisk_demo-congrats.wav"))
    clips = "".join(f'[[clip]]\nname = "{n}"\naudio = "{AUDIO / f}"\nlanguage = "en"\nreference = "hello world"\n'
                    'max_wer = 0.5\n' for n, f in files)
    return load_suite(write(tmp_path, clips))


def test_auto_picks_each_clips_window_among_the_runners(tmp_path):
    decode = Decoder((10, 20, 30))
    result = run_suite(suite(tmp_path), decode, window=WindowRule("auto"))
    assert decode.asked == [10, 30, 30] and [r.window_s for r in result.results] == [10, 30]
    floor = Decoder((10, 20, 30))
    run_suite(suite(tmp_path), floor, window=WindowRule("auto", window_floor_s=15))
    assert floor.asked == [20, 30, 30]
    older = Decoder(None)                    # a runner whose hello lists no windows: 30 s
    run_suite(suite(tmp_path), older, window=WindowRule("auto"))
    assert older.asked == [30, 30, 30]
    assert run_suite(suite(tmp_path), Decoder((10, 20, 30))).results[0].window_s == 30     # the default


def test_a_clip_the_window_cannot_hold_fails_alone(tmp_path):
    decode = Decoder((10, 20, 30))
    result = run_suite(suite(tmp_path), decode, window=WindowRule("10"))
    assert decode.asked == [10]                                 # the long clip is never sent
    short, long = result.results
    assert short.passed and short.window_s == 10
    assert not long.passed and long.error.startswith("the audio is 30.") and "longer than a 10 s window" in long.error
    lacking = run_suite(suite(tmp_path), Decoder(None), window=WindowRule("20")).results
    assert all(not r.passed and "serves 30 s windows, not 20 s" in r.error for r in lacking)
