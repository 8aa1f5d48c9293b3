"""The Live tab without a stream (offscreen): the microphone button is off with the reason when there is no input
device, Present opens the presenter full screen and closing it unticks Present, and the figures use plain words."""
from __future__ import annotations

from app.audio.recorder import InputDevice, input_devices
from app.views.live_panel import LivePanel
from core.stream.events import Committed, PassRecord, Skipped

NO_DEVICE = "Recording is off: no audio input device was found — plug in a microphone, or open an audio file instead."


def test_no_input_device_disables_the_microphone_and_says_why(qtbot):
    panel = LivePanel(found_devices=([], NO_DEVICE))
    qtbot.addWidget(panel)
    assert not panel.mic_button.isEnabled()
    assert panel.mic_button.toolTip().startswith("Live from a microphone is off: no audio input device was found")
    panel.set_running(True)
    panel.set_running(False)
    assert not panel.mic_button.isEnabled()                 # the end of a file stream does not turn it back on
    with_mic = LivePanel(found_devices=([InputDevice(3, "USB microphone", 1)], ""))
    qtbot.addWidget(with_mic)
    assert with_mic.mic_button.isEnabled()


def test_this_machine_without_a_microphone(qtbot):
    panel = LivePanel()
    qtbot.addWidget(panel)
    devices, why = input_devices()
    assert panel.mic_button.isEnabled() == bool(devices)
    if not devices:
        assert why.partition(": ")[2] in panel.mic_button.toolTip()


def test_present_opens_the_presenter_full_screen_and_closing_it_unticks_present(qtbot):
    panel = LivePanel(found_devices=([], NO_DEVICE))
    qtbot.addWidget(panel)
    panel.show()
    panel.present_button.click()
    assert panel.present_action.isChecked() and panel.presenter.isVisible() and panel.presenter.isFullScreen()
    panel.presenter.close()
    assert not panel.present_action.isChecked() and not panel.presenter.isVisible()


def test_the_figures_and_the_status_line_follow_the_stream(qtbot):
    panel = LivePanel(found_devices=([], NO_DEVICE))
    qtbot.addWidget(panel)
    stops = []
    panel.stopRequested.connect(lambda: stops.append(1))
    panel.set_running(True)
    assert panel.status_line.text() == "listening…"
    panel.add_events([PassRecord(1.0, 200.0, 3, 300.0, 9, at_s=1.0), Skipped(2.5, 0.5, 1500.0),
                      PassRecord(2.5, 200.0, 3, 300.0, 9, at_s=2.5), Committed(" Hello", 0.2, 0.8, 2.6)])
    assert "1 pass skipped to keep up" in panel.figures.text()
    assert panel.status_line.text().startswith("catching up")
    assert panel.presenter.text.toPlainText() == "Hello"
    panel.presenter.stopRequested.emit()                    # Esc in the presenter stops the stream like Stop does
    assert stops == [1]


def test_the_policy_box_lists_the_policy_table_and_is_locked_while_streaming(qtbot):
    from PySide6.QtCore import Qt

    from core.stream.policies import PARAMS, POLICIES

    panel = LivePanel(found_devices=([], NO_DEVICE))
    qtbot.addWidget(panel)
    box = panel.policy_box
    # Live opens on the lowest-lag policy that keeps the words (docs/gui.md), its own parameters enabled
    assert [box.itemData(i) for i in range(box.count())] == list(POLICIES) and panel.policy() == "alignatt"
    assert all(panel.params.boxes[name].isEnabled() == PARAMS[name].applies_to("alignatt") for name in PARAMS)
    assert [box.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(box.count())] == \
        [p.summary for p in POLICIES.values()]
    panel.set_running(True)
    assert not box.isEnabled()
    panel.set_running(False)
    assert box.isEnabled()
