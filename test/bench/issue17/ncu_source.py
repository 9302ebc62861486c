"""ncu's per-instruction source page (`ncu -i REPORT --page source --csv --print-source sass` of a report
collected with `--section SourceCounters`), as stall_groups.py and loop_stalls.py read it."""
import csv
import sys


class SourcePage:
    """The page's rows (`data`), its header (`col`: column index by name), the stall-reason columns
    (`reasons`) and value(row, name), a number with ncu's thousands separators removed (0 if blank)."""

    def __init__(self, path):
        rows = list(csv.reader(open(path, newline="")))
        if len(rows) < 3 or "Instructions Executed" not in rows[1]:
            sys.exit(f"{path}: not an ncu source page (no 'Instructions Executed' column in line 2)")
        self.head, self.data = rows[1], rows[2:]
        self.col = {name: i for i, name in enumerate(self.head)}
        self.reasons = [h for h in self.head if h.startswith("stall_") and "Not Issued" not in h]

    def value(self, row, name):
        try:
            return float(row[self.col[name]].replace(",", ""))
        except (ValueError, IndexError, KeyError):
            return 0.0
