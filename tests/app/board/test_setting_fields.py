"""The device panel's fields are the settings table's (device/spec/settings.py): a row added there, with the studio's
words for it (app/board/setting_words.py), is a field of the panel, shown for the kinds it names, and what is typed
into it reaches the runner and the saved profile."""
from __future__ import annotations

import pytest

import app.board.panel
from app.board.form_terms import in_form_terms
from app.board.panel import DevicePanel
from app.board.setting_words import WORDS, Words
from app.errors import Failure
from core.errors import Fix, Setting
from device.link.profile import DeviceProfile
from device.runner.serve.agent import parser as runner_parser
from device.spec.settings import SETTINGS
from tests.device.spec.test_settings import ToyTarget, toy_row  # noqa: F401  (a fixture)


@pytest.fixture
def toy_field(toy_row, monkeypatch):  # noqa: F811
    """The row and its Target field (tests/device/spec/test_settings.py), and the studio's words for it."""
    monkeypatch.setitem(WORDS, toy_row.name, Words("Toy threads", "one a core"))
    monkeypatch.setattr(app.board.panel, "Target", ToyTarget)
    return toy_row


def _labels(panel) -> list[str]:
    form = panel.form
    return [form.itemAt(row, form.ItemRole.LabelRole).widget().text() for row in range(form.rowCount())]


def test_every_row_the_studio_shows_is_a_field_in_the_table_order(qtbot):
    panel = DevicePanel()
    qtbot.addWidget(panel)
    shown = [WORDS[s.name].label for s in SETTINGS if s.studio]
    assert [label for label in _labels(panel) if label in shown] == shown
    assert {"Neuron library", "Neuron API", "Neuron QoS", "Model", "NPU profile"} <= set(shown)


def test_a_new_row_is_a_field_whose_value_reaches_the_runner_and_the_saved_profile(qtbot, toy_field):
    panel = DevicePanel()
    qtbot.addWidget(panel)
    assert "Toy threads" in _labels(panel)
    panel.show_profile(DeviceProfile.from_url("ssh://root@board?toy_threads=2"))
    field = panel.fields["toy_threads"]
    assert field.text() == "2" and field.isVisibleTo(panel) and field.placeholderText() == "one a core"
    field.setText("3")
    profile = panel.save_as("board")
    assert profile.runner_target().runner_args() == ["--toy-threads", "3"]
    assert runner_parser().parse_args(profile.runner_target().runner_args()).toy_threads == "3"
    assert DeviceProfile.from_dict(profile.to_dict()).url() == "ssh://root@board?toy_threads=3"
    # a fix that names its URL setting names its field instead
    fix = Fix("", Setting("toy_threads", "N", "pass"), ", or ", Setting("neuron_api", "v1", "drop"))
    assert fix == "pass ?toy_threads=N, or drop ?neuron_api=v1"          # the CLI's line
    said = in_form_terms(Failure("too many threads", fix))
    assert said.fix == "fill in Toy threads, or clear Neuron API"


def test_neuron_lib_works_in_a_studio_profile(qtbot):
    """The studio refused ?neuron_lib= before the table; a dla board's library is now a field like any other."""
    panel = DevicePanel()
    qtbot.addWidget(panel)
    panel.kind_combo.setCurrentIndex(2)                # ADB
    panel.serial.setText("SER1")
    panel.fields["backend"].setCurrentText("dla")
    panel.fields["neuron_lib"].setText("/vendor/lib64/libneuron_runtime.so")
    panel.fields["neuron_qos"].setCurrentText("off")
    assert panel.profile().runner_target().runner_args() == [
        "--backend", "dla", "--neuron-lib", "/vendor/lib64/libneuron_runtime.so", "--neuron-qos", "off"]


def test_fields_are_shown_and_hidden_by_setting_name_not_by_label(qtbot, monkeypatch):
    """A field's label is only words: one worded like an address field ("Host") still follows its own row's kinds."""
    monkeypatch.setitem(WORDS, "key", Words("Host", "~/.ssh/id_ed25519"))
    monkeypatch.setitem(WORDS, "model", Words("Serial"))
    panel = DevicePanel()
    qtbot.addWidget(panel)
    panel.show_profile(DeviceProfile.from_url("adb://SER1"))
    assert panel.serial.isVisibleTo(panel) and not panel.host.isVisibleTo(panel)
    assert not panel.fields["key"].isVisibleTo(panel) and panel.fields["model"].isVisibleTo(panel)
    panel.show_profile(DeviceProfile.from_url("ssh://root@board"))
    assert panel.host.isVisibleTo(panel) and panel.fields["key"].isVisibleTo(panel)
    assert not panel.serial.isVisibleTo(panel) and panel.fields["model"].isVisibleTo(panel)
    assert panel.floor.isVisibleTo(panel) and panel.require_npu.isVisibleTo(panel)


def test_an_adb_profile_offers_the_runner_and_its_folder_and_gives_its_url_back(qtbot):
    """An Android board over adb (issue 54): the panel shows the serial, the runner choice and the runner's folder,
    whose placeholder names Android's default, and the profile saves the URL unchanged."""
    panel = DevicePanel()
    qtbot.addWidget(panel)
    url = "adb://SER123?runner=native&backend=dla"
    panel.show_profile(DeviceProfile.from_url(url))
    assert panel.serial.text() == "SER123" and panel.serial.isVisibleTo(panel)
    assert panel.fields["runner"].isVisibleTo(panel) and panel.fields["dir"].isVisibleTo(panel)
    assert "/data/local/tmp/whisperkv" in panel.fields["dir"].placeholderText()
    assert not panel.fields["key"].isVisibleTo(panel)                   # SSH's only
    profile = panel.save_as("android")
    assert profile.kind == "adb" and profile.target.runner == "native" and profile.url() == url
