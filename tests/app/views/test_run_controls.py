"""Runs never ask for attention with the cache off: the uncached reference has no attention output, and the
runner refuses such a request. The box keeps its state, so attention comes back with the cache."""
from app.views.run_controls import RunControls
from core.decode.options import DecodeOptions


def test_attention_follows_the_cache(qtbot):
    controls = RunControls()
    qtbot.addWidget(controls)
    controls.set_options(DecodeOptions(attention=True))
    assert controls.run_options().attention and controls.attention.isEnabled()
    controls.cache.setChecked(False)
    assert not controls.run_options().attention and not controls.attention.isEnabled()
    assert controls.options().attention          # what is saved: the box as the user left it
    controls.cache.setChecked(True)
    assert controls.run_options().attention and controls.attention.isEnabled()
