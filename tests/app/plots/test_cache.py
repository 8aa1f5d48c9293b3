"""The KV-cache plot's title puts the self K/V in use beside the cross-attention cache the runner reported."""
from __future__ import annotations

from app.plots.cache import CachePlot
from app.runs.session import Session
from core.decode.events import EncodedEvent
from tests.app.runs.test_compare import F_BYTES, KV_BYTES, run_with
from tests.app.runs.test_exports import make_run, token


def test_the_title_shows_self_and_cross_cache_sizes(qtbot):
    plot = CachePlot()
    qtbot.addWidget(plot)
    session = Session()
    plot.draw(run_with(session, "kv", KV_BYTES, 10.0))
    # five tokens: cache_len 8 after the last, 8 x 24 576 B
    assert plot.title.head == "KV-cache fill · self K/V 0.20 MB + cross K/V 36.9 MB"
    plot.draw(run_with(session, "absorbed", F_BYTES, 10.0))
    assert plot.title.head == "KV-cache fill · self K/V 0.20 MB + cross F 3.1 MB (absorbed)"
    plot.draw(make_run(session, [EncodedEvent(0, 900.0, "en"), token(0, 0, 1, "x")]))
    assert plot.title.head == "KV-cache fill"
