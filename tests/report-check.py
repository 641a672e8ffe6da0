#!/usr/bin/env python3
"""Check a report directory written by `swaptrace report`.

usage: report-check.py DIR PNG_CHECK [EXPECT]

Every chart the index links must be well formed: NAME.json parses and
names the chart; NAME.svg parses as XML, is 1200x700 px and carries the
same title in <title> and the metadata in <metadata>; NAME.png is a
1200x700 picture that is not blank (PNG_CHECK, a C checker built on
cairo's PNG loader).  index.html must parse as XML and link only files
that exist.  A policy's legend entry has one colour in every chart that
draws runs (policy, sweep, ra-window, memory).

EXPECT (a JSON file) adds per-chart expectations:
  {"policy": {"title_has": "...", "series": {"fixed": 3, ...},
              "series_exactly": true, "panels": 3,
              "x_labels": [...], "y_labels": [...], "categories": ["7:0 /dev/loop0"],
              "messages": ["..."], "messages_exactly": true,
              "notes_have": ["..."]},
   "charts": ["policy", ...],          # exactly these charts are drawn
   "runs": 30}                         # rows in the index's run table
A series count of -1 means "present, any number of points".
Prints one line per problem and exits 1 if there was any.
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
problems = []


def problem(msg):
    problems.append(msg)
    print("FAIL: " + msg)


def check_chart(d, name, png_check):
    meta_path = os.path.join(d, name + ".json")
    try:
        meta = json.load(open(meta_path, encoding="utf-8"))
    except (OSError, ValueError) as e:
        problem("%s: metadata: %s" % (name, e))
        return None
    if meta.get("name") != name:
        problem("%s: metadata names '%s'" % (name, meta.get("name")))
    if not meta.get("title"):
        problem("%s: no title" % name)
    if (meta.get("width"), meta.get("height")) != (1200, 700):
        problem("%s: metadata size %sx%s" % (name, meta.get("width"), meta.get("height")))
    formats = meta.get("formats", [])
    if "svg" in formats:
        svg_path = os.path.join(d, name + ".svg")
        try:
            root = ET.parse(svg_path).getroot()
        except (OSError, ET.ParseError) as e:
            problem("%s: SVG does not parse: %s" % (name, e))
            root = None
        if root is not None:
            if root.tag != SVG + "svg":
                problem("%s: SVG root is %s" % (name, root.tag))
            if (root.get("width"), root.get("height")) != ("1200px", "700px"):
                problem("%s: SVG size %s x %s" % (name, root.get("width"), root.get("height")))
            title = root.find(SVG + "title")
            if title is None or title.text != meta["title"]:
                problem("%s: SVG <title> %r differs from the metadata's %r"
                        % (name, None if title is None else title.text, meta["title"]))
            desc = root.find(SVG + "desc")
            if desc is None or not desc.text:
                problem("%s: SVG has no <desc>" % name)
            md = root.find(SVG + "metadata")
            try:
                embedded = json.loads(md.text) if md is not None else None
            except ValueError:
                embedded = None
            if not embedded or embedded.get("series") != meta.get("series") or \
                    embedded.get("panels") != meta.get("panels"):
                problem("%s: SVG <metadata> does not match NAME.json" % name)
            if len(root.findall(".//" + SVG + "path")) < 20:
                problem("%s: SVG draws almost nothing" % name)
    if "png" in formats:
        r = subprocess.run([png_check, os.path.join(d, name + ".png"), "1200", "700"],
                           capture_output=True, text=True)
        if r.returncode:
            problem("%s: PNG: %s" % (name, r.stderr.strip()))
    return meta


def check_expect(name, meta, exp):
    if "title_has" in exp and exp["title_has"] not in meta["title"]:
        problem("%s: title %r lacks %r" % (name, meta["title"], exp["title_has"]))
    series = {s["name"]: s["points"] for s in meta["series"]}
    for s, pts in exp.get("series", {}).items():
        if s not in series:
            problem("%s: no series %r (have %s)" % (name, s, sorted(series)))
        elif pts >= 0 and series[s] != pts:
            problem("%s: series %r has %d points, expected %d" % (name, s, series[s], pts))
    if exp.get("series_exactly") and set(series) != set(exp.get("series", {})):
        problem("%s: series %s, expected %s" % (name, sorted(series), sorted(exp.get("series", {}))))
    if "panels" in exp and len(meta["panels"]) != exp["panels"]:
        problem("%s: %d panels, expected %d" % (name, len(meta["panels"]), exp["panels"]))
    for key, field in (("x_labels", "x_label"), ("y_labels", "y_label"),
                       ("categories", "categories"), ("panel_titles", "title")):
        have = [p[field] for p in meta["panels"]]
        for want in exp.get(key, []):
            if want not in have:
                problem("%s: no panel with %s %r (have %r)" % (name, field, want, have))
    msgs = meta["messages"]
    for m in exp.get("messages", []):
        if not any(m in x for x in msgs):
            problem("%s: no message %r (have %r)" % (name, m, msgs))
    if exp.get("messages_exactly") and len(msgs) != len(exp.get("messages", [])):
        problem("%s: messages %r, expected only %r" % (name, msgs, exp.get("messages", [])))
    for n in exp.get("notes_have", []):
        if not any(n in x for x in meta["notes"]):
            problem("%s: no note %r (have %r)" % (name, n, meta["notes"]))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    d, png_check = sys.argv[1], sys.argv[2]
    expect = json.load(open(sys.argv[3])) if len(sys.argv) == 4 else {}
    index = os.path.join(d, "index.html")
    try:
        root = ET.parse(index).getroot()
    except (OSError, ET.ParseError) as e:
        problem("index.html does not parse: %s" % e)
        return 1
    charts = []
    for sec in root.iter("section"):
        # the two tables (traced reads, replay runs) are no charts
        if sec.get("id") and sec.get("id") not in ("reads", "runs"):
            charts.append(sec.get("id"))
    if not any(sec.get("id") == "reads" for sec in root.iter("section")):
        problem("index.html has no traced reads section")
    for el in list(root.iter("img")) + list(root.iter("a")):
        ref = el.get("src") or el.get("href")
        if ref and not ref.startswith("#") and not os.path.exists(os.path.join(d, ref)):
            problem("index.html links a missing file %r" % ref)
    for img in root.iter("img"):
        if not img.get("alt"):
            problem("index.html: an image without alt text")
    if "charts" in expect and charts != expect["charts"]:
        problem("charts %s, expected %s" % (charts, expect["charts"]))
    if "runs" in expect:
        rows = 0
        for sec in root.iter("section"):
            if sec.get("id") == "runs":
                rows = sum(1 for tr in sec.iter("tr") if tr.find("td") is not None)
        if rows != expect["runs"]:
            problem("run table has %d rows, expected %d" % (rows, expect["runs"]))
    colors = {}
    for name in charts:
        meta = check_chart(d, name, png_check)
        if meta is not None and name in expect:
            check_expect(name, meta, expect[name])
        if meta is None or name not in ("policy", "sweep", "ra-window", "memory"):
            continue
        for item in meta.get("legend", []):
            key = re.sub(r" \([0-9\u00a0]+ decisions\)$", "", item["name"])
            if key in colors and colors[key][1] != item["color"]:
                problem("%s draws %r in %s, %s in %s" % (name, key, item["color"],
                                                         colors[key][0], colors[key][1]))
            colors.setdefault(key, (name, item["color"]))
    for name in expect:
        if name not in ("charts", "runs") and name not in charts:
            problem("chart %r was not drawn" % name)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
