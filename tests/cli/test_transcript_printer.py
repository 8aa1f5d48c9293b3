"""The CLI's stdout text: live on a terminal with no-speech windows wiped, per finished window into a pipe."""
import io

from cli.transcript_printer import RESTORE_AND_CLEAR, SAVE, TranscriptPrinter
from core.decode.events import DoneEvent, EncodedEvent, TokenEvent
from core.decode.transcript import Transcript


class Tty(io.StringIO):
    def isatty(self):
        return True


def _events():
    def tok(window, step, text):
        return TokenEvent(window, step, 100 + step, text, -0.1, 0.0, [], step + 1, 0, 1.0)

    yield EncodedEvent(0, 1.0)
    yield tok(0, 0, " Hello")
    yield tok(0, 1, " world.")
    yield DoneEvent(0, "eot", [1, 2], " Hello world.", 5.0, no_speech_prob=0.01, avg_logprob=-0.1)
    yield EncodedEvent(1, 1.0, offset_s=30.0)
    yield tok(1, 0, " you")
    yield DoneEvent(1, "eot", [3], " you", 5.0, no_speech_prob=0.9, avg_logprob=-1.5)   # no-speech rule


def _run(out):
    result, stream = Transcript(), TranscriptPrinter(out)
    for ev in _events():
        result.add(ev)
        stream.feed(ev, result)
    stream.end()
    return result


def test_a_pipe_gets_exactly_the_transcript_text():
    out = io.StringIO()
    result = _run(out)
    assert out.getvalue() == result.text + "\n" == "Hello world.\n"


def test_a_terminal_sees_tokens_live_and_the_no_speech_window_wiped():
    out = Tty()
    _run(out)
    s = out.getvalue()
    assert s.index(" Hello") < s.index(" world.") < s.index(" you") < s.rindex(RESTORE_AND_CLEAR)
    assert s.count(SAVE) == 2 and s.endswith(RESTORE_AND_CLEAR + "\n")


def test_a_terminal_rewrites_a_window_whose_unfinished_last_segment_was_dropped():
    """Long audio: the window's tokens streamed ' Hello world. And so', its final text keeps the complete
    segment only (the next window decodes ' And so' again), so the screen must end as the transcript."""
    out = Tty()
    result, stream = Transcript(), TranscriptPrinter(out)
    events = [EncodedEvent(0, 1.0),
              *(TokenEvent(0, i, 100 + i, text, -0.1, 0.0, [], i + 1, 0, 1.0)
                for i, text in enumerate([" Hello", " world.", " And", " so"])),
              DoneEvent(0, "eot", [100, 101, 102, 103], " Hello world.", 5.0, no_speech_prob=0.01, avg_logprob=-0.1)]
    for ev in events:
        result.add(ev)
        stream.feed(ev, result)
    stream.end()
    s = out.getvalue()
    assert s.index(" so") < s.rindex(RESTORE_AND_CLEAR)
    assert s.endswith(RESTORE_AND_CLEAR + "Hello world.\n") and result.text == "Hello world."
