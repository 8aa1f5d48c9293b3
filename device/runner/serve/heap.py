"""glibc's heap held steady: freed large arrays go back to the system (the runner, and the CLI beside it)."""
from __future__ import annotations

import ctypes


def steady_heap(threshold: int = 1 << 18) -> None:
    """glibc raises its mmap threshold each time a large block is freed, so later cross K/V arrays (3 MB
    a layer) come from the heap, and evicted ones linger there: a long-running runner's RSS then wanders
    by a hundred MB from request to request. A fixed threshold keeps large arrays mmapped and returned to
    the system when freed (tests/device/runner/serve/test_soak.py). 256 KiB rather than 1 MiB: the encoder's
    row blocks ([375, 512] fp32, 750 KB) then leave no freed heap resident for the decode after it (runner
    peak -5 MiB, docs/benchmarks.md "Whole process"). Not glibc: nothing to do."""
    try:
        libc = ctypes.CDLL(None)
    except (OSError, TypeError):
        return
    if hasattr(libc, "mallopt"):
        libc.mallopt(-3, threshold)      # M_MMAP_THRESHOLD (also ends the dynamic adjustment)
