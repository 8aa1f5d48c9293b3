"""bench/native_runner.py runs: both runners start on the INSTANT stand-in runtime (which needs no interpreter, so
the C runner opens it as it would MediaTek's), decode a couple of tokens each and the figures come out. The
measurement itself is the bench's job: no figure is held to a time here."""
import importlib.util
import sys

from device import ROOT

spec = importlib.util.spec_from_file_location("bench_native_runner", ROOT / "bench" / "native_runner.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["bench_native_runner"] = bench          # dataclasses look their module up while the file runs
spec.loader.exec_module(bench)


def test_the_bench_runs_both_runners_and_prints_their_figures(capsys):
    out = bench.main(["--rounds", "1", "--requests", "1", "--max-tokens", "3"])
    assert out in capsys.readouterr().out
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in out.splitlines()
            if line.startswith("| ") and "---" not in line}
    for row in ("per token, `sent_t` gap (ms)", "per token, runner `ms` (ms)", "start-up to `hello` (ms)",
                "peak RSS, VmHWM (MiB)"):
        native, python, ratio = (float(x.strip(" |")) for x in rows[row])
        assert native > 0 and python > 0 and ratio > 0
    assert "1 requests of 3 tokens" in out and "per-token goal" in out


def test_spacings_leave_out_the_first_token_and_read_the_runners_stamps():
    tokens = [(10.0, {"sent_t": 5.0, "ms": 30.0}), (10.002, {"sent_t": 5.001, "ms": 0.5}),
              (10.003, {"sent_t": 5.003, "ms": 0.7}), (10.005, {"sent_t": 5.006, "ms": 0.9})]
    s = bench.spacings(tokens)
    assert round(s["sent_gap"], 6) == 2.5 and round(s["host_gap"], 6) == 1.5 and s["ms"] == 0.7
