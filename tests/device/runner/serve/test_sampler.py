"""The runner's board samples: its memory, the board's memory, thermal zones and their passive trip points."""
import time

from device.runner.serve import sampler


def _zone(root, i, temp, trips=()):
    z = root / f"thermal_zone{i}"
    z.mkdir(parents=True)
    (z / "type").write_text(f"zone{i}\n")
    (z / "temp").write_text(f"{temp}\n")
    for j, (t, kind) in enumerate(trips):
        (z / f"trip_point_{j}_temp").write_text(f"{t}\n")
        (z / f"trip_point_{j}_type").write_text(f"{kind}\n")


def test_zones_and_passive_trip(tmp_path):
    _zone(tmp_path, 0, 45000, [(105000, "critical"), (85000, "passive")])
    _zone(tmp_path, 1, 50500)
    zones = sampler.thermal_zones(str(tmp_path))
    assert zones == [{"zone": "thermal_zone0", "type": "zone0", "temp_c": 45.0, "passive_c": 85.0},
                     {"zone": "thermal_zone1", "type": "zone1", "temp_c": 50.5, "passive_c": None}]


def test_throttling_at_the_trip_point(tmp_path, monkeypatch):
    _zone(tmp_path, 0, 85000, [(85000, "passive")])
    _zone(tmp_path, 1, 60000, [(95000, "passive")])
    monkeypatch.setattr(sampler, "THERMAL", str(tmp_path))
    assert sampler.sample(time.monotonic())["throttling"] is True
    (tmp_path / "thermal_zone0/temp").write_text("84900\n")
    assert sampler.sample(time.monotonic())["throttling"] is False


def test_sample_fields():
    s = sampler.sample(time.monotonic())
    assert s["type"] == "sample" and s["rss_mb"] > 1 and s["mem_available_mb"] > 1 and s["cpu_s"] > 0


def test_sampler_sends_at_once_and_each_interval():
    got = []
    s = sampler.Sampler(0.1, got.append).start()
    time.sleep(0.35)
    s.close()
    n = len(got)
    s.close()
    time.sleep(0.15)
    assert 3 <= n <= 6 and len(got) == n          # nothing after close
    assert got[0]["t_s"] < got[-1]["t_s"]
