"""The QA report shows where a failing clip's decoder looked: a cross-attention heatmap in its section, and
where its EOT step looked beside the verdict."""
import re

from core.decode.events import TokenEvent
from core.decode.transcript import Transcript
from core.qa.attention_map import MIN_LEVEL, attention_map, cells
from core.qa.html import render
from core.qa.run import SuiteResult, run_suite, score
from core.qa.suite import load_suite
from tests.conftest import AUDIO
from tests.core.decode.crafted_attention import attention_at
from tests.core.qa.qa_helpers import CLIP, decoder, fake_events, write


def transcript_with_attention(tokens, text, reason):
    """fake_events, each step looking 0.5 s further into the audio."""
    t = Transcript()
    for ev in fake_events(tokens, text, reason):
        if isinstance(ev, TokenEvent):
            ev.attention = attention_at(25 + 25 * ev.step)
        t.add(ev)
    return t


def test_the_map_keeps_only_where_each_step_looked():
    t = transcript_with_attention([1, 2, 3], "x", "eot")
    m = attention_map(t.steps, {0: 0.0}, {0: "eot"})
    assert m["bin_s"] == 0.1 and m["n_bins"] == 300 and len(m["rows"]) == 4
    for step, row in enumerate(m["rows"]):
        assert all(level >= MIN_LEVEL for _, level in cells(row)) and len(cells(row)) <= 2
        assert 5 + 5 * step in [col for col, level in cells(row) if level == 100]   # 0.5 s a step, 0.1 s a column
    assert m["marks"] == [[3, 2.0, "EOT"]]
    assert attention_map(fake_events([1], "x", "eot")[1:3], {}, {}) is None   # no attention, no map


def test_a_failing_clip_has_the_heatmap_a_passing_one_not(tmp_path):
    clip = load_suite(write(tmp_path, CLIP + "max_wer = 0.5\n")).clips[0]
    bad = score(clip, transcript_with_attention([1, 2, 3] * 6, " tell me", "max_tokens"), wall_ms=1, duration_s=11.0)
    good = score(clip, transcript_with_attention([1, 2], " Ask not", "eot"), wall_ms=1, duration_s=11.0)
    assert not bad.passed and bad.attention is not None and good.passed and good.attention is None
    html = render(SuiteResult("s", "s.toml", [good, bad]))
    sections = html.split("<section")
    assert "cross-attention" not in sections[1] and "cross-attention" in sections[2]
    heatmap = re.search(r'<svg[^>]*aria-label="cross-attention[^"]*".*?</svg>', sections[2]).group(0)
    assert heatmap.count('fill="#08306b"') >= 18 and "last step (max_tokens) at step 17" in heatmap



def test_real_failing_clip_report_shows_where_it_looked(tmp_path, model, encoder_cache):
    """JFK against a wrong reference: it fails, so its section carries the heatmap of the real attention, and
    its EOT looked at the end of the speech."""
    suite = load_suite(write(tmp_path, f'[[clip]]\naudio = "{AUDIO / "test_en.wav"}"\nlanguage = "en"\n'
                                       'reference = "a different sentence altogether"\nmax_wer = 0.1\n'))
    (r,) = run_suite(suite, decoder(model, encoder_cache)).results
    assert not r.passed and r.stop_reason == "eot" and r.attention is not None
    assert len(r.attention["rows"]) == r.steps and r.attention["marks"][0][2] == "EOT"
    assert r.focus.startswith("EOT while attention was at ") and r.focus.endswith("(the end of the speech)")
    html = render(SuiteResult("s", "s.toml", [r]))
    assert 'aria-label="cross-attention' in html and r.focus in html
