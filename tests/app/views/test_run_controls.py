"""Runs never ask for attention with the cache off: the uncached reference has no attention output, and
DecodeOptions refuses such options. The box keeps its state, so attention comes back with the cache."""
from app.views.run_controls import RunControls
from core.decode.options import DecodeOptions


def test_attention_follows_the_cache(qtbot):
    controls = RunControls()
    qtbot.addWidget(controls)
    controls.set_options(DecodeOptions(attention=True))
    assert controls.options().attention and controls.attention.isEnabled()
    controls.cache.setChecked(False)
    assert not controls.options().attention and not controls.attention.isEnabled()
    assert controls.attention.isChecked()        # what is saved: the box as the user left it
    controls.cache.setChecked(True)
    assert controls.options().attention and controls.attention.isEnabled()


def test_an_out_of_range_max_tokens_is_refused_with_a_message(qtbot):
    """Typing 999 (the ceiling is 448) used to leave 99 in the box without a word."""
    from PySide6.QtCore import Qt

    controls = RunControls()
    qtbot.addWidget(controls)
    controls.show()
    controls.max_tokens.setValue(120)
    refused = []
    controls.max_tokens.refused.connect(refused.append)
    editor = controls.max_tokens.lineEdit()
    controls.max_tokens.setFocus()
    editor.selectAll()
    qtbot.keyClicks(editor, "999")
    assert editor.text() == "999"
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert controls.max_tokens.value() == 120 and controls.options().max_tokens == 120
    assert refused == ["Max tokens must be 1–448: 999 refused, 120 kept"]
    editor.selectAll()
    qtbot.keyClicks(editor, "300")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert controls.max_tokens.value() == 300 and len(refused) == 1
