"""The NPU profile tab: the shown run's per-op times from the Neuron runtime's own profiler, a graph at a time
(the encoder per window, the decoder per step), slowest first. A run is profiled when its device profile ticks
"NPU profile" (the runner starts with the profiler on; core/model/npu_profile.py reads the reports)."""
from __future__ import annotations

from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from core.model.npu_profile import label

NOT_PROFILED = ("This run was not profiled. Tick “NPU profile” in the device panel: the runner then starts with the "
                "Neuron runtime's profiler on (the dla backend, or tflite with the Neuron delegate).")
NO_REPORT = ("The runner's Neuron runtime wrote no report for this run: its backend does not run on the Neuron "
             "runtime (use dla, or tflite with the Neuron delegate).")


class NpuProfileView(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.note = QLabel(NOT_PROFILED)
        self.note.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["ms an inference", "share", "op (or layer)"])
        self.tree.setRootIsDecorated(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.tree, 1)
        self._shown: object = ()

    def show_run(self, run) -> None:      # a run view (app/views/view_table.py)
        self.set_run(run)

    def refresh(self, run) -> None:
        self.set_run(run)

    def set_run(self, run) -> None:
        """Cheap when nothing changed: the window calls it on every refresh of the run on display."""
        found = getattr(run, "npu_profile", None)
        if found is self._shown:
            return
        self._shown = found
        self.tree.clear()
        if not found:
            self.note.setText(NOT_PROFILED if found is None else NO_REPORT)
            return
        self.note.setText(f"The Neuron runtime's profile: {len(found)} graph(s). "
                          f"Table read: {found[0]['table']}")
        for p in found:
            top = QTreeWidgetItem([f"{p['ms_per_inference']:.3f}", "100%",
                                   f"{label(p['graph'])}, over {p['inferences']} inferences"])
            for o in p["ops"]:
                top.addChild(QTreeWidgetItem([f"{o['ms']:.3f}", f"{o['share']:.1%}", o["name"]]))
            self.tree.addTopLevelItem(top)
            top.setExpanded(p is found[0])
        self.tree.resizeColumnToContents(0)
