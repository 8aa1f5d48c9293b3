"""A QA run's board cost: peaks per clip and per device, and the clips that ran throttling or hot."""
from core.qa.board_cost import HOT_C, clip_cost, describe, device_cost
from core.qa.run import ClipResult


def _s(t, rss, avail, temp, throttling=False):
    return {"type": "sample", "t_s": t, "cpu_s": t * 0.9, "rss_mb": rss, "mem_available_mb": avail,
            "zones": [{"zone": "thermal_zone0", "type": "soc", "temp_c": temp, "passive_c": 85.0}],
            "throttling": throttling}


def test_clip_peaks_and_flags():
    cool = clip_cost([_s(0, 100, 900, 45), _s(1, 150, 850, 50)])
    assert (cool["peak_rss_mb"], cool["min_mem_available_mb"], cool["peak_temp_c"], cool["flag"]) == \
        (150, 850, 50, "")
    throttled = clip_cost([_s(0, 100, 900, 70), _s(1, 120, 880, 86, throttling=True)])
    assert throttled["throttled"] and "throttling" in throttled["flag"]
    hot = clip_cost([_s(0, 100, 900, HOT_C + 1)])        # hot with no trip point reached
    assert hot["hot"] and not hot["throttled"] and hot["flag"]
    assert clip_cost([]) is None


def test_device_peaks_name_the_flagged_clips():
    def clip(name, board):
        return ClipResult(name, "a.wav", "en", "wer", 0.1, "x", board=board)

    clips = [clip("a", clip_cost([_s(0, 100, 900, 45)])), clip("b", clip_cost([_s(0, 300, 700, 91, True)])),
             clip("c", None)]
    cost = device_cost(clips)
    assert cost == {"peak_rss_mb": 300, "min_mem_available_mb": 700, "peak_temp_c": 91, "flagged": ["b"]}
    assert "91.0 C" in describe(cost) and "b" in describe(cost)
    assert device_cost([clip("c", None)]) is None
