"""What a live transcription reports: text committed for good, the tentative tail after it, one record per
pass over the audio buffer, and the moments the policy had to skip ahead or cut the buffer.

Times are in seconds of audio since the stream began. `emitted_s` is the stream clock at the moment of the
event: the seconds of audio fed in so far, so `emitted_s - end_s` is how far the text trails the speech."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from core.model.dims import FULL_WINDOW_S


@dataclass
class Committed:
    text: str                 # with its leading space, as the words came
    start_s: float            # where its first word starts in the audio
    end_s: float              # where its last word ends
    emitted_s: float
    words: list[dict] = field(default_factory=list)    # [{word, start, end}]
    type: str = "committed"

    @property
    def lag_s(self) -> float:
        return self.emitted_s - self.end_s


@dataclass
class Tentative:
    """The current hypothesis after the committed text; it replaces the previous tentative text."""
    text: str
    start_s: float
    end_s: float
    emitted_s: float
    type: str = "tentative"


@dataclass
class PassRecord:
    audio_s: float            # seconds of audio in the buffer this pass transcribed
    encoder_ms: float         # runner compute: encoder and cross K/V (about 0 on an encoder-cache hit)
    tokens: int               # sampled text tokens
    decode_ms: float          # runner compute: every decoder step, the prompt and SOT prefix included
    cache_len: int            # self-attention cache fill at the last step (prompt + prefix + output)
    at_s: float = 0.0         # stream clock when the pass started
    buffer_start_s: float = 0.0
    prompt_tokens: int = 0
    cache_hit: bool = False   # the runner reused the cross K/V of an identical buffer
    wall_ms: float = 0.0      # the whole pass seen from the host: mel, link, runner, word timing
    final: bool = False       # at the end of speech (or of the stream): everything it heard is committed
    token_ms: list[float] = field(default_factory=list)    # runner ms of each step
    eot_probs: list[float] = field(default_factory=list)   # p(EOT) at each step
    token_drafted: list[bool] = field(default_factory=list)  # each step's token taken from the draft (TokenEvent.drafted)
    window_s: int = FULL_WINDOW_S   # the encoder window the runner encoded (its encoded event; 30 from an older runner)
    type: str = "pass"

    def summary(self) -> dict:
        """The record without the per-step lists (what `whisperkv stream --json` prints per pass)."""
        return {k: v for k, v in asdict(self).items() if k not in ("token_ms", "eot_probs", "token_drafted", "type")}


@dataclass
class Skipped:
    """The last pass took longer than the pass interval: instead of queuing the passes it missed, the next
    pass takes all the audio that arrived meanwhile."""
    at_s: float               # stream clock when the catching-up pass started
    behind_s: float           # audio that arrived beyond one pass interval while the last pass ran
    last_pass_ms: float
    type: str = "skipped"


@dataclass
class Trimmed:
    """The buffer was cut at `cut_s`; `forced` when nothing committed marked a place to cut and the
    tentative words before the cut were committed (or, past the 30 s window, audio was dropped) instead."""
    cut_s: float
    reason: str               # "sentence", "word", "forced", "dropped"
    emitted_s: float
    type: str = "trimmed"

    @property
    def forced(self) -> bool:
        return self.reason in ("forced", "dropped")


StreamEvent = Committed | Tentative | PassRecord | Skipped | Trimmed
