#!/usr/bin/env python3
"""Compare `swaptrace info --json --latency` with `btt -A` on the same trace.

btt's per-device latency table (Q2Q, Q2G, G2I, Q2M, I2D, D2C, Q2C, and
Q2Qdm, Q2Cdm for the devices it takes for remappers), its
all-devices table (which alone has M2D) and its merge table must match:
counts, minimum and maximum exactly as btt prints them (9 decimals), the
average within 2 ns (btt sums seconds in doubles, swaptrace nanoseconds).
Prints one line per difference and exits 1 when there is any.
"""
import json
import re
import sys

btt_text, info_json = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
ROW = re.compile(r"^(\(\s*\d+,\s*\d+\)|\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s*$")
STAGES = ("Q2Qdm", "Q2Cdm", "Q2Q", "Q2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C")


def dev_name(label):
    maj, mino = re.findall(r"\d+", label)
    return "%s:%s" % (maj, mino)


def sections(text):
    """{section title: its lines}"""
    out, title = {}, None
    for line in text.splitlines():
        m = re.match(r"^=+ (.*?) =+$", line)
        if m:
            title = m.group(1)
            out[title] = []
        elif title:
            out[title].append(line)
    return out


sec = sections(btt_text)
btt = {}  # (dev or "ALL", stage) -> (min, avg, max, n)
stage = None
for line in sec.get("Per Device", []):
    head = line.split()
    if len(head) == 5 and head[1:] == ["MIN", "AVG", "MAX", "N"]:
        stage = head[0]
        continue
    m = ROW.match(line)
    if m and stage in STAGES:
        btt[(dev_name(m.group(1)), stage)] = m.groups()[1:]
for line in sec.get("All Devices", []):
    m = ROW.match(line)
    if m and m.group(1) in STAGES:
        btt[("ALL", m.group(1))] = m.groups()[1:]
merges = {}
for line in sec.get("Device Merge Information", []):
    m = re.match(r"^\s*(\(\s*\d+,\s*\d+\))\s*\|\s*(\d+)\s+(\d+)\s+([\d.]+)\s*\|"
                 r"\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", line)
    if m:
        merges[dev_name(m.group(1))] = m.groups()[1:]

ours = {}
for d in info_json["devices"]:
    for stage, s in d.get("latency", {}).items():
        ours[(d["dev"], stage)] = s
for stage, s in info_json.get("latency", {}).items():
    ours[("ALL", stage)] = s

bad = []
if not btt or not merges:
    bad.append("btt printed no per-device tables")
for key in sorted(set(btt) | set(ours)):
    if key[1] == "M2D" and key[0] != "ALL":
        continue  # btt prints M2D for all devices together only
    if key not in btt or key not in ours:
        bad.append("%s %s: btt %s, swaptrace %s" % (key + (btt.get(key), ours.get(key))))
        continue
    bmin, bavg, bmax, bn = btt[key]
    o = ours[key]
    if ("%.9f" % o["min"], "%.9f" % o["max"], str(o["n"])) != (bmin, bmax, bn) or \
            abs(o["avg"] - float(bavg)) > 2e-9:
        bad.append("%s %s: btt min %s avg %s max %s n %s, swaptrace %.9f %.9f %.9f %d"
                   % (key + (bmin, bavg, bmax, bn, o["min"], o["avg"], o["max"], o["n"])))
for d in info_json["devices"]:
    m = d.get("merges")
    mine = None if m is None else (
        str(m["queued"]), str(m["dispatched"]),
        "%.1f" % (m["queued"] / m["dispatched"] if m["dispatched"] else 0),
        str(m["blk_min"]), str(m["blk_avg"]), str(m["blk_max"]), str(m["blk_total"]))
    if mine != merges.get(d["dev"]):
        bad.append("%s merges: btt %s, swaptrace %s" % (d["dev"], merges.get(d["dev"]), mine))
for line in bad:
    print(line)
sys.exit(1 if bad else 0)
