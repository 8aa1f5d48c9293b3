"""Which encoder window a decode asks for: --window auto's rule (the smallest window holding the audio plus the
margin, never under the floor), a length named, and what does not fit, each as one line."""
import pytest

from core.decode.options import OptionsError
from core.decode.window_choice import DEFAULTS, WINDOW_PARAMS, pass_window, sized_window, sized_windows, window_for
from core.model.dims import WINDOWS_S


def test_the_rule_takes_the_smallest_window_holding_the_audio_and_the_margin_over_the_floor():
    assert DEFAULTS == {"window_floor_s": 10.0, "window_margin_s": 2.0}
    assert len({p.flag for p in WINDOW_PARAMS}) == 2
    assert sized_window(140, WINDOWS_S) == 10             # 1.4 s: the floor
    assert sized_window(800, WINDOWS_S) == 10             # 8 s + 2 s fills 10 s exactly
    assert sized_window(801, WINDOWS_S) == 20             # past the margin
    assert sized_window(1100, WINDOWS_S) == 20 and sized_window(1900, WINDOWS_S) == 30
    assert sized_window(140, WINDOWS_S, window_floor_s=15) == 20
    assert sized_window(950, WINDOWS_S, window_margin_s=0) == 10
    assert sized_window(140, (30,)) == 30                 # a runner without shorter windows
    # What the rule can return (a live stream's warm-up opens these): every length it picks, for any audio.
    for floor in (0.0, 10.0, 15.0, 30.0):
        reachable = sized_windows(WINDOWS_S, floor)
        assert {sized_window(n, WINDOWS_S, floor) for n in range(0, 3001, 50)} == set(reachable)
    assert sized_windows(WINDOWS_S, 15.0) == (20, 30) and sized_windows((30,)) == (30,)


def test_a_stream_pass_hears_whisper_s_window_until_the_language_is_known_and_20_s_under_2_s_of_buffer():
    assert pass_window(140, WINDOWS_S, False) == 30 and pass_window(900, WINDOWS_S, False) == 30
    assert pass_window(140, WINDOWS_S, True) == 20 and pass_window(199, WINDOWS_S, True) == 20
    assert pass_window(200, WINDOWS_S, True) == 10 and pass_window(801, WINDOWS_S, True) == 20
    assert pass_window(140, WINDOWS_S, True, window_floor_s=30) == 30 and pass_window(140, (30,), True) == 30
    for floor in (0.0, 10.0, 15.0, 30.0):          # the warm-up opens every window a pass may ask for
        reachable = {pass_window(n, WINDOWS_S, known, floor) for n in range(0, 3001, 50) for known in (True, False)}
        assert reachable <= set(sized_windows(WINDOWS_S, floor))


def test_auto_a_length_and_what_does_not_fit():
    assert window_for("auto", 420, WINDOWS_S) == 10 and window_for("auto", 420, (30,)) == 30
    assert window_for("auto", 3000 * 3, WINDOWS_S) == 30       # long audio: the seek loop's 30 s windows
    assert window_for("30", 3000 * 3, WINDOWS_S) == 30 and window_for("20", 1100, WINDOWS_S) == 20
    with pytest.raises(OptionsError, match=r"^the audio is 11\.0 s, longer than a 10 s window$"):
        window_for("10", 1100, WINDOWS_S)
    with pytest.raises(OptionsError, match=r"the runner serves 30 s windows, not 10 s"):
        window_for("10", 420, (30,))
    with pytest.raises(OptionsError, match="window 'short' is not auto nor a length in seconds"):
        window_for("short", 420, WINDOWS_S)
    with pytest.raises(OptionsError, match="--window-margin must be at least 0 s"):
        window_for("auto", 420, WINDOWS_S, window_margin_s=-1)
