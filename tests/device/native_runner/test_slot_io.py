"""The native runner's slot values (device/native_runner/slot_io.c) against NumPy's: every fp16 bit pattern read as
fp32 by the logits' vectorized row conversion, and fp32 rounded to fp16 as `astype` rounds, compiled with the
runner's own flags."""
from __future__ import annotations

import subprocess

import numpy as np

from device.toolchain.native_runner_build import FLAGS, SOURCES, SPEC_HEADER

DRIVER = r"""
#include <stdio.h>
#include <string.h>
#include "slot_io.h"
int main(int argc, char **argv) {
    static uint16_t halves[65536], rounded[65536];
    static float widened[65536], floats[65536];
    FILE *f = fopen(argv[1], "rb");
    if (argc < 3 || !f || fread(floats, 4, 65536, f) != 65536) return 1;
    fclose(f);
    for (int i = 0; i < 65536; i++) halves[i] = (uint16_t)i, rounded[i] = wkv_f16_from_f32(floats[i]);
    wkv_slot s;
    memset(&s, 0, sizeof s);
    s.native = WKV_ELEM_F16, s.elem_bytes = 2, s.rows = 1, s.row = s.pitch = 65536;
    wkv_slot_get(&s, halves, 0, widened, 1, 65536);
    f = fopen(argv[2], "wb");
    fwrite(widened, 4, 65536, f), fwrite(rounded, 2, 65536, f);
    return fclose(f) != 0;
}
"""


def test_fp16_rows_widen_and_fp32_rounds_as_numpy_does(tmp_path):
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = tmp_path / "driver"
    subprocess.run(["cc", *FLAGS, "-I", str(SOURCES), "-I", str(SPEC_HEADER.parent), str(tmp_path / "driver.c"),
                    str(SOURCES / "slot_io.c"), "-o", str(exe), "-lm"], check=True)
    rng = np.random.default_rng(7)
    # around every fp16 boundary: subnormals, the rounding midpoints, overflow to infinity, NaN
    floats = np.concatenate([np.arange(-65520.0, 65520.0, 2.0, np.float32)[:32768],
                             rng.standard_normal(32760).astype(np.float32) * np.float32(2.0 ** -14),
                             np.array([np.inf, -np.inf, np.nan, 65520.0, -65520.0, 6e-8, 2.9802322e-08, 0.0],
                                      np.float32)])
    floats.tofile(tmp_path / "in.f32")
    subprocess.run([str(exe), str(tmp_path / "in.f32"), str(tmp_path / "out")], check=True)
    out = (tmp_path / "out").read_bytes()
    widened, rounded = np.frombuffer(out[:65536 * 4], "<u4"), np.frombuffer(out[65536 * 4:], "<u2")
    every_half = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    assert np.array_equal(widened, every_half)
    with np.errstate(over="ignore"):
        assert np.array_equal(rounded, floats.astype(np.float16).view(np.uint16))
