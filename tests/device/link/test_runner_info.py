"""RunnerInfo: what the host reads from a runner's hello."""
from core.model.placement import RanOn, ran_on
from device.link.runner_info import RunnerInfo
from tests.core.model.test_placement import DLA_DETAIL


def test_runner_info_reads_the_hello_and_the_record_round_trips():
    info = RunnerInfo.from_hello({"protocol": 1, "backend": "dla", "backend_detail": DLA_DETAIL})
    assert info.ran_on == ran_on("dla", DLA_DETAIL)
    assert RanOn.from_dict(info.ran_on.to_dict()) == info.ran_on and info.ran_on.to_dict()["short"] == "NPU"
    assert RunnerInfo.from_hello({"protocol": 1, "backend": "numpy"}).ran_on.where == "cpu"
    assert RanOn.from_dict(None) is None and RanOn.from_dict({"where": "gpu"}) is None


def test_the_runner_that_served_is_named_and_one_that_predates_the_field_is_the_python_one():
    native = RunnerInfo.from_hello({"protocol": 2, "runner": "native", "backend": "dla", "backend_detail": DLA_DETAIL})
    assert native.runner == "native" and native.summary()["runner"] == "native"
    assert RunnerInfo.from_hello({"protocol": 2, "backend": "onnx"}).summary()["runner"] == "python"


def test_the_system_the_runner_runs_on_is_read_and_kept_and_a_runner_that_predates_it_names_none():
    android = RunnerInfo.from_hello({"protocol": 2, "runner": "native", "os": "Android 14", "backend": "dla"})
    assert android.os == "Android 14" and android.summary()["os"] == "Android 14"
    older = RunnerInfo.from_hello({"protocol": 2, "backend": "onnx"})
    assert older.os == "" and "os" not in older.summary()
