"""Opening audio: drag and drop, recent files, and a bad file turning into a problem-and-fix dialog."""
from __future__ import annotations

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QMessageBox

from app.views.error_dialog import OBJECT_NAME
from tests.app.conftest import make_window, settings_file, wait_for
from tests.conftest import AUDIO


def drop(window, path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)


def test_drop_a_file_loads_it_and_remembers_it(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    loaded = []
    window.clipLoaded.connect(loaded.append)
    drop(window, AUDIO / "test_zh.wav")
    wait_for(lambda: loaded, "the dropped file to load")
    assert loaded[0].name == "test_zh.wav" and loaded[0].mels.shape == (1, 80, 3000)
    assert window.settings.recent[0].endswith("test_zh.wav")
    assert window.audio.recent_menu.actions()[0].text().endswith("test_zh.wav")
    assert window.controls.transcribe_button.isEnabled()
    assert "test_zh.wav" in window.audio.clip_label.text()


def test_a_file_that_is_not_audio_shows_problem_and_fix(qtbot, tmp_path):
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    bogus = tmp_path / "notes.wav"
    bogus.write_text("this is not audio")
    loaded = []
    window.clipLoaded.connect(loaded.append)
    window.open_audio(str(bogus))
    wait_for(lambda: loaded, "the load to fail")
    assert loaded == [None]
    dialog = window.findChild(QMessageBox, OBJECT_NAME)
    assert dialog is not None and dialog.isVisible()
    assert "notes.wav" in dialog.text() and "Fix:" in dialog.informativeText()
    assert not window.controls.transcribe_button.isEnabled()


def test_a_phone_recording_in_m4a_and_a_video_load_like_a_wav(qtbot, tmp_path):
    """AAC in .m4a and the sound of an .mp4, written from test_en.wav: FFmpeg decodes what libsndfile cannot."""
    from app.audio.panel import AUDIO_FILTER
    from tests.audio_files import write_as

    assert "*.m4a" in AUDIO_FILTER and "*.webm" in AUDIO_FILTER and "*.mp4" in AUDIO_FILTER
    window = make_window(settings_file(tmp_path / "app.ini"))
    qtbot.addWidget(window)
    for kind in ("m4a", "mp4"):
        loaded = []
        window.clipLoaded.connect(loaded.append)
        drop(window, write_as(AUDIO / "test_en.wav", tmp_path / f"jfk.{kind}"))
        wait_for(lambda: loaded, f"the .{kind} file to load")
        window.clipLoaded.disconnect(loaded.append)
        assert loaded[0] is not None and loaded[0].name == f"jfk.{kind}"
        assert abs(loaded[0].duration_s - 11.0) < 0.1 and loaded[0].mels.shape == (1, 80, 3000)
    assert window.findChild(QMessageBox, OBJECT_NAME) is None
