#!/bin/bash
# swaptrace report on the bundled sample, ingested for real, plus synthetic
# replay runs stored with sqlite3 (three policies at page-cluster 0..8,
# histograms, per-second series, layout runs): every chart is drawn, its
# SVG parses, its metadata names the expected title, axes and series, its
# PNG is a 1200x700 picture; two processes write identical files; --run,
# --policy and --format do what they say; bad arguments fail cleanly.
. "$(dirname "$0")/lib.sh"
need_tool sqlite3
need_tool python3
PNG_CHECK="$SWT_TOOLS_DIR/png-check"
CHECK="python3 $SWT_SOURCE_DIR/tests/report-check.py"
RUNS="python3 $SWT_SOURCE_DIR/tests/report-runs.py"

"$SWAPTRACE" ingest -q -o "$WORK/sample.db" "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0" ||
	{ fail "ingest of the sample failed"; finish; }
cp "$WORK/sample.db" "$WORK/runs.db"
$RUNS | sqlite3 "$WORK/runs.db" || fail "storing synthetic runs"

# --- every chart, full data ---
out=$("$SWAPTRACE" report -o "$WORK/r1" "$WORK/runs.db") || fail "report exited $?"
check_eq "$(echo "$out" | tail -n 1)" "swaptrace: report: 7 charts from 30 replay runs in '$WORK/r1': open '$WORK/r1/index.html'" \
	"report's last line says where the report is"
# the traced reads' table: what a read cost, computed here from the tables
# (the sample's reads are all swap-ins that a task faulted on)
python3 - "$WORK/runs.db" "$WORK/r1/index.html" <<'PY' || fail "index.html's traced reads table"
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
html = open(sys.argv[2]).read()
reads = [r for (r,) in db.execute("SELECT (complete_ns - issue_ns) / 1e6 FROM request"
                                  " WHERE write = 0 AND pc = 0 AND issue_ns IS NOT NULL"
                                  " AND complete_ns IS NOT NULL")]
reads.sort()
kib = db.execute("SELECT avg(nr_sectors) / 2.0 FROM request WHERE write = 0 AND pc = 0"
                 " AND issue_ns IS NOT NULL AND complete_ns IS NOT NULL").fetchone()[0]
q2c = db.execute("SELECT avg(r.complete_ns - b.queue_ns) / 1e6 FROM bio b JOIN request r"
                 " ON r.id = b.request_id WHERE r.write = 0 AND r.pc = 0").fetchone()[0]
# nearest rank: the smallest time that a share q of the reads do not exceed
rank = lambda pct: reads[(pct * len(reads) + 99) // 100 - 1]
want = ('<tr><td class="t">/dev/loop0 (7:0)</td><td>%s</td><td>%.1f</td><td>%.3f</td>'
        '<td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>'
        % ("{:,}".format(len(reads)).replace(",", "\u00a0"), kib, sum(reads) / len(reads),
           rank(50), rank(99), q2c))
assert len(reads) > 1000, len(reads)
assert want in html, (want, re.findall(r'<tr><td class="t">/dev/loop0 \(7:0\)</td>.*', html))
assert '<a href="#reads">Traced swap-in reads</a>' in html
PY
# swapoff's reads and reads of the disk that are no swap-ins wait for no
# fault: 50 of each, ten seconds long, leave the table as it was; so do
# second pages in 50 requests' bios (a request and a bio count once)
cp "$WORK/runs.db" "$WORK/other-reads.db"
python3 - "$WORK/other-reads.db" <<'PY' || fail "adding swapoff's reads and other reads"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
top = db.execute("SELECT max(id) FROM request").fetchone()[0]
db.execute("INSERT INTO task (pid, comm) VALUES (999999, 'swapoff')")
db.execute("INSERT INTO request (source_id, dev, write, rwbs, sector, nr_sectors, nr_bios,"
           " issue_ns, complete_ns) SELECT source_id, dev, 0, 'R', sector, nr_sectors, 1,"
           " issue_ns, issue_ns + 10000000000 FROM request WHERE write = 0 ORDER BY id LIMIT 100")
db.execute("INSERT INTO bio (source_id, request_id, dev, write, rwbs, sector, nr_sectors,"
           " queue_ns, pid) SELECT source_id, id, dev, 0, 'R', sector, nr_sectors, issue_ns - 1000,"
           " CASE WHEN id <= ?1 + 50 THEN 999999 ELSE 1 END FROM request WHERE id > ?1", (top,))
db.execute("INSERT INTO swap_in (ts, area_id, slot, dev, pid, bio_id, request_id, demand)"
           " SELECT b.queue_ns, (SELECT min(area_id) FROM swap_in), b.sector / 8, b.dev, 999999,"
           " b.id, b.request_id, 1 FROM bio b WHERE b.request_id > ?1 AND b.request_id <= ?1 + 50",
           (top,))
db.execute("INSERT INTO swap_in (ts, area_id, slot, dev, pid, bio_id, request_id, demand)"
           " SELECT ts, area_id, slot + 1, dev, pid, bio_id, request_id, 0 FROM swap_in"
           " WHERE id < (SELECT min(id) FROM swap_in) + 50")
db.commit()
PY
"$SWAPTRACE" report -f svg -o "$WORK/r-other-reads" "$WORK/other-reads.db" > /dev/null ||
	fail "report with swapoff's reads and other reads"
check_eq "$(grep '<tr><td class="t">/dev/loop0 (7:0)' "$WORK/r-other-reads/index.html")" \
	"$(grep '<tr><td class="t">/dev/loop0 (7:0)' "$WORK/r1/index.html")" \
	"the traced reads table counts only swap-ins a task faulted on, each request and bio once"
cat > "$WORK/expect.json" <<'EOF'
{
 "charts": ["policy", "sweep", "request-sizes", "timeline", "heatmap", "ra-window", "layout"],
 "runs": 30,
 "policy": {"title_has": "page-cluster 3", "panels": 3, "series_exactly": true,
            "series": {"fixed": 3, "adaptive": 3, "vma": 3,
                       "traced kernel at page-cluster 0 (machine-wide /proc/vmstat)": 2},
            "panel_titles": ["Accuracy", "Coverage", "Pages read per fault"],
            "x_labels": ["swap device"],
            "y_labels": ["readahead pages used (%)", "faults served by readahead (%)",
                         "pages read per swap fault"],
            "categories": ["7:0 /dev/loop0"], "messages_exactly": true},
 "sweep": {"panels": 3, "series_exactly": true,
           "series": {"fixed": 9, "adaptive": 9, "vma": 9, "traced kernel at page-cluster 0": 3},
           "x_labels": ["page-cluster"],
           "y_labels": ["faults served by readahead (%)", "pages read from swap (4 KiB)",
                        "read requests to the swap devices"], "messages_exactly": true},
 "request-sizes": {"title_has": "fixed, page-cluster 3", "panels": 1, "series_exactly": true,
                   "series": {"traced": 1, "simulated": 8},
                   "panel_titles": ["7:0 /dev/loop0"],
                   "x_labels": ["read request size (pages of 4 KiB)"],
                   "y_labels": ["read requests (log scale)"],
                   "categories": ["1|2|3|4|5|6|7|8"], "messages_exactly": true},
 "timeline": {"title_has": "shaded with simulated readahead hits and misses", "panels": 1,
              "series_exactly": true,
              "series": {"swap-in pages/s": -1, "swap-out pages/s": -1,
                         "simulated hits/s": 8, "simulated misses/s": 8},
              "x_labels": ["time since capture start (s)"], "y_labels": ["pages per second"],
              "messages_exactly": true},
 "heatmap": {"panels": 2, "series_exactly": true, "series": {"swap-outs": -1, "swap-ins": -1},
             "x_labels": ["time since capture start (s)"], "y_labels": ["swap slot"],
             "messages_exactly": true},
 "ra-window": {"title_has": "page-cluster 3", "panels": 1, "series_exactly": true,
               "series": {"fixed": 1, "adaptive": 4, "vma": 4},
               "x_labels": ["readahead window (pages of 4 KiB)"],
               "categories": ["1|2|4|8"], "messages_exactly": true},
 "layout": {"title_has": "fixed at page-cluster 3", "panels": 3, "series_exactly": true,
            "series": {}, "messages_exactly": true}
}
EOF
# the layout runs replay 'adaptive'; the first policy at page-cluster 3 is
# 'fixed', which has no layout runs, so the layout chart falls back to them
python3 - "$WORK/expect.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
e["layout"]["title_has"] = "adaptive at page-cluster 3"
e["layout"]["series"] = {"traced: 1 device": 3, "spread1: 1 device": 3,
                         "spread2: 2 devices": 3, "spread4: 4 devices": 3}
# a no-break space holds "4 devices" together in the axis labels
e["layout"]["categories"] = ["traced 1 device|spread1 1 device|"
                             "spread2 2 devices|spread4 4 devices"]
json.dump(e, open(sys.argv[1], "w"))
PY
$CHECK "$WORK/r1" "$PNG_CHECK" "$WORK/expect.json" || fail "charts with every kind of run"
ls "$WORK/r1"/*.png "$WORK/r1"/*.svg "$WORK/r1"/*.json >/dev/null 2>&1 || fail "files missing"
check_eq "$(ls "$WORK/r1" | wc -l)" 22 "7 charts x (png, svg, json) + index.html"

# --- two processes, same input: the same bytes, every file ---
"$SWAPTRACE" report -o "$WORK/r2" "$WORK/runs.db" >/dev/null || fail "second report"
for f in "$WORK/r1"/*; do
	cmp -s "$f" "$WORK/r2/$(basename "$f")" || fail "$(basename "$f") differs between two runs"
done
# SVG alone: the same SVG as when PNGs are drawn first in the same process
"$SWAPTRACE" report --format svg -o "$WORK/r3" "$WORK/runs.db" >/dev/null || fail "--format svg"
for f in "$WORK/r1"/*.svg; do
	cmp -s "$f" "$WORK/r3/$(basename "$f")" || fail "$(basename "$f") differs with --format svg"
done
check_eq "$(ls "$WORK/r3" | grep -c '\.png$')" 0 "--format svg writes no PNG"
grep -q 'src="policy.svg"' "$WORK/r3/index.html" || fail "index embeds the SVGs"
"$SWAPTRACE" report --format png -o "$WORK/r4" "$WORK/runs.db" >/dev/null || fail "--format png"
check_eq "$(ls "$WORK/r4" | grep -c '\.svg$')" 0 "--format png writes no SVG"
grep -q 'src="policy.png"' "$WORK/r4/index.html" || fail "index embeds the PNGs without SVGs"
$CHECK "$WORK/r4" "$PNG_CHECK" || fail "PNG-only report"

# --- a report over an earlier one removes the earlier one's files it does
# not write again, and nothing else ---
cp -r "$WORK/r1" "$WORK/over"
touch "$WORK/over/notes.txt" "$WORK/over/policy.txt"
mkdir "$WORK/over/policy.pdf"
"$SWAPTRACE" report --format png -o "$WORK/over" "$WORK/runs.db" >/dev/null || fail "png over png,svg"
check_eq "$(ls "$WORK/over" | grep -c '\.svg$')" 0 "png over png,svg: SVGs of the earlier report left"
check_eq "$(ls "$WORK/over" | wc -l)" 18 "png over png,svg: 7 charts x (png, json) + index.html + 3 others"
"$SWAPTRACE" report --run 4,22,13 -o "$WORK/over" "$WORK/runs.db" >/dev/null || fail "--run over all"
[ -e "$WORK/over/layout.png" ] || [ -e "$WORK/over/layout.json" ] &&
	fail "--run without layout runs over a report with them: the layout chart left"
for f in notes.txt policy.txt policy.pdf policy.png index.html; do
	[ -e "$WORK/over/$f" ] || fail "a report over an earlier one removed $f"
done

# --- --run and --policy ---
"$SWAPTRACE" report --run 4,22 --run 13 -o "$WORK/sel" "$WORK/runs.db" >/dev/null || fail "--run"
cat > "$WORK/expect-sel.json" <<'EOF'
{"runs": 3,
 "charts": ["policy", "request-sizes", "timeline", "heatmap", "ra-window"],
 "policy": {"series_exactly": true,
            "series": {"fixed": 3, "adaptive": 3, "vma": 3,
                       "traced kernel at page-cluster 0 (machine-wide /proc/vmstat)": 2}}}
EOF
$CHECK "$WORK/sel" "$PNG_CHECK" "$WORK/expect-sel.json" || fail "--run 4,22 --run 13"
# three runs at one page-cluster draw no trend: the sweep says why it is not drawn
grep -q "Not drawn: the compared runs are all at one page-cluster" "$WORK/sel/index.html" ||
	fail "--run at one page-cluster: index.html does not say why the sweep is left out"
"$SWAPTRACE" report --policy vma -o "$WORK/pol" "$WORK/runs.db" >/dev/null || fail "--policy"
echo '{"request-sizes": {"title_has": "vma, page-cluster 3"}, "timeline": {"series": {"simulated hits/s": 8}}}' \
	> "$WORK/expect-pol.json"
$CHECK "$WORK/pol" "$PNG_CHECK" "$WORK/expect-pol.json" || fail "--policy vma"
grep -q '<tr class="chosen"><td>22</td>' "$WORK/pol/index.html" ||
	fail "index marks run 22 (vma, page-cluster 3) as the one shown alone"
# a plugin of a long file name with long parameters, shown alone: the
# legends still end with the run and its page-cluster, after the name
cp "$WORK/runs.db" "$WORK/long.db"
sqlite3 "$WORK/long.db" "UPDATE run SET policy = '/p/' || printf('%.250c', 'L') || '.so',
	params = 'k=' || printf('%.300c', 'v') WHERE policy = 'vma'" || fail "long: renaming vma"
"$SWAPTRACE" report --run 22 -o "$WORK/long" "$WORK/long.db" >/dev/null || fail "long: report"
$CHECK "$WORK/long" "$PNG_CHECK" || fail "long: charts"
for chart in request-sizes timeline; do
	grep -q 'vvv) at page-cluster 3 (run #22)"' "$WORK/long/$chart.json" ||
		fail "long: $chart's legend does not name run 22 at page-cluster 3"
done

# --- runs at several memory sizes: the memory chart draws each policy
# replayed at two sizes or more; every other chart compares the runs at the
# memory most runs share, so the others are in none of them ---
cp "$WORK/sample.db" "$WORK/mem.db"
{ "$SWAPTRACE" replay -p auto -p fixed -c 0-3 "$WORK/mem.db" &&
  "$SWAPTRACE" replay -p auto -c 3 -m 50%,150% "$WORK/mem.db" &&
  "$SWAPTRACE" replay -p none -c 3 -m 75% "$WORK/mem.db"; } >/dev/null || fail "memory runs"
out=$("$SWAPTRACE" report -o "$WORK/mem" "$WORK/mem.db") || fail "memory report exited $?"
check_eq "$(echo "$out" | tail -n 1)" "swaptrace: report: 7 charts from 11 replay runs in '$WORK/mem': open '$WORK/mem/index.html'" \
	"memory: report's last line"
cat > "$WORK/expect-mem.json" <<'EOF'
{"runs": 11,
 "charts": ["policy", "sweep", "request-sizes", "timeline", "heatmap", "ra-window", "memory"],
 "policy": {"series_exactly": true,
            "series": {"auto": 3, "fixed": 3,
                       "traced kernel at page-cluster 0 (machine-wide /proc/vmstat)": 2}},
 "sweep": {"series_exactly": true,
           "series": {"auto": 4, "fixed": 4, "traced kernel at page-cluster 0": 3}},
 "ra-window": {"series_exactly": true, "series": {"auto": 4, "fixed": 1}},
 "memory": {"title_has": "page-cluster 3", "panels": 3, "series_exactly": true,
            "series": {"auto": 3, "memory of the other charts: 205 MiB (the cgroup limit)": 1},
            "panel_titles": ["Coverage", "Accuracy", "Pages read per fault"],
            "x_labels": ["memory of the traced task (MiB)"],
            "y_labels": ["faults served by readahead (%)", "readahead pages used (%)",
                         "pages read per swap fault"], "messages_exactly": true}}
EOF
$CHECK "$WORK/mem" "$PNG_CHECK" "$WORK/expect-mem.json" || fail "memory chart and the comparisons"
grep -q 'memory\.svg' "$WORK/mem/index.html" || fail "index shows the memory chart"
# a policy replayed only at another memory cannot be the one shown alone
msg=$("$SWAPTRACE" report --policy none -o "$WORK/mem2" "$WORK/mem.db" 2>&1 >/dev/null)
check_eq "$?" 1 "memory: --policy without a run at the compared memory exits 1"
check_eq "$msg" "swaptrace: report: policy 'none' has no replay run on the traced layout with the memory the charts compare (52480 pages, the size most runs share) in '$WORK/mem.db'" \
	"memory: --policy without a run at the compared memory, message"
# memory runs at another page-cluster than the comparisons': drawn at theirs
cp "$WORK/sample.db" "$WORK/mem-pc.db"
{ "$SWAPTRACE" replay -p auto -p fixed -c 3 "$WORK/mem-pc.db" &&
  "$SWAPTRACE" replay -p auto -c 2 -m 50%,100%,150% "$WORK/mem-pc.db"; } >/dev/null || fail "memory runs at page-cluster 2"
"$SWAPTRACE" report -o "$WORK/mem-pc" "$WORK/mem-pc.db" >/dev/null || fail "memory report, page-cluster 2"
echo '{"memory": {"title_has": "page-cluster 2", "series_exactly": true,
 "series": {"auto": 3, "memory of the other charts: 205 MiB (the cgroup limit)": 1}},
 "policy": {"title_has": "page-cluster 3"}}' > "$WORK/expect-mem-pc.json"
$CHECK "$WORK/mem-pc" "$PNG_CHECK" "$WORK/expect-mem-pc.json" || fail "memory chart at the memory runs' page-cluster"
# without runs at several sizes the chart is not drawn, and the index says why
grep -q "no policy was replayed at several memory sizes" "$WORK/r1/index.html" ||
	fail "index says why the memory chart is missing"
[ -e "$WORK/r1/memory.png" ] && fail "memory chart drawn without runs at several sizes"

# --- the answer in words: which runs wait least for reads, against the
# traced kernel's own setting, on other layouts and with other memory ---
cp "$WORK/sample.db" "$WORK/ans.db"
{ "$SWAPTRACE" replay -p none -p auto -p fixed -p oracle -p leap -c 0-4 "$WORK/ans.db" &&
  "$SWAPTRACE" replay -p auto -c 3 -l 2 -l 2:spread "$WORK/ans.db" &&
  "$SWAPTRACE" replay -p auto -c 3 -m 50%,150% "$WORK/ans.db"; } >/dev/null || fail "answer runs"
"$SWAPTRACE" report -o "$WORK/ans" "$WORK/ans.db" > "$WORK/ans.out" || fail "answer report"
python3 - "$WORK/ans/index.html" "$WORK/ans.db" "$WORK/ans.out" <<'PY' || fail "the answer section"
import html, re, sqlite3, sys, xml.dom.minidom
xml.dom.minidom.parse(sys.argv[1])          # still well-formed
s = open(sys.argv[1]).read()
s = s[s.index('<div id="answer"'):]
s = s[:s.index('</div>')]
lines = [html.unescape(re.sub(r"<[^>]+>", "", li)).replace("\u00a0", " ")
         for li in re.findall(r"<li>(.*?)</li>", s, re.S)]
db = sqlite3.connect(sys.argv[2])
def n(v):   # the report's grouping: a space from 10 000 up
    return f"{v:,}".replace(",", " ") if v >= 10000 else str(v)
def fewest(where, max_pages=1 << 62):
    return db.execute("SELECT policy, page_cluster, id, misses, faults FROM run WHERE layout ="
                      " 'traced' AND cache_pages = 52480 AND pages_read <= ? AND " + where +
                      " ORDER BY misses, pages_read, page_cluster, id LIMIT 1",
                      (max_pages,)).fetchone()
def say(what, r, label=None):
    return f"{what} {label or r[0]} at page-cluster {r[1]} (run #{r[2]}): {n(r[3])} of {n(r[4])} faults waited for a read"
traced = fewest("policy = 'auto' AND page_cluster = 0")
# the best settings read at most twice the traced setting's pages: fixed at
# page-cluster 4 has fewer waits but reads more, and is passed over
limit = 2 * db.execute("SELECT pages_read FROM run WHERE id = ?", (traced[2],)).fetchone()[0]
assert fewest("policy = 'fixed'")[1] == 4 and fewest("policy = 'fixed'", limit)[1] < 4
expect = [say("As traced, replayed:", traced),
          say("The kernel's policy at its best page-cluster:", fewest("policy = 'auto'", limit)),
          say("Fewest waits of the kernel's policies:",
              fewest("policy IN ('none', 'fixed', 'adaptive', 'vma', 'auto')", limit)),
          say("Fewest waits of the other policies:", fewest("policy = 'leap'", limit)),
          say("The oracle (reads only pages that will be used, in the kernel's windows):",
              fewest("policy = 'oracle'"))]
# "2" places pages as "2:used=0,0" does: the group is the 4 offsets of 2:spread, each once
# the report rounds halves up (llround), Python's round() to even: 66 290.5 is 66 291
mean, runs = db.execute("SELECT avg(misses), count(*) FROM run WHERE layout LIKE '2:used=%'").fetchone()
assert runs == 4, runs
expect.append(f"auto at page-cluster 3 on the simulated layout 2: {n(int(mean + 0.5))} faults "
              f"waited for a read on average over 4 device offsets")
# the memory line: coverage at both ends, and at its best when that is between
# (the shown run: auto at page-cluster 3, as the layout line says)
mem = db.execute("SELECT cache_pages, round(100.0 * hits / faults, 1) FROM run WHERE layout = 'traced'"
                 " AND policy = 'auto' AND page_cluster = 3 GROUP BY cache_pages"
                 " ORDER BY cache_pages").fetchall()
line = (f"With memory from {n(mem[0][0])} to {n(mem[-1][0])} pages (the model's memory, chart "
        f"Memory), ")
best = max(mem, key=lambda m: m[1])
tail = (f" serves {mem[0][1]:.1f}% of the faults from readahead at the least memory and "
        f"{mem[-1][1]:.1f}% at the most")
if best[1] > mem[0][1] and best[1] > mem[-1][1]:
    tail += f", {best[1]:.1f}% at its best, with {n(best[0])} pages"
expect.append(line)
assert len(lines) == len(expect), (len(lines), lines)
for got, want in zip(lines, expect):
    assert got.startswith(want), f"\n got: {got}\nwant: {want}"
assert lines[-1].endswith(tail + "."), f"\n got: {lines[-1]}\nwant: ...{tail}."
# the replayed traced setting is followed by the kernel's own count (it
# stood alone, and read as measured)
vm = dict(db.execute("SELECT name, delta FROM vmstat"))
counted = (f" The kernel counted {n(vm['pgmajfault'])} major faults and {n(vm['swap_ra_hit'])} "
           f"readahead hit{'' if vm['swap_ra_hit'] == 1 else 's'}, {100.0 * vm['swap_ra_hit'] / (vm['pgmajfault'] + vm['swap_ra_hit']):.1f}% "
           f"served by readahead (/proc/vmstat, machine-wide).")
assert lines[0].endswith(" read requests." + counted), f"\n got: {lines[0]}\nwant: ...{counted}"
assert sum(counted in l for l in lines) == 1, lines
# the terminal gets the same lines between its header and the report's last line
out = open(sys.argv[3]).read().replace("\u00a0", " ").splitlines()
assert out[0].startswith("swaptrace: report: answer (a wait: a swap fault that read from swap;"), out[0]
assert out[-1].startswith("swaptrace: report: 8 charts from "), out[-1]
assert [l[2:] for l in out[1:-1]] == lines, (out, lines)
PY

# without the kernel's counters the replayed line stands alone
cp "$WORK/ans.db" "$WORK/ans-novm.db"
sqlite3 "$WORK/ans-novm.db" "DELETE FROM vmstat" || fail "dropping the vmstat rows"
"$SWAPTRACE" report -o "$WORK/ans-novm" "$WORK/ans-novm.db" | sed -n '2p' > "$WORK/ans-novm.txt"
case "$(cat "$WORK/ans-novm.txt")" in
"  As traced, replayed: auto at page-cluster 0 "*" read requests.") ;;
*) fail "answer without vmstat counters: $(cat "$WORK/ans-novm.txt")" ;;
esac
# one readahead hit counted is "1 readahead hit" (it said "1 readahead hits"),
# and one major fault "1 major fault"
cp "$WORK/ans.db" "$WORK/ans-onehit.db"
sqlite3 "$WORK/ans-onehit.db" "UPDATE vmstat SET delta = 1 WHERE name = 'swap_ra_hit'" ||
	fail "setting one readahead hit"
"$SWAPTRACE" report -o "$WORK/ans-onehit" "$WORK/ans-onehit.db" | sed -n '2p' > "$WORK/ans-onehit.txt"
grep -q " major faults and 1 readahead hit, [0-9.]*% served by readahead (/proc/vmstat, machine-wide)\.$" \
	"$WORK/ans-onehit.txt" || fail "answer with one readahead hit: $(cat "$WORK/ans-onehit.txt")"
sqlite3 "$WORK/ans-onehit.db" "UPDATE vmstat SET delta = 1 WHERE name = 'pgmajfault'" ||
	fail "setting one major fault"
"$SWAPTRACE" report -o "$WORK/ans-onehit" "$WORK/ans-onehit.db" | sed -n '2p' > "$WORK/ans-onehit.txt"
grep -q " The kernel counted 1 major fault and 1 readahead hit, 50.0% served by readahead (/proc/vmstat, machine-wide)\.$" \
	"$WORK/ans-onehit.txt" || fail "answer with one major fault: $(cat "$WORK/ans-onehit.txt")"

# the traced setting already the kernel's policy at its best: said so
cp "$WORK/sample.db" "$WORK/ans1.db"
"$SWAPTRACE" replay -p auto -c 0 "$WORK/ans1.db" > /dev/null || fail "one auto run"
"$SWAPTRACE" report -o "$WORK/ans1" "$WORK/ans1.db" | sed -n '3p' > "$WORK/ans1.txt"
check_eq "$(cat "$WORK/ans1.txt")" \
	"  The kernel's policy at its best page-cluster: as traced (no other page-cluster replayed has fewer waits within twice its pages read)." \
	"answer: the traced setting at its best"
grep -q "multi-gen LRU" "$WORK/ans1/index.html" && fail "answer: a multi-gen LRU line for a capture that did not record it"
# a kernel that ran the multi-gen LRU (meta.txt lru_gen, bit 0 set): the
# answer, in the terminal and in index.html, says what that means for replay
sed "1a lru_gen 0x0007" "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/meta.txt" > "$WORK/lru-meta.txt"
"$SWAPTRACE" ingest -q -o "$WORK/lru.db" --meta "$WORK/lru-meta.txt" "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/trace.dat" &&
	"$SWAPTRACE" replay -p auto -c 0 "$WORK/lru.db" > /dev/null 2>&1 || fail "lru: ingest and replay"
"$SWAPTRACE" report --run 1 -o "$WORK/lru" "$WORK/lru.db" > "$WORK/lru.out" || fail "lru: report"
lru_line="The traced kernel ran the multi-gen LRU (lru_gen 0x0007); the replay models the two-list active/inactive LRU, so its readahead accuracy and waste are less certain (docs/replay-model.md)."
grep -qxF "  $lru_line" "$WORK/lru.out" || fail "lru: the answer's line in the terminal: $(cat "$WORK/lru.out")"
grep -qF "<p class=\"sub\">$lru_line</p>" "$WORK/lru/index.html" || fail "lru: the answer's line in index.html"
# swap-ins the block trace cannot show (zero-filled pages, zswap): said too
sqlite3 "$WORK/lru.db" "INSERT INTO vmstat (name, delta) VALUES ('swpin_zero', 1234), ('zswpin', 56)" ||
	fail "unseen: vmstat rows"
"$SWAPTRACE" report --run 1 -o "$WORK/unseen" "$WORK/lru.db" > "$WORK/unseen.out" || fail "unseen: report"
unseen_line="Swap-ins took no block I/O on the traced host (/proc/vmstat, machine-wide: swpin_zero 1234 zero-filled pages, zswpin 56 from zswap): the block trace shows neither them nor their swap-outs, so the replays lack those of the workload."
grep -qxF "  $unseen_line" "$WORK/unseen.out" || fail "unseen: the answer's line in the terminal: $(cat "$WORK/unseen.out")"
grep -qF "<p class=\"sub\">$unseen_line</p>" "$WORK/unseen/index.html" || fail "unseen: the answer's line in index.html"
# ... picked from one page-cluster, without none or oracle (README's replay
# line, then report): the answer says so, and which replay gives what a
# database without runs gets (it said nothing); not with --run, which chose
"$SWAPTRACE" report -o "$WORK/ans1" "$WORK/ans1.db" | sed -n '4,$p' > "$WORK/ans1.txt"
check_eq "$(cat "$WORK/ans1.txt")" \
	"  Few runs to compare (only page-cluster 0, no none or oracle run): replay the set a database without runs gets, swaptrace replay -p none -p fixed -p adaptive -p vma -p auto -p oracle -c 0-8 -- '$WORK/ans1.db', and report again.
swaptrace: report: 5 charts from 1 replay run in '$WORK/ans1': open '$WORK/ans1/index.html'" \
	"answer: few runs to compare"
grep -q "<li>Few runs to compare (only page-cluster 0, no none or oracle run): .*<code>swaptrace replay -p none .* -c 0-8 -- &#39;$WORK/ans1.db&#39;</code>, and report again.</li>" \
	"$WORK/ans1/index.html" || fail "index.html: few runs to compare"
"$SWAPTRACE" report --run "$(sqlite3 "$WORK/ans1.db" 'SELECT min(id) FROM run')" -o "$WORK/ans1r" \
	"$WORK/ans1.db" | grep "Few runs" && fail "answer with --run: few runs to compare"
cp "$WORK/ans1.db" "$WORK/ans2.db"
"$SWAPTRACE" replay -p none -p auto -c 0-1 "$WORK/ans2.db" > /dev/null || fail "none and auto runs"
sqlite3 "$WORK/ans2.db" "UPDATE run SET approximate = 1" || fail "marking runs approximate"
"$SWAPTRACE" report -o "$WORK/ans2" "$WORK/ans2.db" > "$WORK/ans2.out" 2>/dev/null
grep "Few runs" "$WORK/ans2.out" > "$WORK/ans2.txt"
check_eq "$(cat "$WORK/ans2.txt")" \
	"  Few runs to compare (no oracle run): replay the set a database without runs gets, swaptrace replay -p none -p fixed -p adaptive -p vma -p auto -p oracle -c 0-8 --approximate -- '$WORK/ans2.db', and report again." \
	"answer: few runs to compare, no oracle, approximated"
# the command runs as printed, whatever the database's name: quoted for the
# shell, after -- (a "'" or a leading '-' broke it)
cp "$WORK/ans1.db" "$WORK/-it's.db"
(cd "$WORK" && "$SWAPTRACE" report -o ans3 -- "-it's.db") 2>/dev/null | grep "Few runs" > "$WORK/ans3.txt"
hint=$(sed -n "s/.*gets, swaptrace replay \(.*\), and report again\./\1/p" "$WORK/ans3.txt")
[ -n "$hint" ] || fail "answer: few runs for '-it's.db': $(cat "$WORK/ans3.txt")"
(cd "$WORK" && eval "\"\$SWAPTRACE\" replay --no-store $hint") > /dev/null 2> "$WORK/ans3.err" ||
	fail "answer: the printed replay command fails: $hint: $(cat "$WORK/ans3.err")"
# lines marked * are followed by the legend, in the terminal as in
# index.html (only the run table's note explained it, in index.html)
legend="* replayed an approximated demand stream: the capture's reads mix demand and readahead (docs/replay-model.md)."
grep -q '^  As traced, replayed: .* \*\. The kernel counted' "$WORK/ans2.out" ||
	fail "answer: approximated runs are marked *: $(cat "$WORK/ans2.out")"
check_eq "$(tail -n 2 "$WORK/ans2.out" | head -n 1)" "  $legend" "answer: the legend of * in the terminal"
python3 -c 'import html, sys; assert "</ul>\n<p class=\"sub\">%s</p>\n</div>" % sys.argv[2] in html.unescape(open(sys.argv[1]).read())' \
	"$WORK/ans2/index.html" "$legend" || fail "answer: the legend of * in index.html"
grep -qF "$legend" "$WORK/ans1.txt" && fail "answer: the legend of * without approximated runs"

# --- the default directory: DB without .db, plus -report ---
(cd "$WORK" && "$SWAPTRACE" report runs.db >/dev/null) || fail "report with the default directory"
[ -f "$WORK/runs-report/index.html" ] || fail "default directory runs-report/"

# --- bad arguments: a message naming the subject, distinct exit codes ---
msg=$("$SWAPTRACE" report --run 999 -o "$WORK/bad" "$WORK/runs.db" 2>&1 >/dev/null)
check_eq "$?" 1 "unknown run id exits 1"
check_eq "$msg" "swaptrace: report: run 999 is not in '$WORK/runs.db'" "unknown run id message"
msg=$("$SWAPTRACE" report --policy nosuch -o "$WORK/bad" "$WORK/runs.db" 2>&1 >/dev/null)
check_eq "$?" 1 "unknown policy exits 1"
check_eq "$msg" "swaptrace: report: policy 'nosuch' has no replay run in '$WORK/runs.db'" \
	"unknown policy message"
[ ! -e "$WORK/bad" ] || fail "a rejected --run or --policy still created the output directory"
"$SWAPTRACE" report --format gif "$WORK/runs.db" >/dev/null 2>&1
check_eq "$?" 2 "unknown format is a usage error"
"$SWAPTRACE" report --run x "$WORK/runs.db" >/dev/null 2>&1
check_eq "$?" 2 "bad run list is a usage error"
"$SWAPTRACE" report >/dev/null 2>&1
check_eq "$?" 2 "no database is a usage error"
msg=$("$SWAPTRACE" report -o "$WORK/bad" "$WORK/nosuch.db" 2>&1 >/dev/null)
check_eq "$?" 1 "missing database exits 1"
case "$msg" in "swaptrace: report: "*nosuch.db*) ;; *) fail "missing database message: $msg" ;; esac
# a default memory beyond the replay's (a 4 TiB limit) fails before any run,
# naming the limit (it warned "about 2^28 pages", drew no runs, exited 0)
cp "$WORK/sample.db" "$WORK/big-limit.db"
sqlite3 "$WORK/big-limit.db" "UPDATE capture SET mem_limit_bytes = $((1 << 42))"
msg=$("$SWAPTRACE" report -o "$WORK/big-limit" "$WORK/big-limit.db" 2>&1 >/dev/null)
check_eq "$?:$msg" "1:swaptrace: report: '$WORK/big-limit.db': the default memory (1073741824 pages, the capture's memory limit) is more than the replay handles, 357848403 pages at most with the kernel's inactive share; run swaptrace replay --cache-pages PAGES first" \
	"a default memory beyond the replay's"
check_eq "$(sqlite3 "$WORK/big-limit.db" "SELECT count(*) FROM run")" 0 \
	"a default memory beyond the replay's stores no runs"
[ ! -e "$WORK/big-limit/index.html" ] || fail "a default memory beyond the replay's still drew a report"
# so does a capture that records no memory at all (a blktrace-only ingest):
# it has faults and a way to replay them, which the message names (it
# warned, drew the capture charts without runs and exited 0)
cp "$WORK/sample.db" "$WORK/no-limit.db"
sqlite3 "$WORK/no-limit.db" "UPDATE capture SET mem_limit_bytes = NULL, working_set_bytes = NULL"
msg=$("$SWAPTRACE" report -o "$WORK/no-limit" "$WORK/no-limit.db" 2>&1 >/dev/null)
check_eq "$?:$msg" "1:swaptrace: report: '$WORK/no-limit.db': the capture records no memory limit or working set (of a page or more) to replay against; run swaptrace replay --cache-pages PAGES first" \
	"a capture without memory"
[ ! -e "$WORK/no-limit/index.html" ] || fail "a capture without memory still drew a report"
touch "$WORK/file"
msg=$("$SWAPTRACE" report -o "$WORK/file/sub" "$WORK/runs.db" 2>&1 >/dev/null)
check_eq "$?" 1 "unwritable output directory exits 1"
case "$msg" in "swaptrace: report: '$WORK/file/sub': "*) ;; *) fail "output directory message: $msg" ;; esac
"$SWAPTRACE" help report | grep -q '^usage: swaptrace report' || fail "help report"
finish
