"""The status bar's board cost: the SoC from hello, then each sample, red while the board throttles; a sample
never widens the window."""
from app.views.board_cost import BoardCostLabel
from tests.app.conftest import make_window, run_events_for, settings_file


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


def test_samples_never_resize_the_window_at_its_least_width(qtbot, tmp_path):
    """A window on a small screen sits at its least width. A reading that gains a digit (CPU 9.9 s, then 10.0 s,
    then 100.0 s) must not raise that least width: the window would grow mid-run, and every view and plot in it
    would be laid out and drawn again at once."""
    window = make_window(settings_file(tmp_path / "s.ini"))
    qtbot.addWidget(window)
    label = window.board.cost
    label.show_sample(1, _sample(61.0) | {"cpu_s": 9.9})
    run_events_for(50)
    window.resize(window.minimumSizeHint().width(), window.height())
    run_events_for(50)
    least = window.minimumSizeHint().width()
    assert window.width() == least
    for cpu_s in (10.0, 99.9, 100.0, 1000.0):
        label.show_sample(1, _sample(61.0) | {"cpu_s": cpu_s, "rss_mb": 10 * cpu_s, "mem_available_mb": 1e5 * cpu_s})
        run_events_for(50)
        assert f"CPU {cpu_s:.1f} s" in label.text()
        assert window.minimumSizeHint().width() == least and window.width() == least


def test_the_reading_asks_for_its_whole_width(qtbot):
    """Where there is room it is shown whole: only its least width is the SoC line's."""
    label = BoardCostLabel()
    qtbot.addWidget(label)
    label.show_soc({"name": "MT8371", "npu": "MDLA 5.3"})
    soc_only = label.sizeHint().width()
    label.show_sample(1, _sample(61.0))
    assert label.sizeHint().width() > soc_only
    assert label.minimumSizeHint().width() == soc_only
