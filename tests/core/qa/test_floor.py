"""A suite's speed floor and NPU requirement (core/qa/floor.py): the suite keys, and each reason a clip fails."""
import pytest

from core.model.placement import CPU, RanOn, ran_on
from core.qa.floor import UNSAID, hold_to_floor
from core.qa.suite import SuiteError, load_suite
from tests.core.model.test_placement import DLA_DETAIL
from tests.core.qa.qa_helpers import CLIP, result, write

NPU = ran_on("dla", DLA_DETAIL)
SPLIT = RanOn("split", "the NPU through the delegate", 412, 12)


def clip(tmp_path, keys: str):
    return load_suite(write(tmp_path, "[defaults]\n" + keys + CLIP + "max_wer = 1.0\n")).clips[0]


def test_the_suite_sets_the_floor_and_the_npu_for_every_clip(tmp_path):
    c = clip(tmp_path, "min_tokens_per_s = 20\nrequire_npu = true\n")
    assert (c.min_tokens_per_s, c.require_npu) == (20.0, True)
    plain = clip(tmp_path, "")
    assert (plain.min_tokens_per_s, plain.require_npu) == (None, False)
    for keys, problem in (("min_tokens_per_s = 0\n", "min_tokens_per_s must be above 0"),
                          ("require_npu = 1\n", r"require_npu has the wrong type \(int\)")):
        with pytest.raises(SuiteError, match=problem):
            clip(tmp_path, keys)


def test_a_clip_below_the_floor_fails_naming_its_speed(tmp_path):
    c = clip(tmp_path, "min_tokens_per_s = 20\n")
    slow = hold_to_floor(c, result(c, ms=300.0), NPU)      # three steps of ~300 ms: ~3.3 tokens/s
    assert not slow.passed and slow.failures == [f"{slow.tokens_per_s:.1f} tokens/s < floor 20"]
    assert 3.0 < slow.tokens_per_s < 3.5 and slow.ran_on == "NPU"
    fast = hold_to_floor(c, result(c, ms=10.0), CPU)        # ~95 tokens/s; the NPU is not required
    assert fast.passed and not fast.failures and fast.ran_on == "CPU"


def test_off_the_npu_where_it_was_required_fails_naming_why(tmp_path):
    c = clip(tmp_path, "require_npu = true\n")
    assert hold_to_floor(c, result(c), NPU).passed
    on_cpu = hold_to_floor(c, result(c), CPU)
    assert not on_cpu.passed and on_cpu.failures == ["ran on the CPU where the NPU was required"]
    part = hold_to_floor(c, result(c), SPLIT)
    assert part.failures == ["12 of 412 ops ran on the CPU"] and part.ran_on == "NPU 400/412"
    assert hold_to_floor(c, result(c), None).failures == [UNSAID]


def test_a_clip_that_already_failed_keeps_its_reasons(tmp_path):
    c = clip(tmp_path, "require_npu = true\nmin_tokens_per_s = 1000\n")
    wrong = hold_to_floor(c, result(c, text="goodbye cruel moon here"), CPU)
    assert not wrong.passed and len(wrong.failures) == 3 and wrong.failures[0].startswith("WER")


def test_a_device_profile_s_floor_beside_the_suite_s_the_stricter_holds(tmp_path):
    """The studio's device profile may set a floor and require the NPU (DeviceProfile.qa_floor) on top of the suite."""
    from core.qa.floor import device_floor

    suite_20 = clip(tmp_path, "min_tokens_per_s = 20\n")
    assert device_floor(suite_20, 50.0).min_tokens_per_s == 50.0          # the device asks more
    assert device_floor(suite_20, 5.0).min_tokens_per_s == 20.0           # the suite asks more
    assert device_floor(suite_20, 0.0) == suite_20                       # 0: the device sets none
    plain = clip(tmp_path, "")
    held = device_floor(plain, 1000.0, require_npu=True)
    assert (held.min_tokens_per_s, held.require_npu) == (1000.0, True)
    failed = hold_to_floor(held, result(held), CPU)
    assert failed.failures == [f"{failed.tokens_per_s:.1f} tokens/s < floor 1000",
                               "ran on the CPU where the NPU was required"]
