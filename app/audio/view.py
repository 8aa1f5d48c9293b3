"""Waveform of the clip, and below it the log-mel the app computed: exactly the windows that get sent."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from app.runs.clip import AudioClip

FRAMES_PER_S = 100  # 10 ms hop


class AudioView(pg.GraphicsLayoutWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.wave_plot = self.addPlot(row=0, col=0)
        self.wave_plot.setLabel("left", "amplitude")
        self.wave_plot.hideAxis("bottom")
        self.wave_plot.setMouseEnabled(x=True, y=False)
        self.wave = self.wave_plot.plot([], [], pen=pg.mkPen("#1f77b4"))
        self.wave.setDownsampling(auto=True, method="peak")
        self.wave.setClipToView(True)
        self.mel_plot = self.addPlot(row=1, col=0)
        self.mel_plot.setLabel("left", "mel bin")
        self.mel_plot.setLabel("bottom", "seconds (mel as sent, 30 s windows)")
        self.mel_plot.setMouseEnabled(x=True, y=False)
        self.mel_plot.setXLink(self.wave_plot)
        self.mel_image = pg.ImageItem(axisOrder="row-major")
        self.mel_image.setColorMap(pg.colormap.get("viridis"))
        self.mel_plot.addItem(self.mel_image)
        self.spans = []
        for plot in (self.wave_plot, self.mel_plot):
            span = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 193, 7, 90), pen=pg.mkPen("#ff8f00"))
            span.setZValue(10)
            span.setVisible(False)
            plot.addItem(span, ignoreBounds=True)
            self.spans.append(span)
        self.ci.layout.setRowStretchFactor(0, 1)
        self.ci.layout.setRowStretchFactor(1, 2)
        self.clip: AudioClip | None = None
        self.set_clip(None)

    def set_clip(self, clip: AudioClip | None) -> None:
        self.clip = clip
        self.hide_span()
        if clip is None:
            self.wave.setData([], [])
            self.mel_image.clear()
            self.wave_plot.setXRange(0, 30, padding=0)
            self.mel_plot.setYRange(0, 80, padding=0)
            return
        t = np.arange(len(clip.samples), dtype=np.float32) / 16000
        self.wave.setData(t, clip.samples)
        mel = np.concatenate(list(clip.mels), axis=-1)  # [80, W*3000]
        self.mel_image.setImage(mel, levels=(float(mel.min()), float(mel.max())))
        self.mel_image.setRect(0, 0, mel.shape[1] / FRAMES_PER_S, mel.shape[0])
        self.wave_plot.setXRange(0, mel.shape[1] / FRAMES_PER_S, padding=0)

    def show_span(self, start_s: float, end_s: float) -> None:
        """Shade the seconds a clicked word or token covers, on the waveform and the mel."""
        for span in self.spans:
            span.setRegion((start_s, end_s))
            span.setVisible(True)

    def hide_span(self) -> None:
        for span in self.spans:
            span.setVisible(False)

    def span(self) -> tuple[float, float] | None:
        return tuple(self.spans[0].getRegion()) if self.spans[0].isVisible() else None

    def mel_shape(self) -> tuple[int, ...]:
        image = self.mel_image.image
        return () if image is None else image.shape
