"""The studio's words for the device settings (app/board/setting_words.py) are keyed by the settings' names: every
setting the studio shows has words, and no words name a setting the table lacks. The spec ships none."""
from __future__ import annotations

import device.spec.settings as spec
from app.board.setting_words import WORDS
from device.spec.settings import SETTINGS


def test_every_setting_the_studio_shows_has_words_and_no_words_name_an_unknown_setting():
    shown = {s.name for s in SETTINGS if s.studio}
    assert shown <= set(WORDS), f"no words for {sorted(shown - set(WORDS))}"
    names = {s.name for s in SETTINGS}
    assert set(WORDS) <= names, f"words for unknown settings: {sorted(set(WORDS) - names)}"
    assert all(WORDS[name].label for name in shown)


def test_the_spec_carries_no_studio_wording():
    assert not hasattr(spec, "Shown") and not hasattr(spec, "delegate_tip")
    assert all(isinstance(s.studio, tuple) and set(s.studio) <= set(spec.KINDS) for s in SETTINGS)
