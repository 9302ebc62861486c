"""Executes examples/notebook/ab-test.ipynb headless (nbclient, the python3 kernel) and checks its
HTML table: the report of reference against the notebook's numpy function."""
import sys

import nbclient
import nbformat

nb = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
html = [o["data"]["text/html"] for c in nb.cells if c.cell_type == "code"
        for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
assert len(html) == 1, "one HTML output expected, got %d" % len(html)
table = html[0]
for want in ('<table class="sagerun-report">', "<td>reference</td>", "<td>textbook</td>",
             "(baseline)", "tol. ok", "<td>cos "):
    assert want in table, "the notebook's table lacks %r:\n%s" % (want, table)
printed = "".join(o.get("text", "") for o in nb.cells[3].get("outputs", []))
assert "accepted by: tolerance" in printed, printed
print("the notebook ran; its table:\n" + table)
