"""Fonts that can draw Chinese: without a CJK family installed, Chinese renders as empty boxes."""
from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase

PREFERRED_CJK = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Source Han Sans SC", "Microsoft YaHei", "PingFang SC")


def cjk_families() -> list[str]:
    return list(QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese))


def cjk_family() -> str | None:
    found = cjk_families()
    for name in PREFERRED_CJK:
        if name in found:
            return name
    return found[0] if found else None


def transcript_font(point_size: int) -> QFont:
    """Latin from the default family, falling back to a CJK family for Chinese characters."""
    font = QFont()
    cjk = cjk_family()
    if cjk:
        font.setFamilies([QFont().defaultFamily(), cjk])
    font.setPointSize(point_size)
    return font
