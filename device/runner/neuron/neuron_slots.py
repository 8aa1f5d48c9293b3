"""A compiled graph's slots: the contract model.json records, the form the runtime takes each slot in, and the
copies between a decoder's arrays and the runtime's buffers.

The contract (its names: device/spec/slot_contract.py; `whisperkv compile` writes it: device/toolchain/compile.py):
model.json's "dla" carries `contract: CONTRACT` and, per graph, the compile flags and each input and output slot in
the compiler's order (the TFLite graph's): its name, shape and `.tflite` dtype, and an integer slot's one scale and
zero point.

The form, from what the runtime reports at load (never a hard-coded alignment):
- the element size is get*Size over the slot's elements: 2 bytes is fp16, 4 bytes the `.tflite`'s fp32; an integer
  slot keeps its own type;
- with conversion suppressed, the row pitch comes from get*PaddedSize: padding after each innermost row. The one
  public Whisper runner on this family (hhlqwq/mtk_models whisper_tiny/deploy/board/whisper_board_eval.cpp, a
  Genio 720) feeds fp16 buffers of the padded sizes (its one-hot input: 51865 elements padded to 51872) and reads an
  output that came unpadded (its logits: exactly 51865);
- with conversion on, the buffers are the element size at the tensor's own size, and the padded size is only
  checked not to be smaller.
Any other combination is refused at load, in one line naming the slot and both sizes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ModelError
from device.runner.tflite.int_slots import from_slot, to_slot
from device.spec.neuron_fixes import SLOT_FIX
from device.spec.slot_contract import CONTRACT, FLOAT_SLOT_DTYPES, INT_SLOT_DTYPES

_INT = {name: np.dtype(name.lower()) for name in INT_SLOT_DTYPES}


@dataclass(frozen=True)
class SlotForm:
    """One slot as the runtime takes it: `native` elements in rows of `row` values `pitch` apart."""
    kind: str                    # input | output
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str                   # the .tflite's TensorType name
    native: np.dtype             # the buffer's element type
    pitch: int                   # elements from one innermost row's start to the next (>= row)
    size: int                    # get*Size
    padded: int | None           # get*PaddedSize, where exported
    scale: float | None = None   # an integer slot's quantization
    zero_point: int = 0

    @property
    def row(self) -> int:
        return self.shape[-1] if self.shape else 1

    @property
    def rows(self) -> int:
        return int(np.prod(self.shape[:-1], dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        """The buffer's bytes: the padded size when rows are padded, else the size."""
        return self.rows * self.pitch * self.native.itemsize

    def describe(self) -> dict:
        """What hello's backend_detail and the doctor's report say of the slot (docs/board.md)."""
        return {"kind": self.kind, "name": self.name, "shape": list(self.shape), "tflite": self.dtype,
                "size": self.size, "padded_size": self.padded, "element": str(self.native),
                "element_bytes": self.native.itemsize, "row": self.row, "pitch": self.pitch}

    def buffer(self) -> np.ndarray:
        return np.zeros((self.rows, self.pitch), self.native)

    def takes_as_is(self, value: np.ndarray) -> bool:
        """The decoder's array is already this slot's buffer (no padding, the native type, contiguous)."""
        return (self.pitch == self.row and value.dtype == self.native and value.flags.c_contiguous
                and value.size == self.rows * self.row)

    def fill(self, buf: np.ndarray, value: np.ndarray) -> np.ndarray:
        """`value` (float, or already native) written into `buf`'s rows; returns `buf`."""
        rows = np.asarray(value).reshape(self.rows, self.row)
        if self.scale is not None:
            rows = to_slot(rows, self.native, self.scale, self.zero_point)
        buf[:, :self.row] = rows
        return buf

    def read(self, buf: np.ndarray, keep_native: bool = False) -> np.ndarray:
        """The tensor in `buf`, padding dropped: float32 (an integer slot dequantized), or with `keep_native` an
        fp16 slot's values as fp16. Always a new array: the buffer is the next run's."""
        rows = buf[:, :self.row]
        if self.scale is not None:
            out = from_slot(rows, self.scale, self.zero_point)
        else:
            out = rows.astype(np.float16 if keep_native and self.native == np.float16 else np.float32)
        return out.reshape(self.shape)


def check_contract(dla: dict, where: str) -> None:
    """A bundle compiled before the slot contract (or by a newer whisperkv) is refused in one line."""
    version = dla.get("contract")
    if version != CONTRACT:
        found = "before the slot contract" if version is None else f"with slot contract {version}"
        raise ModelError(f"the bundle at {where} was compiled {found}; this runner reads contract {CONTRACT}",
                         SLOT_FIX)


def _refuse(file: str, kind: str, i: int, slot: dict, size: int, padded: int | None, why: str) -> ModelError:
    return ModelError(f"{file} {kind} slot {i} ({slot['name']} {slot['dtype']} {slot['shape']}) is {size} bytes in "
                      f"the runtime (padded {padded if padded is not None else 'not reported'}): {why}", SLOT_FIX
                      + "; if it persists, send `whisperkv doctor --out DIR`'s report with a bug")


def derive(file: str, kind: str, i: int, slot: dict, size: int, padded: int | None, suppressed: bool) -> SlotForm:
    """The form of recorded `slot` from the runtime's sizes (see the module's docstring)."""
    shape = tuple(int(n) for n in slot["shape"])
    elements = int(np.prod(shape, dtype=np.int64)) if shape else 1
    refuse = lambda why: _refuse(file, kind, i, slot, size, padded, why)  # noqa: E731
    if slot["dtype"] in _INT:
        if "scale" not in slot:
            raise ModelError(f"model.json records no scale for the integer {kind} {slot['name']} of {file}",
                             SLOT_FIX)
        native = np.dtype(_INT[slot["dtype"]])
    elif slot["dtype"] in FLOAT_SLOT_DTYPES:
        native = {2: np.dtype(np.float16), 4: np.dtype(np.float32)}.get(size // elements if size % elements == 0
                                                                        else 0)
    else:
        native = None
    if native is None or size != elements * native.itemsize:
        raise refuse(f"not {elements} elements of a type the slot can take")
    row = shape[-1] if shape else 1
    pitch = row
    if suppressed and padded is not None and padded != size:
        per_row = (elements // row) * native.itemsize
        if padded < size or padded % per_row:
            raise refuse(f"the padded size is not {elements // row} rows of at least {row} elements")
        pitch = padded // per_row
    elif not suppressed and padded is not None and padded < size:
        raise refuse("the padded size is smaller than the size")
    scale = (float(slot["scale"]), int(slot.get("zero_point", 0))) if slot["dtype"] in _INT else (None, 0)
    return SlotForm(kind, i, slot["name"], shape, slot["dtype"], native, pitch, size, padded, *scale)
