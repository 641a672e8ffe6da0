#!/bin/bash
# What-if swap layouts from the command line, and their consistency with the
# recorded placement:
#  - on the bundled sample: --layout parsing and errors, the sweep over
#    several layouts, JSON (a "layout" and one partition per simulated
#    device) and the stored run / run_partition rows;
#  - on every shared -pc0 capture: --layout traced gives exactly the plain
#    replay; a layout identical to the traced one (same device count, sizes
#    and priorities, the traced kernel's allocator) keeps every swap-out on
#    its traced device and gives the same faults per device; where the
#    allocator also reproduces every slot the replay is identical too
#    (all but rnd-4dev-pc0, whose device 0 had slot 1 taken before the
#    trace); with that slot declared (4:used=1,0,0,0) rnd-4dev-pc0 is
#    reproduced exactly as well.
#  The share of swap-outs placed on the traced device and slot is printed
#  for every capture, pc3 twins included, and is docs/layouts.md's table of
#  it, row for row.
. "$(dirname "$0")/lib.sh"

# totals and partition metrics of run i, partition names left out
metrics() { # json run-index
	python3 - "$1" "$2" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][int(sys.argv[2])]
parts = [{k: v for k, v in p.items() if k != "dev"} for p in run["partitions"]]
print(json.dumps({"totals": run["totals"], "partitions": parts}, sort_keys=True))
PY
}

# "<swap-outs> <on their traced device> <on their traced slot>" from the table's note on a layout
reproduction() { # table-output
	sed -n 's/^# re-placed \([0-9]*\) swap-outs.*; \([0-9]*\) on their traced device .*, \([0-9]*\) on their traced slot too .*/\1 \2 \3/p' "$1"
}

pct() { # part whole
	python3 -c "import sys; print('%.2f' % (100.0 * int(sys.argv[1]) / int(sys.argv[2])))" "$1" "$2"
}

# ---- the bundled sample ----------------------------------------------------
SAMPLE="$SWT_SOURCE_DIR/samples/rnd-1dev-pc0"
DB="$WORK/sample.db"
"$SWAPTRACE" ingest -q -o "$DB" "$SAMPLE" || fail "ingest the sample"

"$SWAPTRACE" replay --help > "$WORK/help.txt" 2>&1
grep -q -- "--layout SPEC" "$WORK/help.txt" || fail "replay --help does not document --layout"
grep -q "devices=SIZE\[@PRIO\]" "$WORK/help.txt" || fail "replay --help does not give the layout grammar"

for bad in 0 4:bogus 4:era=x devices=12Q "4:used=1,2" ""; do
	"$SWAPTRACE" replay --no-store -l "$bad" "$DB" > /dev/null 2> "$WORK/err.txt"
	rc=$?
	check_eq "$rc" 2 "exit status for --layout '$bad'"
	grep -q "replay: layout '" "$WORK/err.txt" || fail "no message naming layout '$bad': $(cat "$WORK/err.txt")"
done
"$SWAPTRACE" replay --no-store -l devices=8p "$DB" > /dev/null 2> "$WORK/err.txt"
check_eq "$?" 2 "exit status for a layout too small for the pages"
grep -q "too small" "$WORK/err.txt" || fail "no 'too small' message: $(cat "$WORK/err.txt")"
# a capture that records no swap-area size (a block trace alone): the default
# size would be just what the pages take, so the layout needs one given
cp "$DB" "$WORK/nosize.db"
sqlite3 "$WORK/nosize.db" "UPDATE swap_area SET slots = NULL" || fail "preparing nosize.db"
"$SWAPTRACE" replay --no-store -l 4 "$WORK/nosize.db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?" 2 "exit status for a layout of no size on a capture of no area size"
grep -q "layout '4': the capture records no size of swap area .*e.g. '4:size=1G'" "$WORK/err.txt" ||
	fail "a missing area size is not named: $(cat "$WORK/err.txt")"
"$SWAPTRACE" replay --no-store -l 4:size=1G -l devices=512M,512M "$WORK/nosize.db" > /dev/null 2> "$WORK/err.txt" ||
	fail "layouts with sizes on a capture of no area size: $(cat "$WORK/err.txt")"

# a layout that swap fills beyond half: the kernel frees slots at swap-in
# then (vm_swap_full), the replay as the capture's swap did (never over
# half full) -- said; not below half
"$SWAPTRACE" replay --no-store -c 0 -p none -l devices=256M -l devices=512M "$DB" > /dev/null 2> "$WORK/err.txt" ||
	fail "replay on small layouts: $(cat "$WORK/err.txt")"
check_eq "$(cat "$WORK/err.txt")" \
	"swaptrace: replay: warning: layout 'devices=256M': swap fills to 86 % of its slots (56287 of 65535); above half full the kernel frees a page's slot when it is swapped in, which the replay does as on the capture's swap (never over half full), not as on this layout's (docs/layouts.md)" \
	"a layout over half full is said, one under half is not"
# so is one of the traced size that its pages there at the start take over
# half full (the capture's swap never was: the replay frees nothing)
"$SWAPTRACE" replay --no-store -c 0 -p none -l 1:used=100000 -l 1:used=1000 "$DB" > /dev/null 2> "$WORK/err.txt" ||
	fail "replay on layouts with pages at the start: $(cat "$WORK/err.txt")"
check_eq "$(grep -c "warning: layout '1:used=100000': swap fills to 60 % of its slots .*(never over half full), not as on this layout's" "$WORK/err.txt") $(grep -c "1:used=1000'" "$WORK/err.txt")" \
	"1 0" "a layout of the traced size over half full by its pages at the start is said"

# a trace begun mid-run (the sample without its first half): its identical
# layout puts every page back on its slot, the slots between the pages
# swapped out before it taken as held (packed together, they had gained
# 72 % readahead hits); placing those slots is refused up front when they
# would take more memory than there is
cp "$DB" "$WORK/half.db"
mid=$(sqlite3 "$WORK/half.db" 'SELECT (min(ts) + max(ts)) / 2 FROM swap_in')
sqlite3 "$WORK/half.db" "DELETE FROM swap_in WHERE ts < $mid; DELETE FROM fault WHERE ts < $mid;
	DELETE FROM swap_out WHERE ts < $mid;" || fail "cutting the sample's first half"
"$SWAPTRACE" replay --no-store --json -p auto -c 3 -l traced -l 1 "$WORK/half.db" > "$WORK/half.json" 2> "$WORK/err.txt" ||
	fail "replay of a trace begun mid-run on its own layout: $(cat "$WORK/err.txt")"
check_eq "$(json_get "$WORK/half.json" "d['runs'][0]['totals'] == d['runs'][1]['totals']")" True \
	"a trace begun mid-run replays alike on its identical layout"
"$SWAPTRACE" replay --no-store -p none -c 0 -l 1 "$WORK/half.db" 2>&1 | grep -q "slots among them that no fault names, taken as held .*on their traced slot too (100.00 %)" ||
	fail "the held slots of a trace begun mid-run are not said, or its slots not reproduced"
SWT_TEST_MEM_AVAILABLE_KIB=1000 "$SWAPTRACE" replay --no-store -l 1 "$WORK/half.db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?" 1 "exit status when the held slots would not fit in memory"
grep -q "re-placing .* pages swapped out before the trace, with the .* slots below them that no fault names, takes" \
	"$WORK/err.txt" || fail "held slots too many for memory are not said: $(cat "$WORK/err.txt")"

# a capture whose kernel predates the allocators modelled needs an era; one
# whose kernel has no release number gets the newest, said so
cp "$DB" "$WORK/oldkernel.db"
sqlite3 "$WORK/oldkernel.db" "UPDATE capture SET kernel = '3.10.0-1160.el7.x86_64'" || fail "preparing oldkernel.db"
"$SWAPTRACE" replay --no-store -l 2 "$WORK/oldkernel.db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?" 2 "exit status for a layout on a 3.10 capture without era="
grep -q "layout '2': the traced kernel 3.10.0-1160.el7.x86_64 is older than the slot allocators modelled" \
	"$WORK/err.txt" || fail "a kernel older than 3.16 is not named: $(cat "$WORK/err.txt")"
"$SWAPTRACE" replay --no-store -c 0 -p none -l 2:era=3.16 "$WORK/oldkernel.db" > /dev/null 2> "$WORK/err.txt" ||
	fail "a layout with era= on a 3.10 capture: $(cat "$WORK/err.txt")"
sqlite3 "$WORK/oldkernel.db" "UPDATE capture SET kernel = 'Linux'" || fail "a kernel without a release"
"$SWAPTRACE" replay --no-store -c 0 -p none -l 2 "$WORK/oldkernel.db" > /dev/null 2> "$WORK/err.txt" ||
	fail "a layout on a capture whose kernel has no release: $(cat "$WORK/err.txt")"
grep -q "the capture's kernel 'Linux' has no release number: layouts use the newest (6.15+)" "$WORK/err.txt" ||
	fail "a kernel without a release is not said: $(cat "$WORK/err.txt")"

# two policies x two layouts, stored; a layout given twice runs once, as a
# policy or page-cluster does (it ran, and was stored, twice)
"$SWAPTRACE" replay --json -p none -p auto -l traced -l 4 -l 4 -l traced -c 3 "$DB" > "$WORK/sweep.json" ||
	fail "replay with two layouts"
check_eq "$(json_get "$WORK/sweep.json" "len(d['runs'])")" 4 "runs in a 2 policies x 2 layouts sweep"
check_eq "$(json_get "$WORK/sweep.json" "[r['layout'] for r in d['runs']]")" \
	"['traced', 'traced', '4', '4']" "layouts of the runs"
check_eq "$(json_get "$WORK/sweep.json" "[p['dev'] for p in d['runs'][3]['partitions']]")" \
	"['sim0', 'sim1', 'sim2', 'sim3']" "partitions of layout 4"
check_eq "$(json_get "$WORK/sweep.json" "[p['dev'] for p in d['runs'][1]['partitions']]")" \
	"['7:0']" "partitions of the traced layout"
check_eq "$(json_get "$WORK/sweep.json" \
	"sum(p['faults'] for p in d['runs'][3]['partitions']) == d['runs'][3]['totals']['faults'] == d['runs'][1]['totals']['faults']")" \
	True "every fault replayed on some simulated device"
check_eq "$(sqlite3 "$DB" "SELECT group_concat(layout, ' ') FROM (SELECT layout FROM run ORDER BY id)")" \
	"traced traced 4 4" "run.layout as stored"
check_eq "$(sqlite3 "$DB" "SELECT group_concat(partition || '=' || dev, ' ') FROM (SELECT partition, dev FROM run_partition
	WHERE run_id = (SELECT max(id) FROM run) ORDER BY partition)")" "0=sim0 1=sim1 2=sim2 3=sim3" \
	"run_partition rows of a simulated layout"
check_eq "$(sqlite3 "$DB" "SELECT sum(count) FROM run_histogram WHERE run_id = (SELECT max(id) FROM run)
	AND partition = 3 AND kind = 'request_pages'")" "$(sqlite3 "$DB" "SELECT read_requests FROM run_partition
	WHERE run_id = (SELECT max(id) FROM run) AND partition = 3")" "request-size histogram of sim3"
"$SWAPTRACE" replay --csv --no-store -l 2:ssd -c 3 "$DB" > "$WORK/sweep.csv" || fail "replay --csv on 2:ssd"
check_eq "$(cut -d, -f4,5 "$WORK/sweep.csv" | tail -n +2 | tr '\n' ' ')" "2:ssd,all 2:ssd,sim0 2:ssd,sim1 " \
	"CSV rows of layout 2:ssd"
# one spelling per layout (docs/layouts.md, "Canonical spelling"): the same
# layout given otherwise -- a leading zero, options in another order, sizes
# in other units, an era by another release of its allocator, devices of
# one size and priority listed -- runs once, is printed and stored in that
# spelling, and replayed again in any spelling is the stored run's repeat;
# so is a layout that a spread runs too (each was stored and printed as
# given, and ran as a layout of its own)
CANON_DB="$WORK/canon.db"
"$SWAPTRACE" ingest -q -o "$CANON_DB" "$SAMPLE" || fail "ingest the sample for spellings"
"$SWAPTRACE" replay --json -p none -c 0 -l traced -l 4 -l 04 -l 4:prio=-2:ssd -l 4:ssd:prio=-2 \
	-l devices=131072p@05,524288K@5 -l devices=512M@5,512M@5 -l devices=512M,512M:prio=5 \
	-l 2:prio=5:size=512M -l 2:era=5.10:cluster=0512 -l 2:spread -l 02:spread -l 2:used=1,0 \
	"$CANON_DB" > "$WORK/canon.json" 2> "$WORK/err.txt" ||
	fail "replay of layouts in several spellings: $(cat "$WORK/err.txt")"
canon_runs="traced 4 4:ssd:prio=-2 2:prio=5:size=512M 2:era=4.11 2:used=0,0 2:used=1,0 2:used=0,1 2:used=1,1"
check_eq "$(json_get "$WORK/canon.json" "' '.join(r['layout'] for r in d['runs'])")" "$canon_runs" \
	"layouts given in several spellings, each run once"
check_eq "$(sqlite3 "$CANON_DB" "SELECT group_concat(layout, ' ') FROM (SELECT layout FROM run ORDER BY id)")" \
	"$canon_runs" "run.layout of layouts given in several spellings"
"$SWAPTRACE" replay -p none -c 0 -l 004 -l 4:prio=-2:ssd -l devices=512M@05,0512M@5 -l 02:spread \
	"$CANON_DB" > "$WORK/canon.txt" 2> "$WORK/err.txt" || fail "replay in other spellings again"
check_eq "$(cat "$WORK/err.txt")" \
	"swaptrace: replay: 7 of 7 runs were already stored with the same results (run ids 2-4, 6-9): not stored again" \
	"stored layouts replayed in other spellings"
check_eq "$(sed -n 's/^# layout \([^ ]*\): [0-9]* x .*/\1/p' "$WORK/canon.txt" | tr '\n' ' ')" \
	"4 4:ssd:prio=-2 2:prio=5:size=512M 2:used=0,0 2:used=1,0 2:used=0,1 2:used=1,1 " \
	"layouts as the table names them"
grep -q "^# layout 2:spread: 4 device offsets" "$WORK/canon.txt" || fail "02:spread is not summarised as 2:spread"
# a database an older replay stored names in as given, or in a spelling
# canonical then (devices=512M@5,512M@5): a run in another spelling of one
# is its repeat, and the report draws the spellings as one layout ("04" and
# "4", both stored then, once)
"$SWAPTRACE" replay -p none -c 0 -l 4:hdd "$CANON_DB" > /dev/null 2>&1 || fail "replay on 4:hdd"
sqlite3 "$CANON_DB" "UPDATE run SET layout = '04' WHERE layout = '4:hdd';
	UPDATE run SET layout = '4:prio=-2:ssd' WHERE layout = '4:ssd:prio=-2';
	UPDATE run SET layout = 'devices=512M@5,512M@5' WHERE layout = '2:prio=5:size=512M'" ||
	fail "spelling runs as before"
"$SWAPTRACE" replay -p none -c 0 -l 4:ssd:prio=-2 -l 2:prio=5:size=512M "$CANON_DB" > /dev/null 2> "$WORK/err.txt"
check_eq "$(cat "$WORK/err.txt")" \
	"swaptrace: replay: 2 of 2 runs were already stored with the same results (run ids 3, 4): not stored again" \
	"runs stored under older spellings, replayed again"
"$SWAPTRACE" report --format svg -o "$WORK/canon-report" "$CANON_DB" > /dev/null || fail "report on older spellings"
check_eq "$(json_get "$WORK/canon-report/layout.json" "' | '.join(s['name'] for s in d['series'])")" \
	"traced: 1 device | 4:ssd:prio=-2: 4 devices | 2:prio=5:size=512M: 2 devices | 2:era=4.11: 2 devices | 2: 2 devices, mean of 4 device offsets | 4: 4 devices" \
	"the report's layouts of runs stored under older spellings"
# device size does not change this allocator's placement here, and a
# terabyte device costs what its used slots cost (the slot tables once
# took the whole device: 4 GiB of them per 1 TiB)
"$SWAPTRACE" replay --json --no-store -p auto -c 3 -l 2:size=1G -l 2:size=4T "$DB" > "$WORK/big.json" ||
	fail "replay on two 4 TiB devices"
check_eq "$(metrics "$WORK/big.json" 1)" "$(metrics "$WORK/big.json" 0)" "2:size=4T replays as 2:size=1G"
# a spec with commas is one quoted CSV field
"$SWAPTRACE" replay --csv --no-store -l devices=512M@10,512M@5 -c 3 "$DB" > "$WORK/quoted.csv" ||
	fail "replay --csv on devices=512M@10,512M@5"
check_eq "$(python3 -c 'import csv, sys; print(" ".join(r[3] + "/" + r[4] for r in list(csv.reader(open(sys.argv[1])))[1:]))' \
	"$WORK/quoted.csv")" "devices=512M@10,512M@5/all devices=512M@10,512M@5/sim0 devices=512M@10,512M@5/sim1" \
	"CSV rows of layout devices=512M@10,512M@5"

# --layout N:spread: the same layout at every device offset (0 or 1 page
# already used per device), the table's summary over them, and the report's
# layout chart drawing them as one stack (their mean, a whisker min..max)
for bad in traced:spread 4:spread:used=1 7:spread; do
	"$SWAPTRACE" replay --no-store -l "$bad" "$DB" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?" 2 "exit status for --layout '$bad'"
	grep -q "replay: layout '$bad'" "$WORK/err.txt" || fail "no message naming layout '$bad': $(cat "$WORK/err.txt")"
done
SPREAD_DB="$WORK/spread.db"
cp "$DB" "$SPREAD_DB"
# 4 given too is the spread's zero offset, 4:used=0,0,0,0: replayed once,
# in the spread, with a note (it was replayed twice, under both names)
"$SWAPTRACE" replay --json --no-store -p auto -c 3 -l 4 -l 4:spread "$DB" > "$WORK/spread.json" \
	2> "$WORK/err.txt" || fail "replay --json -l 4 -l 4:spread"
check_eq "$(cat "$WORK/err.txt")" \
	"swaptrace: replay: layout '4' is the zero offset of '4:spread' (4:used=0,0,0,0): replayed once, in the spread" \
	"-l 4 -l 4:spread: the note"
"$SWAPTRACE" replay --json --no-store -p auto -c 3 -l 4 "$DB" > "$WORK/plain4.json" ||
	fail "replay --json -l 4"
cp "$DB" "$WORK/zero.db"
sqlite3 "$WORK/zero.db" "DELETE FROM run" || fail "zero offset: preparing"
"$SWAPTRACE" replay -p none -c 0 -l 02 -l 2:spread "$WORK/zero.db" > /dev/null 2> "$WORK/err.txt" ||
	fail "replay -l 02 -l 2:spread: $(cat "$WORK/err.txt")"
check_eq "$(sqlite3 "$WORK/zero.db" "SELECT group_concat(layout, ' ') FROM (SELECT layout FROM run ORDER BY id)")" \
	"2:used=0,0 2:used=1,0 2:used=0,1 2:used=1,1" "-l 02 -l 2:spread: the runs stored"
"$SWAPTRACE" replay -p auto -c 3 -l traced -l 4:spread "$SPREAD_DB" > "$WORK/spread.txt" ||
	fail "replay -l 4:spread"
python3 - "$WORK/spread.json" "$WORK/spread.txt" "$WORK/plain4.json" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
spread = json.load(open(sys.argv[1]))["runs"]
plain = json.load(open(sys.argv[3]))["runs"][0]
layouts = [r["layout"] for r in spread]
assert layouts == ["4:used=%d,%d,%d,%d" % tuple((m >> d) & 1 for d in range(4)) for m in range(16)], layouts
assert spread[0]["totals"] == plain["totals"], "used=0,0,0,0 is the plain layout"
hits = [r["totals"]["hits"] for r in spread]
assert len(set(hits)) > 4, ("the offsets should matter on four rotational devices", hits)
assert all(r["totals"]["faults"] == plain["totals"]["faults"] for r in spread)
# the table's summary: mean, min and max over the 16 runs
text = open(sys.argv[2]).read()
assert "# layout 4:spread: 16 device offsets (0 or 1 page already used per device), auto at page-cluster 3" in text, text[-800:]
rows = {l[:16].strip(): l[16:].split() for l in text.splitlines()[-5:]}
def check(name, values, digits):
    want = ["%.*f" % (d, v) for d, v in zip(digits, (sum(values) / len(values), min(values), max(values)))]
    assert rows[name] == want, (name, rows[name], want)
check("readahead hits", hits, (1, 0, 0))
check("read merges", [r["totals"]["read_merges"] for r in spread], (1, 0, 0))
check("read requests", [r["totals"]["read_requests"] for r in spread], (1, 0, 0))
print("4:spread: readahead hits %d..%d over 16 device offsets (plain 4: %d)" % (min(hits), max(hits), plain["totals"]["hits"]))
PY
"$SWAPTRACE" report -o "$WORK/spread-report" "$SPREAD_DB" > /dev/null || fail "report on spread runs"
python3 - "$WORK/spread-report/layout.json" "$SPREAD_DB" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sqlite3, sys
meta = json.load(open(sys.argv[1]))
names = [s["name"] for s in meta["series"]]
assert names == ["traced: 1 device", "4: 4 devices, mean of 16 device offsets"], names
assert meta["panels"][0]["categories"] == "traced 1 device|4 4 devices mean of 16", meta["panels"][0]["categories"]
con = sqlite3.connect(sys.argv[2])
for column, title in (("hits", "readahead hits"), ("read_merges", "read merges"), ("read_requests", "read requests")):
    avg, lo, hi, n = con.execute("SELECT avg(%s), min(%s), max(%s), count(*) FROM run WHERE layout LIKE '4:used=%%'"
                                 % (column, column, column)).fetchone()
    note = "4, %s: mean %.1f, %.0f to %.0f over %d device offsets" % (title, avg, lo, hi, n)
    assert note in meta["notes"], (note, meta["notes"])
PY

# docs/layouts.md's table of rnd-1dev-pc0 (the sample) on other layouts is
# what this build replays: every row, every number as the doc rounds it
rows=$(sed -n '/^| layout | readahead hits | coverage | read merges | KiB per request |$/,/^$/p' \
	"$SWT_SOURCE_DIR/docs/layouts.md" | grep '^| `')
[ "$(wc -l <<< "$rows")" -ge 5 ] || fail "docs/layouts.md: the table of layouts is not found"
while IFS= read -r row; do
	spec=$(sed 's/^| `\([^`]*\)`.*/\1/' <<< "$row")
	"$SWAPTRACE" replay --no-store --json -p auto -c 3 -l "$spec" "$DB" > "$WORK/doc-row.json" ||
		{ fail "docs/layouts.md row $spec: replay"; continue; }
	got=$(python3 - "$WORK/doc-row.json" "$row" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["runs"][0]["totals"]
cells = [c.strip() for c in sys.argv[2].strip("|").split("|")]
n = lambda v: format(v, ",").replace(",", " ")
print(" | ".join(cells[:1] + [n(t["ra_hits"]), "%.3f" % t["coverage"], n(t["read_merges"]),
                              "%.2f" % t["avg_request_kib"]]))
PY
)
	check_eq "| $got |" "$row" "docs/layouts.md row $spec against this build's replay"
done <<< "$rows"

# ... and so is its 4:spread summary, line for line
awk '/^    # layout 4:spread: / { on = 1 } on && /^$/ { exit } on { print substr($0, 5) }' \
	"$SWT_SOURCE_DIR/docs/layouts.md" > "$WORK/doc-spread.txt"
[ "$(wc -l < "$WORK/doc-spread.txt")" -eq 7 ] || fail "docs/layouts.md: the 4:spread summary is not found"
"$SWAPTRACE" replay --no-store -p auto -c 3 -l 4:spread "$DB" 2> /dev/null |
	sed -n '/^# layout 4:spread: /,/^coverage /p' > "$WORK/spread-now.txt"
cmp -s "$WORK/doc-spread.txt" "$WORK/spread-now.txt" ||
	fail "docs/layouts.md's 4:spread summary is not this build's: $(diff "$WORK/doc-spread.txt" "$WORK/spread-now.txt")"

# ---- the shared captures ---------------------------------------------------
find_captures

# docs/layouts.md's row for this re-placement says what it gives: swap-outs,
# the shares on their traced device and slot (a slot count after the share
# left out) and the replay's verdict (its numbers went stale once: hits
# +45 % where the replay gave +47.0 %)
doc_row() { # first-cell swap-outs on-device on-slot replay-cell
	python3 - "$SWT_SOURCE_DIR/docs/layouts.md" "$@" <<'PY' || fail "docs/layouts.md, row $1: not this build's"
import sys
doc, cap, outs, dev, slot, replay = sys.argv[1:]
rows = [[c.strip() for c in line.strip().strip("|").split("|")]
        for line in open(doc) if line.startswith("| %s | " % cap)]
if not rows:
    sys.exit("no row '%s' in the table of re-placements" % cap)
share = lambda n: "100 %" if n == outs else "%.2f %%" % (100.0 * int(n) / int(outs))
want = [cap, format(int(outs), ",").replace(",", " "), share(dev), share(slot), replay]
got = rows[0][:3] + [rows[0][3].split(" (")[0]] + rows[0][4:5]
if got != want:
    sys.exit("got %s, this build gives %s" % (" | ".join(got), " | ".join(want)))
PY
}
printf '%-18s %-16s %8s %8s %8s  %s\n' capture layout swap-outs "device %" "slot %" replay
for cap in rnd-1dev-pc0 rnd-4dev-pc0 seq-1dev-pc0 rnd-1ssd-vma-pc0 \
	   rnd-1dev-pc3 rnd-4dev-pc3 seq-1dev-pc3 rnd-1ssd-vma-pc3; do
	[ -d "$CAPTURES/$cap" ] || { fail "$cap: capture missing"; continue; }
	db="$WORK/$cap.db"
	"$SWAPTRACE" ingest -q -o "$db" "$CAPTURES/$cap" || { fail "$cap: ingest"; continue; }
	n=$(sqlite3 "$db" "SELECT count(*) FROM swap_area")
	approx=
	case $cap in *-pc3) approx=--approximate ;; esac
	# the table names what the allocator reproduced
	"$SWAPTRACE" replay --no-store $approx -p none -c 0 -l "$n" "$db" > "$WORK/$cap.txt" 2> /dev/null ||
		{ fail "$cap: replay on layout $n"; continue; }
	read -r outs same_dev same_slot < <(reproduction "$WORK/$cap.txt")
	[ -n "$outs" ] || { fail "$cap: no note on the re-placement"; continue; }
	check_eq "$same_dev" "$outs" "$cap: swap-outs on their traced device with layout $n"
	row() { printf '%-18s %-16s %8s %8s %8s  %s\n' "$1" "$2" "$outs" "$(pct "$same_dev" "$outs")" \
		"$(pct "$same_slot" "$outs")" "$3"; }
	case $cap in *-pc3)
		row "$cap" "$n" "(placement only)"
		doc_row "$cap" "$outs" "$same_dev" "$same_slot" ""
		continue ;;
	esac

	"$SWAPTRACE" replay --no-store --json -p auto -c 3 "$db" > "$WORK/$cap-plain.json" &&
	"$SWAPTRACE" replay --no-store --json -p auto -c 3 -l traced -l "$n" "$db" > "$WORK/$cap-lay.json" ||
		{ fail "$cap: replay"; continue; }
	check_eq "$(metrics "$WORK/$cap-lay.json" 0)" "$(metrics "$WORK/$cap-plain.json" 0)" \
		"$cap: --layout traced against the plain replay"
	check_eq "$(json_get "$WORK/$cap-lay.json" "[p['faults'] for p in d['runs'][1]['partitions']]")" \
		"$(json_get "$WORK/$cap-plain.json" "[p['faults'] for p in d['runs'][0]['partitions']]")" \
		"$cap: faults per device on layout $n"
	if [ "$same_slot" = "$outs" ]; then
		check_eq "$(metrics "$WORK/$cap-lay.json" 1)" "$(metrics "$WORK/$cap-plain.json" 0)" \
			"$cap: layout $n (every slot reproduced) against the plain replay"
		verdict="identical to the traced replay"
		doc_verdict=identical
	else
		changes=$(python3 - "$WORK/$cap-lay.json" <<'PY'
import json, sys
t, l = (r["totals"] for r in json.load(open(sys.argv[1]))["runs"])
print(" ".join("%+.1f" % (100 * (l[k] / t[k] - 1)) for k in ("ra_hits", "read_merges", "avg_request_kib")))
PY
)
		read -r hits merges size <<< "$changes"
		verdict="ra_hits $hits %, read_merges $merges %, avg_request_kib $size % vs traced"
		doc_verdict="hits $hits %, merges $merges %, request size $size %"
	fi
	row "$cap" "$n" "$verdict"
	doc_row "$cap" "$outs" "$same_dev" "$same_slot" "$doc_verdict"
done

# rnd-4dev-pc0 with its pre-trace page declared: every slot, and the same replay
db="$WORK/rnd-4dev-pc0.db"
if [ -s "$db" ]; then
	spec=4:used=1,0,0,0
	"$SWAPTRACE" replay --no-store -p auto -c 3 -l "$spec" "$db" > "$WORK/used.txt" &&
	"$SWAPTRACE" replay --no-store --json -p auto -c 3 -l "$spec" "$db" > "$WORK/used.json" ||
		fail "rnd-4dev-pc0: replay on $spec"
	read -r outs same_dev same_slot < <(reproduction "$WORK/used.txt")
	check_eq "$same_slot" "$outs" "rnd-4dev-pc0: swap-outs on their traced slot with $spec"
	check_eq "$(metrics "$WORK/used.json" 0)" "$(metrics "$WORK/rnd-4dev-pc0-plain.json" 0)" \
		"rnd-4dev-pc0: $spec against the plain replay"
	row rnd-4dev-pc0 "$spec" "identical to the traced replay"
	doc_row "rnd-4dev-pc0, \`$spec\`" "$outs" "$same_dev" "$same_slot" identical
fi

# auto on rnd-1ssd-vma-pc0 (non-rotational, vma_ra_enabled): VMA readahead
# on every layout without a rotational device, cluster readahead on one
# with; the runs record it ('ra_window_vma') and the layout chart says so
db="$WORK/rnd-1ssd-vma-pc0.db"
if [ -s "$db" ]; then
	"$SWAPTRACE" replay -p auto -p fixed -c 3 -l traced -l 1:hdd -l 2 "$db" > /dev/null ||
		fail "rnd-1ssd-vma-pc0: replay on three layouts"
	check_eq "$(sqlite3 "$db" "SELECT group_concat(policy || ' ' || layout || ': ' ||
		CASE vma WHEN misses THEN 'all' WHEN 0 THEN 'none' ELSE vma || ' of ' || misses END, '; ')
		FROM (SELECT r.*, (SELECT coalesce(sum(count), 0) FROM run_histogram h
		      WHERE h.run_id = r.id AND h.partition = -1 AND h.kind = 'ra_window_vma') AS vma
		      FROM run r)")" \
		"auto traced: all; fixed traced: none; auto 1:hdd: none; fixed 1:hdd: none; auto 2: all; fixed 2: none" \
		"rnd-1ssd-vma-pc0: VMA readahead windows of all misses, per run"
	check_eq "$(sqlite3 "$db" "SELECT count(*) FROM run r WHERE (SELECT sum(count) FROM run_histogram h
		WHERE h.run_id = r.id AND h.kind = 'ra_window_vma' AND h.partition >= 0) IS NOT
		(SELECT sum(count) FROM run_histogram h WHERE h.run_id = r.id AND h.kind = 'ra_window_vma'
		 AND h.partition = -1)")" 0 "rnd-1ssd-vma-pc0: the partitions' VMA windows add up to the run's"
	"$SWAPTRACE" report --format svg -o "$WORK/vma-report" "$db" > /dev/null ||
		fail "rnd-1ssd-vma-pc0: report"
	json_get "$WORK/vma-report/layout.json" '"\n".join(d["notes"])' > "$WORK/vma-notes.txt"
	grep -qxF "auto read ahead by virtual address (VMA readahead) on traced and 2, where no device is rotational, and by swap slot (cluster readahead) on 1:hdd." \
		"$WORK/vma-notes.txt" || fail "rnd-1ssd-vma-pc0: the layout chart does not say which layouts took VMA readahead: $(cat "$WORK/vma-notes.txt")"
	"$SWAPTRACE" report --format svg --policy fixed -o "$WORK/vma-report-fixed" "$db" > /dev/null ||
		fail "rnd-1ssd-vma-pc0: report --policy fixed"
	json_get "$WORK/vma-report-fixed/layout.json" '"\n".join(d["notes"])' | grep -q "VMA readahead) on" &&
		fail "rnd-1ssd-vma-pc0: a note on VMA readahead on the layout chart of fixed"
fi
finish
