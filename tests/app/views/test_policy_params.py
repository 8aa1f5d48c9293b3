"""The Live tab's policy parameters (offscreen): one control per row of the parameter table, enabled for the policies
that read it, and what the stream is started with; a toy parameter added as one row gets its control."""
from __future__ import annotations

from app.views.live_panel import LivePanel
from app.views.policy_params import OWN, PolicyParams
from core.stream import policies
from core.stream.agreement import LocalAgreement
from core.stream.policy import StreamConfig

NO_DEVICE = ([], "Recording is off: no audio input device was found — plug in a microphone.")


def test_the_defaults_start_the_stream_as_before_and_alignatt_enables_its_margin(qtbot):
    panel = LivePanel(found_devices=NO_DEVICE)
    qtbot.addWidget(panel)
    boxes = panel.params.boxes
    assert set(boxes) == set(policies.PARAMS)
    windows = {"window_floor_s": 20.0, "window_margin_s": 2.0}       # the stream's own floor
    assert boxes["min_chunk_s"].text() == OWN and panel.params.values() == {"margin_frames": 10, **windows}
    assert StreamConfig(policy=panel.policy(), params=panel.params.values()).params == StreamConfig().params
    assert panel.policy() == "alignatt" and boxes["margin_frames"].isEnabled()   # Live's default reads its margin
    panel.policy_box.setCurrentIndex(list(policies.POLICIES).index("local-agreement"))
    assert not boxes["margin_frames"].isEnabled()            # local-agreement has no margin
    panel.policy_box.setCurrentIndex(list(policies.POLICIES).index("alignatt"))
    assert boxes["margin_frames"].isEnabled()
    boxes["min_chunk_s"].setValue(0.5)
    boxes["margin_frames"].setValue(7)
    assert panel.params.values() == {"min_chunk_s": 0.5, "margin_frames": 7, **windows}
    panel.set_running(True)
    assert not panel.params.isEnabled()
    panel.set_running(False)
    assert panel.params.isEnabled() and boxes["margin_frames"].isEnabled()


def test_a_toy_parameter_row_gets_a_control(qtbot, monkeypatch):
    monkeypatch.setitem(policies.POLICIES, "toy", policies.PolicyKind("toy", "a toy rule", lambda c: LocalAgreement(),
                                                                      0.5))
    monkeypatch.setitem(policies.PARAMS, "patience", policies.PolicyParam(
        "patience", "--patience", int, 2, 1, True, "passes", "toy: passes to wait", ("toy",)))
    form = PolicyParams()
    qtbot.addWidget(form)
    box = form.boxes["patience"]
    assert box.value() == 2 and box.minimum() == 1 and box.suffix() == " passes" and "--patience" in box.toolTip()
    assert not box.isEnabled()
    form.show_policy("toy")
    box.setValue(5)
    assert box.isEnabled() and form.values()["patience"] == 5
    assert StreamConfig(policy="toy", params=form.values()).params["patience"] == 5
