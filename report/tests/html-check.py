#!/usr/bin/env python3
"""html-check.py - checks the report page as the browser rendered it (chromium --dump-dom).

Usage: html-check.py DOM_FILE CSV_DIR. Every chart is present with its bars; each view's
table holds exactly its CSV (cell by cell); the utilization printed on each bar is the CSV's
util_total_pct of that period; every CSV download link carries the same CSV. Prints
`ok -`/`not ok -` lines; exit 1 on any failure.
"""
import csv
import io
import sys
import urllib.parse
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tables, self.utils, self.bars, self.links = set(), {}, {}, {}, {}
        self._table = self._row = self._cell = self._util = None
        self._svg = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "svg":
            self._svg = a.get("id")
            self.bars[self._svg] = 0
        elif tag == "rect" and a.get("class") == "bar":
            self.bars[self._svg] += 1
        elif tag == "text" and a.get("class") == "util" and self._svg == "chart-used":
            self._util = a["data-period"]
            self.utils[self._util] = ""
        elif tag == "table" and a.get("class") == "view":
            self._table = a["id"][len("view-"):]
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        elif tag == "a" and a.get("class") == "csv":
            self.links[a["download"]] = a["href"]

    def handle_endtag(self, tag):
        if tag == "svg":
            self._svg = None
        elif tag == "text":
            self._util = None
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._util is not None:
            self.utils[self._util] += data


def main():
    dom = Dom()
    dom.feed(open(sys.argv[1]).read())
    failed = 0

    def check(name, ok, detail=""):
        nonlocal failed
        print(("ok - " if ok else "not ok - ") + name)
        if not ok:
            failed += 1
            print("    # " + str(detail)[:2000])

    for chart in ("chart-used", "chart-team", "chart-tier", "chart-series"):
        check(f"chart {chart} rendered", chart in dom.ids, sorted(dom.ids))
    for chart in ("chart-used", "chart-team", "chart-tier"):
        check(f"chart {chart} has bars", dom.bars.get(chart, 0) > 0, dom.bars)
    for view in ("periods", "team", "tier", "series", "storage"):
        text = open(f"{sys.argv[2]}/{view}.csv").read()
        rows = list(csv.reader(io.StringIO(text)))
        check(f"table {view} shows exactly {view}.csv", dom.tables.get(view) == rows,
              (dom.tables.get(view, [])[:3], rows[:3]))
        href = dom.links.get(f"{view}.csv", "")
        prefix = "data:text/csv;charset=utf-8,"
        check(f"download link of {view}.csv carries the CSV",
              href.startswith(prefix) and urllib.parse.unquote(href[len(prefix):]) == text)
        if view == "periods":
            header, body = rows[0], rows[1:]
            util = {r[0]: r[header.index("util_total_pct")] + "%" for r in body}
            check("utilization on each bar equals the CSV", dom.utils == util, (dom.utils, util))
    sys.exit(1 if failed else 0)


main()
