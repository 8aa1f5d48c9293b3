"""The real flow: test_en.wav → mel on the host → BoardClient → local runner → events → window."""
from __future__ import annotations

import csv
import io
import json

from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage

from core.decode.events import TokenEvent
from core.qa.scoring import error_rate
from tests.app.conftest import transcribe_and_wait, wait_for


def first_run(window):
    run = window.session.runs[0]
    window.show_run(run)
    return run


def test_transcript_matches_reference(en_window, references):
    run = first_run(en_window)
    assert run.error is None
    assert run.stop_reason == "eot"
    assert error_rate(references["test_en.wav"]["reference"], run.text(), "en") <= 0.10
    shown = en_window.transcript.plain_text()
    assert error_rate(references["test_en.wav"]["reference"], shown.replace("⟨EOT⟩", ""), "en") <= 0.10
    assert shown.rstrip().endswith("⟨EOT⟩")
    assert en_window.banner.reason == "eot"
    assert f"EOT at step {len(run.rows) - 1}" in en_window.banner.text()


def test_mel_shown_is_the_mel_sent(en_window):
    assert en_window.clip.mels.shape == (1, 80, 3000)
    assert en_window.audio.view.mel_shape() == (80, 3000)


def test_status_bar_names_device_backend_and_model(en_window):
    status = en_window.status
    assert "local" in status.device.text() and "connected" in status.device.text()
    backend = en_window.board.runner["backend"]
    assert backend and backend in status.backend.text()
    sha = en_window.board.runner["model_sha256"]
    assert len(sha) == 64 and sha[:12] in status.model.text()


def test_graphs_and_table_hold_one_point_per_step(en_window):
    run = first_run(en_window)
    steps = sum(isinstance(ev, TokenEvent) for ev in run.events)
    assert steps == len(run.rows) > 10
    for plot in en_window.plots.plots():
        assert plot.point_count() == steps
    assert en_window.table.row_count() == steps
    assert en_window.plots.latency.curve.getData()[1][0] == run.rows[0].event.ms
    assert [r.event.cache_len for r in run.rows] == sorted(r.event.cache_len for r in run.rows)
    assert "encoder" in en_window.plots.latency.title.note


def test_table_and_plots_are_linked_both_ways(en_window):
    first_run(en_window)
    en_window.table.selectRow(5)
    for plot in en_window.plots.plots():
        assert plot.cursor.isVisible() and plot.cursor.value() == 5
    en_window.plots.cache.stepClicked.emit(7)
    assert en_window.table.currentIndex().row() == 7
    assert en_window.plots.eot.cursor.value() == 7


def test_hover_names_the_step_token(en_window):
    run = first_run(en_window)
    plot = en_window.plots.cache
    hovered = []
    plot.stepHovered.connect(hovered.append)
    scene_pos = plot.plotItem.vb.mapViewToScene(QPointF(3, run.rows[3].event.cache_len))
    plot.scene().sigMouseMoved.emit(scene_pos)
    assert hovered == [3]
    assert plot.hover_label.isVisible() and repr(run.rows[3].event.text) in plot.hover_label.textItem.toPlainText()


def test_exports_parse(en_window, tmp_path):
    run = first_run(en_window)
    for kind in ("txt", "srt", "vtt", "csv", "json", "png"):
        en_window.exports.export(kind, str(tmp_path / f"out.{kind}"))
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").strip() == run.text()
    srt = (tmp_path / "out.srt").read_text(encoding="utf-8").splitlines()
    # Phrases of the word timings (tests/app/runs/test_phrase_cues.py), no longer one 11 s cue.
    assert srt[0] == "1" and srt[1].startswith("00:00:0") and srt[1] != "00:00:00,000 --> 00:00:11,000"
    assert "ask not" in " ".join(srt)
    vtt = (tmp_path / "out.vtt").read_text(encoding="utf-8").splitlines()
    assert vtt[0] == "WEBVTT" and vtt[2].startswith("00:00:0") and " --> " in vtt[2]
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out.csv").read_text(encoding="utf-8"))))
    assert len(rows) == len(run.rows)
    assert [int(r["token"]) for r in rows] == [r.event.token for r in run.rows]
    session = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    exported = session["runs"][0]
    assert len(exported["events"]) == len(run.events)
    assert exported["settings"]["language"] == "en" and exported["settings"]["cache"] is True
    assert exported["device_info"]["backend"] == en_window.board.runner["backend"]
    assert exported["device_info"]["model_sha256"] == en_window.board.runner["model_sha256"]
    assert all("host_arrival_ms" in ev for ev in exported["events"])
    image = QImage(str(tmp_path / "out.png"))
    assert not image.isNull() and image.width() > 300


def test_compare_cache_off_states_the_speedup(en_window):
    cached = en_window.session.runs[0]
    uncached = transcribe_and_wait(en_window, language="en", cache=False)
    assert uncached.error is None and uncached.stop_reason == "eot"
    en_window.compare.choose(cached.id, uncached.id)
    verdict = en_window.compare.verdict.text()
    assert "faster per token" in verdict and "Tokens identical" in verdict
    assert all(c.getData()[0] is not None and len(c.getData()[0]) > 10 for c in en_window.compare.curves)


def test_stop_cancels_and_keeps_the_partial_run(en_window):
    from dataclasses import replace

    # EOT suppressed: left alone the run would go on to 224 tokens, so Stop always lands mid-decode.
    en_window.controls.set_options(replace(en_window.controls.options(), suppress_eot=True, max_tokens=224))
    finished = []
    en_window.runFinished.connect(finished.append)
    run = en_window.transcribe()
    wait_for(lambda: len(run.rows) >= 2 or finished, "a few tokens")
    en_window.stop()
    wait_for(lambda: finished, "the cancelled run to end")
    en_window.runFinished.disconnect(finished.append)
    en_window.controls.set_options(replace(en_window.controls.options(), suppress_eot=False))
    assert run.stop_reason == "cancelled" and run.error is None
    assert 2 <= len(run.rows) < 224
    assert en_window.banner.reason == "cancelled"
    assert en_window.plots.cache.point_count() == len(run.rows)


def test_qa_tab_and_segments_are_hosted_by_the_window(en_window):
    run = en_window.session.runs[0]
    assert en_window.tabs.indexOf(en_window.qa) >= 0
    en_window.qa.openRunRequested.emit(run)      # what a click on a QA row asks for
    assert en_window.run is run and en_window.run_picker.currentData() == run.id
    assert en_window.segments.rowCount() == 0  # no timestamps asked for: the view says how to get them
