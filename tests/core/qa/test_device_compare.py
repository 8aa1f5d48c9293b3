"""The cross-device view: each device's clips against the first device's."""
from core.qa.device_compare import compare_devices
from tests.core.qa.qa_helpers import two_devices


def test_each_device_is_compared_with_the_first(tmp_path):
    report = two_devices(tmp_path)
    a, b = compare_devices(report.runs)
    assert (a.name, a.device, a.reference_device) == ("a", "ssh://root@board", "local")
    assert (a.tokens_identical, a.error_delta) == (False, 0.5)
    assert a.latency_ratio == round(21.5 / 11.5, 3)          # p50 of steps 1.. (20+1, 20+2) over (10+1, 10+2)
    assert (b.tokens_identical, b.error_delta, b.latency_ratio) == (True, 0.0, 1.0)
    assert a.cells() == ("differ", "+0.500", "1.87")
    assert compare_devices(report.runs[:1]) == []
