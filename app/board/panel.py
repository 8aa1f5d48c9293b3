"""Device panel: Local/SSH/ADB picker with saved profiles, connect, test connection (device-info),
deploy with a progress bar, and Check board (the doctor's rungs as they are decided, a legend of their marks,
and doctor.html written and opened: app/board/check_view.py). The window runs the actual work off the UI thread."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.board import passwords
from app.board.check_view import CheckView
from app.board.info_words import sentences
from app.board.setting_fields import SettingFields
from device.link.profile import DeviceProfile
from device.link.target import Target
from device.link.urls import DeviceURL
from device.spec.settings import KINDS

KIND_LABELS = {"local": "Local (this PC)", "ssh": "SSH", "adb": "ADB"}
# The address's fields, by kind and by name (the rows of DevicePanel.named); the settings' fields say their own kinds
# (device/spec/settings.py).
ADDRESS = {"local": set(), "ssh": {"host", "user", "port", "password"}, "adb": {"serial"}}
QA = {"floor", "require_npu"}


class DevicePanel(QGroupBox):
    connectRequested = Signal(object, str)    # DeviceProfile, password
    testRequested = Signal(object, str)
    deployRequested = Signal(object, str)
    checkRequested = Signal(object, str)
    profilesChanged = Signal(list)            # [DeviceProfile]

    def __init__(self, parent=None):
        super().__init__("Device", parent)
        self.profiles: list[DeviceProfile] = [DeviceProfile()]
        self.profile_combo = QComboBox()
        self.save_button = QPushButton("Save")
        self.delete_button = QPushButton("Delete")
        self.kind_combo = QComboBox()
        for k in KINDS:
            self.kind_combo.addItem(KIND_LABELS[k], k)
        self.host = QLineEdit()
        self.host.setPlaceholderText("board.local or ~/.ssh/config alias")
        self.user = QLineEdit()
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(22)
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("kept in the keyring" if passwords.can_store() else "never saved")
        self.serial = QLineEdit()
        self.serial.setPlaceholderText("see `adb devices -l`")
        self.fields = SettingFields()         # key, trust, python, dir, model, backend, delegate, neuron, NPU profile
        self.floor = QDoubleSpinBox()
        self.floor.setRange(0.0, 100000.0)
        self.floor.setDecimals(1)
        self.floor.setSuffix(" tokens/s")
        self.floor.setSpecialValueText("none")      # 0: no floor
        self.floor.setToolTip("QA on this device fails a clip whose decoder runs slower than this (a suite's own "
                              "floor applies too: the stricter one holds)")
        self.require_npu = QCheckBox("fail a QA clip that ran on the CPU")
        self.require_npu.setToolTip("QA on this device fails a clip whose graphs ran, wholly or in part, on the CPU")
        self.connect_button = QPushButton("Connect")
        self.test_button = QPushButton("Test connection")
        self.deploy_button = QPushButton("Deploy")
        self.check_button = QPushButton("Check board")
        self.check_button.setToolTip("Climb the doctor's rungs, from reaching the device to its tokens and speed, "
                                     "and stop at the first that fails with its fix (docs/doctor.md)")
        self.progress = QProgressBar()
        self.progress.setVisible(False)
        self.info = QPlainTextEdit()
        self.info.setReadOnly(True)
        self.info.setMaximumHeight(110)
        self.info.setPlaceholderText("Test connection shows the device-info here.")
        self.check_view = CheckView()
        self.check_view.setVisible(False)     # until Check board is pressed

        top = QHBoxLayout()
        top.addWidget(self.profile_combo, 1)
        top.addWidget(self.save_button)
        top.addWidget(self.delete_button)
        self.form = QFormLayout()
        self.form.addRow("Kind", self.kind_combo)
        self.form.addRow("Host", self.host)
        self.form.addRow("User", self.user)
        self.form.addRow("Port", self.port)
        self.form.addRow("Password", self.password)
        self.form.addRow("Serial", self.serial)
        self.fields.add_to(self.form)
        self.form.addRow("QA floor", self.floor)
        self.form.addRow("Require NPU", self.require_npu)
        # every field below Kind by its name: shown or hidden by name, never by its label
        self.named: dict[str, QWidget] = {"host": self.host, "user": self.user, "port": self.port,
                                          "password": self.password, "serial": self.serial, **self.fields.widgets,
                                          "floor": self.floor, "require_npu": self.require_npu}
        buttons = QGridLayout()       # two by two: a fourth button in one row would widen the window's side panel
        for i, b in enumerate((self.connect_button, self.test_button, self.deploy_button, self.check_button)):
            buttons.addWidget(b, i // 2, i % 2)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(self.form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.info)
        layout.addWidget(self.check_view)

        self.kind_combo.currentIndexChanged.connect(self._show_fields)
        self.fields["dir"].textChanged.connect(self._show_fields)
        self.profile_combo.currentIndexChanged.connect(self._load_selected)
        self.save_button.clicked.connect(self._save)
        self.delete_button.clicked.connect(self._delete)
        self.connect_button.clicked.connect(lambda: self.connectRequested.emit(self.profile(), self.password.text()))
        self.test_button.clicked.connect(lambda: self.testRequested.emit(self.profile(), self.password.text()))
        self.deploy_button.clicked.connect(lambda: self.deployRequested.emit(self.profile(), self.password.text()))
        self.check_button.clicked.connect(lambda: self.checkRequested.emit(self.profile(), self.password.text()))
        self.set_profiles(self.profiles)

    # --- profiles -------------------------------------------------------------------------------

    def set_profiles(self, profiles: list[DeviceProfile], current: str = "") -> None:
        self.profiles = profiles or [DeviceProfile()]
        self.profile_combo.blockSignals(True)
        self.profile_combo.clear()
        for p in self.profiles:
            self.profile_combo.addItem(p.name)
        self.profile_combo.blockSignals(False)
        names = [p.name for p in self.profiles]
        self.profile_combo.setCurrentIndex(names.index(current) if current in names else 0)
        self._load_selected()

    def _load_selected(self) -> None:
        i = self.profile_combo.currentIndex()
        if 0 <= i < len(self.profiles):
            self.show_profile(self.profiles[i])

    def show_profile(self, p: DeviceProfile) -> None:
        url = p.target.url
        self.kind_combo.setCurrentIndex(KINDS.index(url.scheme) if url.scheme in KINDS else 0)
        self.host.setText(url.host if url.scheme == "ssh" else "")
        self.user.setText(url.user or "")
        self.port.setValue(url.port or 22)
        self.serial.setText(url.host if url.scheme == "adb" else "")
        self.fields.show(p.target)
        self.floor.setValue(p.min_tokens_per_s or 0.0)
        self.require_npu.setChecked(p.require_npu)
        self.password.setText(passwords.load(p.secret_key()) if p.kind == "ssh" else "")
        self._show_fields()

    def profile(self) -> DeviceProfile:
        """The profile the form shows; checked when it is used (a missing host says so then, in the form's words)."""
        kind = self.kind_combo.currentData()
        if kind == "ssh":
            port = self.port.value()
            url = DeviceURL("ssh", self.host.text().strip(), self.user.text().strip() or None,
                            None if port == 22 else port)
        else:
            url = DeviceURL(kind, self.serial.text().strip() if kind == "adb" else "")
        return DeviceProfile(self.profile_combo.currentText() or "Unsaved", Target(url, **self.fields.values()),
                             min_tokens_per_s=self.floor.value(), require_npu=self.require_npu.isChecked())

    def current_name(self) -> str:
        return self.profile_combo.currentText()

    def _save(self) -> None:
        name, ok = QInputDialog.getText(self, "Save device profile", "Profile name:", text=self.current_name())
        if ok and name.strip():
            self.save_as(name.strip())

    def save_as(self, name: str) -> DeviceProfile:
        p = self.profile()
        p.name = name
        self.profiles = [q for q in self.profiles if q.name != name] + [p]
        if p.kind == "ssh" and self.password.text():
            passwords.store(p.secret_key(), self.password.text())  # no keyring: the password is not kept
        self.set_profiles(self.profiles, name)
        self.profilesChanged.emit(self.profiles)
        return p

    def _delete(self) -> None:
        name = self.current_name()
        self.profiles = [p for p in self.profiles if p.name != name]
        self.set_profiles(self.profiles)
        self.profilesChanged.emit(self.profiles)

    def _show_fields(self) -> None:
        kind = self.kind_combo.currentData()
        visible = ADDRESS[kind] | self.fields.names_for(kind) | QA
        for name, field in self.named.items():
            self.form.setRowVisible(field, name in visible)
        self.deploy_button.setEnabled(self._can_deploy())

    # --- feedback from the window ---------------------------------------------------------------

    def set_busy(self, busy: bool) -> None:
        for b in (self.connect_button, self.test_button, self.check_button):
            b.setEnabled(not busy)
        self.deploy_button.setEnabled(not busy and self._can_deploy())

    def _can_deploy(self) -> bool:
        # Locally there is nothing to deploy unless a separate runner directory is named.
        return self.kind_combo.currentData() != "local" or bool(self.fields["dir"].text().strip())

    def show_info(self, info: dict) -> None:
        self.info.setPlainText("\n".join(sentences(info)))      # in sentences, not the report's dict
        if self.check_view.report is None:      # a check that could not climb leaves no rungs to show
            self.check_view.setVisible(False)

    def show_lines(self, lines: list[str]) -> None:
        self.info.setPlainText("\n".join(lines))

    def begin_check(self, url: str) -> None:
        self.show_lines([f"checking {url}…"])
        self.check_view.begin()
        self.check_view.setVisible(True)

    def show_rung(self, index: int, status: int) -> None:
        self.check_view.show_rung(index, status)

    def show_check(self, report: dict) -> None:
        """The doctor's report: one sentence here, every rung in the check view."""
        self.check_view.show_report(report)
        failed = next((r for r in report["rungs"] if r["status"] == "fail"), None)
        self.show_lines([f"Check board of {report['device']} stopped at {failed['name']}; its row says the fix."
                         if failed else f"Check board of {report['device']}: no rung failed."])

    def show_progress(self, done: int, total: int) -> None:
        self.progress.setVisible(True)
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)

