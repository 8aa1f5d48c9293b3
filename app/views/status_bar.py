"""Status bar: the connected device, the runner's backend and where its graphs run (on the Neuron runtime, its
library, version and API in the tooltip), and the model (its dtype,
its cross-attention form and its hash), always visible."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QStatusBar

from app.runs.progress import progress
from core.model.placement import RanOn


class StatusBar(QStatusBar):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.device = QLabel()
        self.backend = QLabel()
        self.model = QLabel()
        for label in (self.device, self.backend, self.model):
            label.setStyleSheet("padding: 0 8px;")
            self.addPermanentWidget(label)
        self.show_device("local", "not connected")

    def show_device(self, url: str, state: str, runner: dict | None = None) -> None:
        runner = runner or {}
        self.device.setText(f"Device: {url} ({state})")
        ran_on = runner.get("ran_on") or {}
        self.backend.setText(f"Backend: {runner.get('backend', '—')}"
                             + (f" · on {ran_on['short']}" if ran_on.get("short") else ""))
        placed = RanOn.from_dict(ran_on)
        runtime = placed.runtime if placed else ""
        self.backend.setToolTip((f"ran on {ran_on['label']}" if ran_on.get("label") else "")
                                + (f"\n{runtime}" if runtime else ""))
        sha = runner.get("model_sha256", "")
        form = " · ".join(filter(None, (runner.get("dtype"), runner.get("cross") and f"{runner['cross']} cross")))
        self.model.setText(f"Model: {form + ' · ' if form else ''}{sha[:12] if sha else '—'}")
        self.model.setToolTip(f"{sha}\n{form}: the weights' dtype and the cross-attention state's form" if form
                              else sha)

    def show_progress(self, run) -> None:
        """While the run on display decodes: its name, window and step ("test.wav · window 3 of 12 · step 41"); the
        message area is not laid out again, as a banner changing every frame would be."""
        where = progress(run)
        text = f"Decoding {run.audio_name} · {where}" if where else ""
        if text and text != self.currentMessage():
            self.showMessage(text)
