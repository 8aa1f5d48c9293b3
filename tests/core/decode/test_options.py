"""What a decode of a given length runs with, and the seek-only timestamps on the wire."""
import pytest

from core.decode.options import DecodeOptions, OptionsError, for_length
from core.model.mel import N_FRAMES


def test_one_window_keeps_the_options_asked_for():
    options = DecodeOptions(language="en")
    assert for_length(options, N_FRAMES) is options and for_length(options, 1) is options
    assert not options.timestamp_tokens


def test_long_audio_samples_timestamp_tokens_only_to_seek():
    long = for_length(DecodeOptions(language="en", max_tokens=50), N_FRAMES + 1)
    assert long.seek_timestamps and not long.timestamps and long.timestamp_tokens
    assert (long.language, long.max_tokens) == ("en", 50)
    shown = DecodeOptions(timestamps=True)
    assert for_length(shown, 10 * N_FRAMES) is shown and not shown.seek_timestamps   # already seeks, and shows


def test_seek_timestamps_travel_only_when_set_and_are_checked():
    assert "seek_timestamps" not in DecodeOptions().to_wire()
    wire = DecodeOptions(seek_timestamps=True).to_wire()
    assert wire["seek_timestamps"] is True and DecodeOptions.from_wire(wire).seek_timestamps
    with pytest.raises(OptionsError, match="seek_timestamps"):
        DecodeOptions.from_wire({"seek_timestamps": "yes"})


def test_a_draft_travels_only_when_set_and_is_checked_like_a_prompt():
    assert "draft" not in DecodeOptions().to_wire()
    wire = DecodeOptions(draft=[50, 60]).to_wire()
    assert wire["draft"] == [50, 60] and DecodeOptions.from_wire(wire).draft == [50, 60]
    with pytest.raises(OptionsError, match="draft must be a list of token ids"):
        DecodeOptions.from_wire({"draft": [1, 99999]})
    with pytest.raises(OptionsError, match="draft has 224 tokens"):
        DecodeOptions.from_wire({"draft": [1] * 224})
