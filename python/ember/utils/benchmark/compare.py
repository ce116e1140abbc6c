"""Compare: a table of Measurements' medians, one block per label, a row per
sub_label (or statement) and a column per description, as torch's Compare
prints them (without its colouring and trimming options)."""
from ember.utils.benchmark.common import Measurement, select_unit

__all__ = ["Compare"]

_UNIT_NAMES = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}


class Compare:
    def __init__(self, results):
        self._results = list(results)
        self._threads_rows = False

    def extend_results(self, results):
        self._results.extend(results)

    def colorize(self, rowwise=False):
        """Kept for torch scripts: ember's table has no colours."""

    def trim_significant_figures(self):
        """Kept for torch scripts: the table always shows two decimals."""

    def highlight_warnings(self):
        """Kept for torch scripts: noisy cells are marked with '(!)' anyway."""

    def _blocks(self):
        blocks = {}
        for m in Measurement.merge(self._results):
            blocks.setdefault(m.label, []).append(m)
        return blocks

    def _render_block(self, label, measurements):
        columns = list(dict.fromkeys(m.description or "" for m in measurements))
        rows = list(dict.fromkeys((m.sub_label or m.stmt, m.num_threads) for m in measurements))
        unit, scale = select_unit(min(m.median for m in measurements))
        cells = {((m.sub_label or m.stmt, m.num_threads), m.description or ""): m for m in measurements}
        threads = len({r[1] for r in rows}) > 1
        header = [""] + columns
        table = [header]
        for row in rows:
            name = f"{row[0]} ({row[1]} threads)" if threads else row[0]
            line = [name]
            for col in columns:
                m = cells.get((row, col))
                line.append("" if m is None else f"{m.median / scale:.2f}" + (" (!)" if m.has_warnings else ""))
            table.append(line)
        widths = [max(len(r[i]) for r in table) for i in range(len(header))]
        text = [f"[{'-' * 2} {label or ''} {'-' * 2}]"]
        for r in table:
            text.append("  " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                                          enumerate(zip(r, widths))).rstrip())
        text.append(f"\nTimes are in {_UNIT_NAMES[unit]} ({unit}).")
        return "\n".join(text)

    def __str__(self):
        return "\n\n".join(self._render_block(label, ms) for label, ms in self._blocks().items())

    def print(self):
        print(str(self))
