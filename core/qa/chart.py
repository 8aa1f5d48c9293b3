"""Small inline-SVG charts for self-contained HTML reports: no external assets, no plotting library. Line
charts over the decode steps, and the cross-attention heatmap of a clip."""
from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from core.qa.attention_map import merged_rows

W, H = 560, 150
LEFT, RIGHT, TOP, BOTTOM = 46, 10, 18, 22


@dataclass
class Chart:
    title: str
    x_max: float
    y_max: float
    y_format: str = "{:g}"
    parts: list[str] = field(default_factory=list)

    def x(self, v: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * (v / self.x_max if self.x_max else 0)

    def y(self, v: float) -> float:
        return H - BOTTOM - (H - TOP - BOTTOM) * (min(v, self.y_max) / self.y_max if self.y_max else 0)

    def line(self, ys: list[float], color: str, xs: list[float] | None = None) -> "Chart":
        xs = xs if xs is not None else list(range(len(ys)))
        pts = " ".join(f"{self.x(a):.1f},{self.y(b):.1f}" for a, b in zip(xs, ys))
        if pts:
            self.parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{pts}"/>')
        return self

    def band(self, x0: float, x1: float, color: str, label: str = "") -> "Chart":
        """A shaded x range, e.g. a repetition loop."""
        a, b = self.x(x0), self.x(x1)
        self.parts.append(f'<rect x="{a:.1f}" y="{TOP}" width="{max(b - a, 1):.1f}" height="{H - TOP - BOTTOM}" '
                          f'fill="{color}" opacity="0.25"><title>{escape(label)}</title></rect>')
        return self

    def rule(self, x: float, color: str, label: str = "") -> "Chart":
        """A vertical marker, e.g. the EOT step or a window boundary."""
        a = self.x(x)
        self.parts.append(f'<line x1="{a:.1f}" x2="{a:.1f}" y1="{TOP}" y2="{H - BOTTOM}" stroke="{color}" '
                          f'stroke-dasharray="3,2"><title>{escape(label)}</title></line>')
        if label:   # on the right of the line, unless that runs off the chart
            x, anchor = (a + 3, "start") if a < W - RIGHT - 90 else (a - 3, "end")
            self.parts.append(f'<text x="{x:.1f}" y="{TOP + 10}" font-size="10" fill="{color}" '
                              f'text-anchor="{anchor}">{escape(label)}</text>')
        return self

    def hbar(self, x0: float, x1: float, row: int, color: str, label: str) -> "Chart":
        """A horizontal bar on one of two alternating rows, e.g. a timestamped segment."""
        y = TOP + 8 + (row % 2) * 40
        a, b = self.x(x0), self.x(x1)
        self.parts.append(f'<rect x="{a:.1f}" y="{y}" width="{max(b - a, 1):.1f}" height="30" fill="{color}" '
                          f'opacity="0.7"><title>{escape(label)}</title></rect>')
        return self

    def svg(self, x_label: str = "step") -> str:
        x0, x1, y0, y1 = LEFT, W - RIGHT, TOP, H - BOTTOM
        axes = [f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="#fafafa" stroke="#ccc"/>',
                f'<text x="{x0}" y="12" font-size="12" font-weight="bold">{escape(self.title)}</text>']
        for frac in (0, 0.5, 1):
            v, y = self.y_max * frac, self.y(self.y_max * frac)
            axes.append(f'<text x="{x0 - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">'
                        f'{escape(self.y_format.format(v))}</text>')
        axes.append(f'<text x="{x0}" y="{H - 6}" font-size="10">0</text>')
        axes.append(f'<text x="{x1}" y="{H - 6}" font-size="10" text-anchor="end">'
                    f'{escape(f"{self.x_max:g}")} {escape(x_label)}</text>')
        body = "".join(axes + self.parts)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
                f'role="img" aria-label="{escape(self.title)}">{body}</svg>')


def heatmap_svg(title: str, attention: dict, max_height: int = 300) -> str:
    """A clip's cross-attention (core/qa/attention_map.py): a row per decode step from the top, seconds of
    audio across, darker where the step looked; a red dot where each window's last step looked."""
    rows = attention["rows"]
    bin_s, x_max = attention["bin_s"], max(attention["n_bins"] * attention["bin_s"], 1e-9)
    plot_h = min(max_height, max(100, 3 * len(rows)))
    merged, group = merged_rows(rows, int(plot_h / 1.5))
    h = TOP + plot_h + BOTTOM
    row_h = plot_h / max(1, len(merged))
    chart = Chart(title, x_max, 1.0)
    cell_w = max(chart.x(bin_s) - chart.x(0), 1.0)
    parts = [f'<rect x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" height="{plot_h}" fill="#fff" stroke="#ccc"/>',
             f'<text x="{LEFT}" y="12" font-size="12" font-weight="bold">{escape(title)}</text>',
             f'<text x="{LEFT - 4}" y="{TOP + 10}" font-size="10" text-anchor="end">0</text>',
             f'<text x="{LEFT - 4}" y="{TOP + plot_h}" font-size="10" text-anchor="end">{len(rows)}</text>',
             f'<text x="{LEFT - 4}" y="{TOP + plot_h / 2:.1f}" font-size="10" text-anchor="end">step</text>',
             f'<text x="{LEFT}" y="{h - 6}" font-size="10">0</text>',
             f'<text x="{W - RIGHT}" y="{h - 6}" font-size="10" text-anchor="end">{x_max:g} s</text>']
    for r, row in enumerate(merged):
        y = TOP + r * row_h
        for col, level in sorted(row.items()):
            parts.append(f'<rect x="{chart.x(col * bin_s):.1f}" y="{y:.1f}" width="{cell_w:.1f}" '
                         f'height="{max(row_h, 1):.1f}" fill="#08306b" fill-opacity="{level / 100:.2f}"/>')
    for step, at_s, what in attention.get("marks", []):
        cy = TOP + (step // group + 0.5) * row_h
        parts.append(f'<circle cx="{chart.x(at_s):.1f}" cy="{cy:.1f}" r="4" fill="#d62728" stroke="#fff">'
                     f'<title>{escape(f"{what} at step {step} looked at {at_s:.2f} s")}</title></circle>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" '
            f'role="img" aria-label="{escape(title)}">{"".join(parts)}</svg>')
