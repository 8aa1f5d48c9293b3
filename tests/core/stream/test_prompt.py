"""The prompt: committed text that left the buffer, within Whisper's budget, checked on the wire, and fed
to the decoder as <|startofprev|> + tokens before the SOT sequence."""
import numpy as np
import pytest

from core.decode.decoding import decode_window
from core.decode.events import DoneEvent, TokenEvent
from core.decode.options import DecodeOptions, OptionsError, prompt_budget
from core.decode.word_timing import Word
from core.stream.prompt import prompt_text, prompt_tokens, repeats_prompt


def test_prompt_text_is_the_committed_words_before_the_buffer_at_most_n_characters():
    committed = [Word(f" word{i}", i * 0.5, i * 0.5 + 0.4, 0.9) for i in range(100)]
    text = prompt_text(committed, buffer_start_s=20.0, max_chars=60)
    assert len(text) <= 60 and text.endswith("word39")      # word39 ends at 19.9 s; word40 is still heard
    assert text.split()[0] != "word0"
    assert prompt_text(committed, buffer_start_s=0.0) == ""


def said(text: str) -> list[Word]:
    return [Word(" " + w, i * 0.3, i * 0.3 + 0.2, 0.9) for i, w in enumerate(text.split())]


@pytest.mark.parametrize("hypothesis, copied", [
    ("She opened the window.", True),                              # the prompt's last sentence again
    ("opened the window, listened to the rain", True),             # its last three words, then new ones
    ("the window. Listened to the rain", False),                   # two words: a chance match
    ("Listened to the rain for a while.", False),                  # new speech
    ("", False),
])
def test_a_hypothesis_that_begins_with_the_prompt_s_last_words_repeats_it(hypothesis, copied):
    prompt = "for the new library. She opened the window."
    assert repeats_prompt(said(hypothesis), prompt) is copied
    assert repeats_prompt(said(hypothesis), "") is False


def test_a_prompt_shorter_than_three_words_is_copied_when_all_of_it_comes_again():
    assert repeats_prompt(said("Hello there. How are you?"), "Hello there.")
    assert not repeats_prompt(said("there. How are you?"), "Hello there.")


def test_prompt_tokens_keep_the_last_ones_within_the_budget(model):
    tok = model.tokenizer
    assert prompt_tokens(tok, "   ") == []
    ids = prompt_tokens(tok, "hello " * 400)
    assert len(ids) == prompt_budget(448) == 223
    assert tok.decode(ids).strip().startswith("hello")


def test_wire_checks_the_prompt():
    ok = DecodeOptions.from_wire({"prompt": [1, 2, 3]})
    assert ok.prompt == [1, 2, 3] and ok.to_wire()["prompt"] == [1, 2, 3]
    assert "prompt" not in DecodeOptions().to_wire()        # no field for runners that do not know it
    assert DecodeOptions.from_wire({"prompt": list(range(223))}).prompt == list(range(223))
    for bad, says in (([0] * 224, "at most 223"), ([51865], "0..51864"), ([-1], "token ids"),
                      ("hello", "list"), ([1.5], "token ids"), ([True], "token ids")):
        with pytest.raises(OptionsError, match=says):
            DecodeOptions.from_wire({"prompt": bad})


def decode(model, mel, encoder_cache, **kw):
    events = list(decode_window(model.backend, model.tokenizer, mel[0], DecodeOptions(max_tokens=6, **kw),
                                encoder_cache=encoder_cache))
    return [e for e in events if isinstance(e, TokenEvent)], events[-1]


def test_the_prompt_reaches_the_decoder(model, clip_mels, encoder_cache):
    mel = clip_mels("test_en.wav")
    prompt = model.tokenizer.encode(" THE INAUGURAL ADDRESS OF PRESIDENT KENNEDY, JANUARY 1961.")
    plain, _ = decode(model, mel, encoder_cache, language="en")
    prompted, done = decode(model, mel, encoder_cache, language="en", prompt=prompt)
    assert isinstance(done, DoneEvent)
    # <|startofprev|> + prompt + 4 SOT tokens sit in the cache before the first sampled token
    assert prompted[0].cache_len == plain[0].cache_len + 1 + len(prompt) == 4 + 1 + len(prompt)
    assert not np.isclose(prompted[0].logprob, plain[0].logprob)   # the prompt conditions the choice
    # auto language with a prompt: detected without it (as whisper does), then decoded with it
    auto, done = decode(model, mel, encoder_cache, prompt=prompt)
    assert done.language == "en" and [t.token for t in auto] == [t.token for t in prompted]
