"""A board in a box: an emulated arm64 Debian 12 on loopback that poses as an MT8371 board.

It is a STAND-IN for the board, not the board: the CPU is qemu's user-mode emulation of a Neoverse N1
(150-300x slower than native), there is no NPU, and the SoC name and thermal zones it reports are files this
tool writes. It checks correctness and the deploy path, never performance.
"""
