"""Opening new audio clears the view of the last run: nothing of it is drawn against the new audio's time axis,
and it stays in the run picker, to be shown again."""
from __future__ import annotations

from tests.app.conftest import make_window, open_and_wait, settings_file, transcribe_and_wait


def test_opening_a_second_file_shows_no_run_of_the_first(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    open_and_wait(window, "en_asterisk_hello-world.wav")
    first = transcribe_and_wait(window, language="en", max_tokens=3)
    assert window.run is first and window.plots.latency.point_count() > 0

    open_and_wait(window, "test_en.wav")
    assert window.audio.view.clip.name == "test_en.wav"
    assert window.run is None
    assert [plot.point_count() for plot in window.plots.plots()] == [0, 0, 0]
    assert window.heatmap.run is None and window.transcript.run is None and window.table.model().rowCount() == 0
    assert not window.banner.isVisibleTo(window)
    assert window.run_picker.findData(first.id) >= 0, "the run stays in the picker"
    assert window.run_picker.currentIndex() == -1

    window.open_run(first)                  # picked again: shown, with its own audio
    assert window.run is first and window.plots.latency.point_count() == len(first.rows)
