"""The live-transcription policy: a commit rule (AlignAtt or LocalAgreement-2, core/stream/policies.py) over a
growing audio buffer, gated by a VAD.

    policy = StreamPolicy(decode_one, tokenizer, StreamConfig(language="en"), VoiceGate(SileroVad()))
    policy.feed(samples)                  # any block size, 16 kHz mono float32
    while policy.due():
        for event in policy.run_pass(): ...
    events = policy.finish()              # at the end of the stream (or policy.stop() when the user stops it)

- The VAD cuts the stream into speech segments; silence never reaches the decoder, so it commits nothing.
- Within a segment, every `min_chunk_s` of new audio the whole buffer is transcribed again (one ordinary
  request: encoder plus cached decode), and the rule commits words: AlignAtt those the decoder wrote while its
  attention looked far enough before the end of the audio, LocalAgreement-2 those two passes agree on.
- Each pass asks for the smallest encoder window its buffer fits (`window_floor_s`, `window_margin_s`:
  core/decode/window_choice.py::pass_window: 30 s until the language is known) among the runner's; one that loops
  there is heard again in the next window up.
- When the segment ends (`min_silence_s` of silence), one last pass commits all it hears: the tail of an
  utterance is not held back until the next one.
- Each pass is prompted with committed text that has left the buffer (core/stream/prompt.py), and carries the
  last pass's tokens as a draft when its buffer start and prompt are the same: the runner checks them in one
  batched call, and most of a pass's tokens then cost no decoder step of their own. A pass that only copied its
  prompt is heard again without one.
- Past `trim_s` the buffer is cut at the end of a committed sentence; past `word_cut_s` at the last
  committed word; past `forced_s` the tentative words are committed and cut after (reported, never silent).
- A pass slower than `min_chunk_s` makes the next one take all the audio that arrived meanwhile, and is
  reported (`Skipped`): the stream never queues passes and falls behind.
No Qt, no transport: `decode_one` is a runner request or the model in this process (core/decode/window_feed.py).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from core.decode.options import MAX_TOKENS, DecodeOptions
from core.decode.window_choice import WINDOW_PARAMS, pass_window
from core.decode.window_feed import DecodeOne
from core.decode.word_timing import Word
from core.model.audio import SAMPLE_RATE
from core.model.dims import FULL_WINDOW_S
from core.model.mel import content_frames
from core.model.tokenizer import WhisperTokenizer
from core.stream.events import Committed, Skipped, StreamEvent, Tentative, Trimmed
from core.stream.one_pass import run_pass
from core.stream.policies import DEFAULT_POLICY, policy_kind, resolve_params
from core.stream.prompt import prompt_text, prompt_tokens, repeats_prompt
from core.stream.vad import VoiceGate

SENTENCE_ENDS = ".?!。！？"


@dataclass
class StreamConfig:
    language: str | None = None    # None or "auto": detected on the first pass that hears speech, then kept
    policy: str = DEFAULT_POLICY   # the commit rule (core/stream/policies.py)
    # The policy's parameters by name (PARAMS in core/stream/policies.py; a missing one: its default), e.g.
    # min_chunk_s (new audio between two passes), margin_frames (alignatt: 20 ms frames kept clear of the end)
    params: dict = field(default_factory=dict)
    # whisper_streaming trims at 15 s and prompts with 200 characters; on a 2-core CPU the shorter buffer and
    # prompt cut the decoder steps of every pass (bench/stream.py, onnx-int8, machine under load: median lag
    # 4.2 and 5.4 s in two runs against 6.1 s: docs/benchmarks-history.md, "Live transcription", the busy runs).
    trim_s: float = 8.0            # past this, cut the buffer at a committed sentence's end
    word_cut_s: float = 20.0       # past this, at the last committed word
    forced_s: float = 25.0         # past this, commit the tentative words and cut after them (Whisper hears 30 s)
    prompt_chars: int = 100        # 0: no prompt
    speech_pad_s: float = 0.3      # audio kept before a speech start and after its end
    min_speech_s: float = 0.25     # shorter bursts of "speech" are dropped unheard
    carry_gap_s: float = 2.0       # after a pause up to this long, the next buffer keeps the sentence before
    max_tokens: int = MAX_TOKENS

    def __post_init__(self):
        if self.language in ("", "auto"):     # as DecodeOptions reads it: a pass before detection hears 30 s
            self.language = None
        self.params = resolve_params(self.policy, self.params)

    @property
    def min_chunk_s(self) -> float:
        return self.params["min_chunk_s"]

    @property
    def margin_frames(self) -> int:
        return self.params["margin_frames"]


class StreamPolicy:
    def __init__(self, decode_one: DecodeOne, tokenizer: WhisperTokenizer, config: StreamConfig | None = None,
                 gate: VoiceGate | None = None, clock: Callable[[], float] | None = None, use_prompt: bool = True,
                 windows: tuple[int, ...] = (FULL_WINDOW_S,)):
        """`gate`: None streams everything as one segment of speech. `clock`: the stream clock in seconds of
        audio fed so far (a live source feeds on while a pass runs); by default, what `feed` received.
        `windows`: the encoder windows the runner serves (hello's); each pass asks for the smallest its buffer
        fits (the window parameters' rule)."""
        self.decode_one, self.tokenizer, self.windows = decode_one, tokenizer, windows
        self.config = config or StreamConfig()
        self.gate, self.use_prompt = gate, use_prompt and self.config.prompt_chars > 0
        self.clock = clock or (lambda: self.fed / SAMPLE_RATE)
        self.language = self.config.language
        self.audio = np.zeros(0, np.float32)    # samples [audio_start, fed) of the stream
        self.audio_start = self.fed = 0
        # Speech segments waiting for passes, [start, end or None while it goes on] in samples; the first is the buffer.
        self.segments: deque[list] = deque([[0, None]] if gate is None else [])
        self.closed_at = 0                      # where the last finished segment ended
        # Where the last segment's buffer began: after a short pause the next one starts there, so Whisper
        # hears the sentence before as context (its words are committed and recognised at the start).
        self.carry: int | None = None
        self.last_pass_end = 0
        self.last_pass_ms = 0.0
        self.last_pass_heard_s = 0.0
        self.last_context: tuple[int, list[int]] | None = None   # (buffer start, prompt) of the last pass
        self.last_tokens: list[int] = []
        self.agreement = policy_kind(self.config.policy).rule(self.config)
        self.history: list[Word] = []           # every committed word

    # --- input ---------------------------------------------------------------------------------------
    def feed(self, samples: np.ndarray) -> None:
        samples = np.asarray(samples, np.float32).reshape(-1)
        self.audio = np.concatenate([self.audio, samples])
        self.fed += len(samples)
        if self.gate is not None:
            pad = int(self.config.speech_pad_s * SAMPLE_RATE)
            for kind, at in self.gate.push(samples):
                if kind == "start":
                    start = max(at - pad, self.closed_at, self.audio_start)
                    if self.carry is not None and at - self.closed_at <= self.config.carry_gap_s * SAMPLE_RATE:
                        start = max(self.carry, self.audio_start)
                    elif self.carry is not None:
                        self.agreement.reset()
                    self.carry = None
                    self.segments.append([start, None])
                elif self.segments:
                    self.segments[-1][1] = self.closed_at = at + pad
        self._drop_old_audio()

    def due(self) -> bool:
        """A pass should run now: a segment ended, or `min_chunk_s` of new speech arrived."""
        if not self.segments:
            return False
        start, end = self.segments[0]
        if end is not None:
            return self.fed >= end
        return self.fed - max(start, self.last_pass_end) >= self.config.min_chunk_s * SAMPLE_RATE

    @property
    def buffer_start_s(self) -> float:
        """Where the buffer of the pass that runs (or runs next) starts, in seconds of the stream."""
        return self.segments[0][0] / SAMPLE_RATE if self.segments else 0.0

    # --- passes --------------------------------------------------------------------------------------
    def run_pass(self) -> list[StreamEvent]:
        merged = self._merge_waiting()
        seg = self.segments[0]
        final = seg[1] is not None and self.fed >= seg[1]
        end = min(seg[1], self.fed) if final else self.fed
        events: list[StreamEvent] = []
        if final and (end - seg[0] < self.config.min_speech_s * SAMPLE_RATE or end <= self.last_pass_end):
            # Too short to be speech, or nothing new since the last pass (the same buffer and prompt would
            # decode to the same words): commit what the last pass heard, without a pass.
            events += self._commit(self.agreement.flush())
            return events + self._end_segment()
        new_s = (end - max(seg[0], self.last_pass_end)) / SAMPLE_RATE
        if merged or (self.last_pass_heard_s > self.config.min_chunk_s and new_s > 1.25 * self.config.min_chunk_s):
            events.append(Skipped(round(self.clock(), 3), round(new_s - self.config.min_chunk_s, 3),
                                  round(self.last_pass_ms, 1)))
        if end - seg[0] > 30 * SAMPLE_RATE:      # only reachable when passes are far slower than the audio
            events += self._commit(self.agreement.flush()) + self._cut((end - 30 * SAMPLE_RATE) / SAMPLE_RATE, "dropped")
        start_s = self.buffer_start_s
        said = prompt_text(self.history, start_s, self.config.prompt_chars) if self.use_prompt else ""
        prompt = prompt_tokens(self.tokenizer, said)
        # A buffer holds at most ~5 tokens a second of speech: a cap well above that stops a repetition loop
        # from costing a 224-token pass.
        max_tokens = min(self.config.max_tokens, 16 + int(12 * (end - seg[0]) / SAMPLE_RATE))
        # The last pass's tokens, when it heard the same buffer start with the same prompt: most of them come
        # again, and the runner checks them in one batched call instead of a step each (DecodeOptions.draft).
        draft = self.last_tokens if self.last_context == (seg[0], prompt) else []
        buffer = self.audio[seg[0] - self.audio_start:end - self.audio_start]
        window_s = pass_window(content_frames(buffer), self.windows, self.language is not None,
                               **{p.name: self.config.params[p.name] for p in WINDOW_PARAMS})
        options = DecodeOptions(language=self.language, max_tokens=max_tokens, word_timestamps=True, prompt=prompt,
                                draft=draft, window_s=window_s)
        at_s = self.clock()
        result = run_pass(self.decode_one, self.tokenizer, buffer, start_s, options, at_s=at_s, final=final)
        if prompt and repeats_prompt(result.words, said):
            # The decoder wrote its prompt again instead of the buffer: those words are no new speech, and the next
            # pass, with the same buffer start and prompt, copies it again (the stream stalls). Heard without it.
            events.append(result.record)
            options = replace(options, prompt=[], draft=[])
            result = run_pass(self.decode_one, self.tokenizer, buffer, start_s, options, at_s=at_s, final=final)
        while result.looped and options.window_s < FULL_WINDOW_S:
            # Stock weights can loop in a window cut short (FUTO's whisper-acft README), and AlignAtt would commit
            # the loop: its tokens look back at audio already heard. The pass is heard again in the next window up.
            events.append(result.record)
            options = replace(options, window_s=min(w for w in (*self.windows, FULL_WINDOW_S) if w > options.window_s))
            result = run_pass(self.decode_one, self.tokenizer, buffer, start_s, options, at_s=at_s, final=final)
        if not result.silent and self.language is None:
            self.language = result.language
        # Audio that arrived while the pass ran (0 when a file is fed as fast as possible)
        self.last_pass_heard_s = self.clock() - at_s
        self.last_pass_end, self.last_pass_ms = end, result.record.wall_ms
        self.last_context, self.last_tokens = (seg[0], prompt), result.tokens
        events.append(result.record)
        if final:
            events += self._commit(self.agreement.flush(result.words))
            return events + self._end_segment()
        events += self._commit(self.agreement.insert_pass(result))
        events += self._trim(end)
        self._drop_old_audio()
        return events

    def finish(self) -> list[StreamEvent]:
        """The stream ended: the speech still open is heard out and committed."""
        if self.segments and self.segments[-1][1] is None:
            self.segments[-1][1] = self.fed
        events: list[StreamEvent] = []
        while self.segments:
            events += self.run_pass()
        return events

    def stop(self) -> list[StreamEvent]:
        """The user stopped the stream: no further pass runs; what the last pass heard after the committed text is
        committed as it stands, so the text on screen is kept."""
        events = self._commit(self.agreement.flush())
        self.segments.clear()
        return events

    # --- helpers -------------------------------------------------------------------------------------
    def _merge_waiting(self) -> int:
        """Speech segments that ended while a slow pass ran join the buffer, so one pass hears them all
        (within what Whisper's window holds) instead of a queue of passes falling further behind."""
        merged = 0
        while len(self.segments) > 1 and ((self.segments[1][1] or self.fed) - self.segments[0][0]
                                          <= self.config.forced_s * SAMPLE_RATE):
            self.segments[0][1] = self.segments[1][1]
            del self.segments[1]
            merged += 1
        return merged

    def _commit(self, words: list[Word]) -> list[StreamEvent]:
        now = round(self.clock(), 3)
        out: list[StreamEvent] = []
        if words:
            self.history += words
            out.append(Committed("".join(w.word for w in words), words[0].start, words[-1].end, now,
                                 [{"word": w.word, "start": w.start, "end": w.end} for w in words]))
        rest = self.agreement.tentative
        out.append(Tentative("".join(w.word for w in rest), rest[0].start if rest else self.agreement.last_end,
                             rest[-1].end if rest else self.agreement.last_end, now))
        return out

    def _end_segment(self) -> list[StreamEvent]:
        seg = self.segments.popleft()
        if not self.segments and seg[1] - seg[0] < self.config.trim_s * SAMPLE_RATE:
            self.carry = seg[0]
        else:
            self.carry = None
            self.agreement.reset()
        self._drop_old_audio()
        return []

    def _trim(self, end: int) -> list[StreamEvent]:
        c, seg = self.config, self.segments[0]
        length = (end - seg[0]) / SAMPLE_RATE
        committed = self.agreement.committed
        if length > c.trim_s:
            for w in reversed(committed):
                if w.word.strip()[-1:] in SENTENCE_ENDS:
                    return self._cut(w.end, "sentence")
        if length > c.word_cut_s and committed:
            return self._cut(committed[-1].end, "word")
        if length > c.forced_s:
            events = self._commit(self.agreement.flush())
            if self.history and self.history[-1].end > seg[0] / SAMPLE_RATE:
                return events + self._cut(self.history[-1].end, "forced")
            return events + self._cut((end - c.word_cut_s * SAMPLE_RATE) / SAMPLE_RATE, "dropped")
        return []

    def _cut(self, t: float, reason: str) -> list[StreamEvent]:
        seg = self.segments[0]
        seg[0] = max(seg[0], min(round(t * SAMPLE_RATE), self.fed))
        self.agreement.forget_before(seg[0] / SAMPLE_RATE)
        return [Trimmed(round(seg[0] / SAMPLE_RATE, 3), reason, round(self.clock(), 3))]

    def _drop_old_audio(self) -> None:
        keep_from = self.segments[0][0] if self.segments else self.fed - int(self.config.speech_pad_s * SAMPLE_RATE)
        if self.carry is not None:
            if self.fed - self.closed_at > self.config.carry_gap_s * SAMPLE_RATE:
                self.carry = None         # a long pause: the next speech starts a buffer of its own
                self.agreement.reset()
            else:
                keep_from = min(keep_from, self.carry)
        drop = max(0, keep_from - self.audio_start)
        if drop:
            self.audio, self.audio_start = self.audio[drop:], self.audio_start + drop

    # --- results -------------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return "".join(w.word for w in self.history).strip()
