"""What a decode of a given length runs with, and the seek-only timestamps on the wire."""
import pytest

from core.decode.options import WHISPER, DecodeOptions, OptionsError, for_length
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


def wire_of(fields: dict) -> dict:
    """The header a client would send for these fields (the cache travels as "on"/"off")."""
    return {k: ("on" if v else "off") if k == "cache" else v for k, v in fields.items()}


BAD = [({"task": "dictate"}, "task 'dictate'"), ({"max_tokens": 0}, "max_tokens 0"),
       ({"max_tokens": 449}, "max_tokens 449"), ({"max_tokens": "5"}, "max_tokens '5'"),
       ({"max_tokens": True}, "max_tokens True"), ({"top_k": 101}, "top_k 101"), ({"top_k": 2.0}, "top_k 2.0"),
       ({"timestamps": "yes"}, "timestamps 'yes'"), ({"attention": 1}, "attention 1"),
       ({"temperature_fallback": None}, "temperature_fallback None"), ({"seed": -1}, "seed -1"),
       ({"language": 5}, "unknown language 5"), ({"prompt": [1, 99999]}, "prompt must be a list"),
       ({"draft": [1] * 224}, "draft has 224 tokens"),
       ({"attention": True, "cache": False}, "attention needs cache on"),
       ({"word_timestamps": True, "cache": False}, "word_timestamps needs cache on")]


MODEL_BOUNDS = {"max_tokens 449", "prompt must be a list", "draft has 224 tokens"}   # known with a model only


@pytest.mark.parametrize("bad, says", BAD, ids=[next(iter(b)) + "=" + repr(b[next(iter(b))]) for b, _ in BAD])
def test_the_constructor_and_the_wire_reader_apply_the_same_rules(bad, says):
    with pytest.raises(OptionsError) as built:
        DecodeOptions(**bad, bounds=WHISPER)
    with pytest.raises(OptionsError) as read:
        DecodeOptions.from_wire(wire_of(bad))
    assert says in str(built.value) and str(built.value) == str(read.value)
    if says not in MODEL_BOUNDS:      # without a model's bounds, the same refusal naming the same field
        with pytest.raises(OptionsError, match=says.split()[0]):
            DecodeOptions(**bad)


def test_without_a_model_only_its_bounds_go_unchecked():
    """An in-process decode may ask for more tokens than its cache holds, and stop at cache_full."""
    assert DecodeOptions(max_tokens=1000).max_tokens == 1000
    assert DecodeOptions(prompt=[99999]).prompt == [99999] and len(DecodeOptions(draft=[1] * 224).draft) == 224
    with pytest.raises(OptionsError, match="max_tokens 0 is not an integer of at least 1"):
        DecodeOptions(max_tokens=0)
    with pytest.raises(OptionsError, match="prompt must be a list of token ids"):
        DecodeOptions(prompt=[-1])


@pytest.mark.parametrize("good", [{}, {"language": "en", "max_tokens": 448, "top_k": 100}, {"cache": False},
                                  {"word_timestamps": True, "seed": 7, "temperature_fallback": True},
                                  {"prompt": [1, 2], "draft": [3]}])
def test_both_doors_accept_the_same_options(good):
    assert DecodeOptions.from_wire(wire_of(good)) == DecodeOptions(**good)
    assert DecodeOptions.from_wire(DecodeOptions(**good).to_wire()) == DecodeOptions(**good)


def test_the_model_s_bounds_narrow_the_wire_reader():
    with pytest.raises(OptionsError, match="unknown language 'xx'"):
        DecodeOptions.from_wire({"language": "xx"}, languages={"en": 0})
    with pytest.raises(OptionsError, match=r"max_tokens 100 is not an integer in 1\.\.64"):
        DecodeOptions.from_wire({"max_tokens": 100}, max_len=64)


def test_options_that_break_a_rule_cannot_be_made_by_replace_either():
    from dataclasses import replace

    with pytest.raises(OptionsError, match="attention needs cache on"):
        replace(DecodeOptions(attention=True), cache=False)
    assert not DecodeOptions(cache=False).with_attention().attention
    assert DecodeOptions().with_attention().attention and not DecodeOptions().with_attention(False).attention


def test_a_window_length_travels_only_when_shorter_than_30_s_and_is_checked():
    assert "window_s" not in DecodeOptions().to_wire() and DecodeOptions().window_s == 30
    wire = DecodeOptions(window_s=10).to_wire()
    assert wire["window_s"] == 10 and DecodeOptions.from_wire(wire, windows=(10, 20, 30)).window_s == 10
    assert DecodeOptions.from_wire({}, windows=(30,)).window_s == 30          # an older host asks for nothing
    with pytest.raises(OptionsError, match=r"^window_s 10 is not a window this runner serves: 30 \(seconds\)$"):
        DecodeOptions.from_wire(wire, windows=(30,))                          # a backend without shorter ones
    for bad in (15, "10", 10.0, True):
        with pytest.raises(OptionsError, match="window_s .* is not a window this runner serves: 10, 20, 30"):
            DecodeOptions(window_s=bad)
    assert DecodeOptions(window_s=20, word_timestamps=True).window_s == 20     # rows of the window's positions
    assert DecodeOptions(window_s=30, attention=True).attention
