"""The status bar's board cost: the SoC from hello, then each sample, red while the board throttles."""
from app.views.board_cost import BoardCostLabel


def _sample(temp, throttling=False):
    return {"type": "sample", "t_s": 1.0, "cpu_s": 3.25, "rss_mb": 240.4, "mem_available_mb": 5120.0,
            "zones": [{"zone": "thermal_zone0", "type": "soc_max", "temp_c": temp, "passive_c": 85.0}],
            "throttling": throttling}


def test_soc_then_samples(qtbot):
    w = BoardCostLabel()
    qtbot.addWidget(w)
    assert w.text() == "SoC —"
    w.show_soc({"name": "MT8371", "npu": "MDLA 5.3"})
    assert w.text() == "SoC MT8371 (MDLA 5.3)"
    w.show_sample(1, _sample(61.0))
    assert "CPU 3.2 s" in w.text() and "RSS 240 MB" in w.text() and "61.0 °C" in w.text()
    assert "b71c1c" not in w.styleSheet()
    w.show_sample(1, _sample(86.0, throttling=True))
    assert "THROTTLING" in w.text() and "b71c1c" in w.styleSheet()
    assert "passive trip 85" in w.toolTip()
