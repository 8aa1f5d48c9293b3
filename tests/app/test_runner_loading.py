"""A window's first run starts the local runner: the banner says the model is loading until the runner's first
event, then that it decodes, then why it stopped."""
from __future__ import annotations

from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait


def test_the_first_run_shows_the_runner_loading_before_decoding(qapp, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    try:
        shown = []
        show = window.banner.show_reason
        window.banner.show_reason = lambda reason, *a, **kw: (shown.append(reason), show(reason, *a, **kw))
        open_and_wait(window, "en_asterisk_hello-world.wav")
        run = transcribe_and_wait(window, language="en")
        assert run.runner_loading and run.error is None
        seen = [r for i, r in enumerate(shown) if r and (i == 0 or shown[i - 1] != r)]
        assert seen.index("loading") < seen.index("running") < seen.index("eot"), seen

        shown.clear()
        again = transcribe_and_wait(window, language="en")   # the runner is up: no loading phase
        assert not again.runner_loading and "loading" not in shown
    finally:
        window.close()
