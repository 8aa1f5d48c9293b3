"""An integer graph's input and output slots (device/toolchain/int_quantize.py): each holds int8 or int16 with
one scale and zero point, real = (q - zero_point) * scale. The tflite backend reads them from the interpreter,
the dla backend from what `whisperkv compile` recorded in model.json."""
from __future__ import annotations

import numpy as np


def to_slot(value, dtype, scale: float, zero_point: int) -> np.ndarray:
    """float32 as an integer slot wants it; what lies outside its range saturates (the mask's -1e9 too)."""
    value = np.asarray(value, np.float32)
    info = np.iinfo(dtype)
    return np.clip(np.rint(value / np.float32(scale)) + zero_point, info.min, info.max).astype(dtype)


def from_slot(value: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """An integer slot's values as float32."""
    return (value.astype(np.float32) - np.float32(zero_point)) * np.float32(scale)
