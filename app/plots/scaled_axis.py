"""A second y axis that labels the same data in other units (here cache tokens shown as MB)."""
from __future__ import annotations

import pyqtgraph as pg


class ScaledAxis(pg.AxisItem):
    """Ticks fall on round values of `value * scale`, placed in the unscaled coordinates of the plot."""

    def __init__(self, scale: float, orientation: str = "right", **kw):
        super().__init__(orientation, **kw)
        self.scale_factor = scale

    def set_scale(self, scale: float) -> None:
        self.scale_factor = scale
        self.picture = None
        self.update()

    def tickValues(self, minVal, maxVal, size):
        s = self.scale_factor
        levels = super().tickValues(minVal * s, maxVal * s, size)
        return [(spacing / s, [v / s for v in values]) for spacing, values in levels]

    def tickStrings(self, values, scale, spacing):
        s = self.scale_factor
        return super().tickStrings([v * s for v in values], scale, spacing * s)
