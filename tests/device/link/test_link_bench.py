"""bench/link.py's arithmetic and its docs/benchmarks.md edit (the measurement itself is the bench's job)."""
import importlib.util
import sys
from types import SimpleNamespace

from core.decode.events import EncodedEvent, TokenEvent
from device.runner.serve.agent import ROOT

spec = importlib.util.spec_from_file_location("bench_link", ROOT / "bench" / "link.py")
link = importlib.util.module_from_spec(spec)
sys.modules["bench_link"] = link          # dataclasses look their module up while the file runs
spec.loader.exec_module(link)


def arrival(event, host_t, sent_t):
    return SimpleNamespace(event=event, host_t=host_t, sent_t=sent_t)


def token(ms):
    return TokenEvent(window=0, step=0, token=1, text="", logprob=0.0, eot_prob=0.0, top=[], cache_len=1,
                      cache_bytes=0, ms=ms)


def test_overhead_is_arrival_gap_minus_runner_step():
    arrivals = [arrival(EncodedEvent(window=0, ms=5.0), 1.000, 0.999),
                arrival(token(20.0), 1.0215, 1.0210), arrival(token(10.0), 1.0330, 1.0328)]
    over, steps, lat = link.token_overheads(arrivals)
    assert [round(x, 3) for x in over] == [1.5, 1.5]
    assert steps == [20.0, 10.0] and [round(x, 3) for x in lat] == [0.5, 0.2]


def test_update_doc_replaces_only_the_link_section(tmp_path):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Cache\n\nfast\n\n## Link\n\nold\n\n## GUI\n\nsmooth\n")
    link.update_doc("## Link\n\nnew\n", doc)
    assert doc.read_text() == "# Benchmarks\n\n## Cache\n\nfast\n\n## Link\n\nnew\n\n## GUI\n\nsmooth\n"
    fresh = tmp_path / "none.md"
    link.update_doc("## Link\n\nnew\n", fresh)
    assert fresh.read_text() == "# Benchmarks\n\n## Link\n\nnew\n"
