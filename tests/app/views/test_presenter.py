"""The presenter view (offscreen): large text with its cap height checked, sized with Ctrl +/−, full screen with
F11, Esc stopping a running stream; the confirmed text dark and the tentative tail grey, the newest line in view."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.views.presenter import CAP_HEIGHT_PER_1080, PresenterView, pixel_size_for_cap_height


def shown(qtbot) -> PresenterView:
    view = PresenterView()
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitActive(view):      # shortcuts reach the active window only
        view.activateWindow()
    return view


def test_the_text_is_readable_from_across_the_room_and_sized_by_keys(qtbot):
    view = shown(qtbot)
    assert view.cap_height() >= CAP_HEIGHT_PER_1080          # this screen is smaller than 1080 lines: 40 px still
    size = view.text.font().pixelSize()
    QTest.keyClick(view, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert view.text.font().pixelSize() > size
    QTest.keyClick(view, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(view, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert view.text.font().pixelSize() < size
    assert view.status_line.font().pixelSize() < view.text.font().pixelSize()


def test_pixel_size_for_a_cap_height_is_the_smallest_that_reaches_it(qtbot):
    from PySide6.QtGui import QFontMetrics

    from app.fonts import transcript_font

    size = pixel_size_for_cap_height(60)
    font = transcript_font(12)
    font.setPixelSize(size)
    assert QFontMetrics(font).capHeight() >= 60
    font.setPixelSize(size - 1)
    assert QFontMetrics(font).capHeight() < 60


def test_f11_toggles_full_screen_and_esc_stops_a_running_stream(qtbot):
    view = shown(qtbot)
    stops = []
    view.stopRequested.connect(lambda: stops.append(1))
    QTest.keyClick(view, Qt.Key.Key_F11)
    assert view.isFullScreen()
    view.show_status("keeping up · 1.2 s behind the speaker", running=True)
    QTest.keyClick(view, Qt.Key.Key_Escape)
    assert stops == [1] and view.isFullScreen()             # stopping the stream keeps its text on screen
    view.show_status("stopped · 12 words", running=False)
    QTest.keyClick(view, Qt.Key.Key_Escape)
    assert stops == [1] and not view.isFullScreen()
    assert view.status_line.text() == "stopped · 12 words"


def test_confirmed_text_dark_and_the_tentative_tail_grey(qtbot):
    view = shown(qtbot)
    view.show_text("Congratulations, you have successfully", " installed the")
    assert view.text.toPlainText() == "Congratulations, you have successfully installed the"
    assert "#9e9e9e" in view.text.toHtml()
    long = " ".join(f"word{i}" for i in range(2000))
    view.show_text(long, " tail")
    text = view.text.toPlainText()
    assert text.startswith("…") and text.endswith("word1999 tail") and len(text) < 1300
