"""The Segments tab says why it is empty, in its middle: no run, no timestamps asked for, nothing finished yet."""
from __future__ import annotations

from dataclasses import replace

from app.runs.session import Session
from app.views.segments import HINT, SegmentsView
from core.decode.events import DoneEvent, EncodedEvent
from tests.app.runs.test_exports import make_run, token


def painted_text(view) -> bool:
    """Whether anything darker than the background is drawn in the empty table's middle."""
    image = view.viewport().grab().toImage()
    w, h = image.width(), image.height()
    return any(image.pixelColor(x, y).lightness() < 160 for x in range(w // 8, w * 7 // 8, 2)
               for y in range(h // 3, h * 2 // 3))


def test_an_empty_segments_tab_says_why(qtbot):
    view = SegmentsView()
    qtbot.addWidget(view)
    view.resize(600, 240)
    view.show()
    view.show_run(None)
    assert "No run" in view.empty_reason and painted_text(view)
    session = Session()
    plain = make_run(session, [EncodedEvent(0, 900.0, "en"), token(0, 0, 100, " a"),
                               DoneEvent(0, "eot", [100], " a", 30.0, "en")])
    view.show_run(plain)
    assert view.empty_reason == HINT and view.toolTip() == HINT and painted_text(view)
    timed = make_run(session, [EncodedEvent(0, 900.0, "en"), token(0, 0, 100, " a")])
    timed.options = replace(timed.options, timestamps=True)
    view.show_run(timed)
    assert "as each window finishes" in view.empty_reason
    timed.add(DoneEvent(0, "eot", [100], " a", 30.0, "en", segments=[{"start": 0.0, "end": 1.0, "text": " a"}]), 500.0)
    view.refresh(timed)
    assert view.rowCount() == 1 and view.empty_reason == "" and not painted_text(view)
