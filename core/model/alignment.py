"""Whisper's alignment heads: the (layer, head) pairs of the decoder's cross-attention whose weights
follow the audio in time (openai-whisper's `_ALIGNMENT_HEADS`, Hugging Face's `alignment_heads`).

A model directory says which they are: CTranslate2's `config.json` and Hugging Face's
`generation_config.json` both carry `alignment_heads: [[layer, head], ...]`. Without one (an exported
bundle), Whisper base's list stands for a model of base's shape.
"""
from __future__ import annotations

import json
from pathlib import Path

from core.model.dims import ModelDims

Heads = tuple[tuple[int, int], ...]

# openai/whisper-base generation_config.json == openai-whisper _ALIGNMENT_HEADS["base"] decoded.
BASE_ALIGNMENT_HEADS: Heads = ((3, 1), (4, 2), (4, 3), (4, 7), (5, 1), (5, 2), (5, 4), (5, 6))
_FILES = ("generation_config.json", "config.json")


def read_alignment_heads(directory: str | Path) -> Heads | None:
    """The heads a model directory lists, or None when none of its JSON files does."""
    for name in _FILES:
        path = Path(directory) / name
        try:
            heads = json.loads(path.read_text()).get("alignment_heads") if path.is_file() else None
        except (OSError, ValueError):
            heads = None
        if heads:
            return tuple((int(layer), int(head)) for layer, head in heads)
    return None


def alignment_heads(dims: ModelDims, files=()) -> Heads:
    """The heads for a model: from the directory of its weight files if it lists them, else base's
    (the last half of the layers' heads, openai-whisper's default, for another shape)."""
    for f in files:
        found = read_alignment_heads(Path(f).parent)
        if found:
            return check_heads(found, dims)
    if dims == ModelDims():
        return BASE_ALIGNMENT_HEADS
    return tuple((layer, head) for layer in range(dims.n_text_layer // 2, dims.n_text_layer)
                 for head in range(dims.n_text_head))


def check_heads(heads: Heads, dims: ModelDims) -> Heads:
    bad = [h for h in heads if not (0 <= h[0] < dims.n_text_layer and 0 <= h[1] < dims.n_text_head)]
    if bad or not heads:
        raise ValueError(f"alignment heads {bad or heads} do not fit {dims.n_text_layer} layers x "
                         f"{dims.n_text_head} heads")
    return tuple(sorted(heads))
