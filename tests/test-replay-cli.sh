#!/bin/bash
# swaptrace replay and policies end to end on the bundled sample (a real
# page-cluster 0 capture): the sweep, the three output formats with their
# exact keys, the stored tables, sanity of the policies, plugins (the
# template, and broken ones: crashing, wrong ABI, missing symbol, refusing,
# failing on a miss), refusal of a readahead-mixed capture unless
# --approximate, bad arguments.
. "$(dirname "$0")/lib.sh"

db="$WORK/sample.db"
"$SWAPTRACE" ingest -q -o "$db" "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0" || { fail "ingest"; finish; }

# --- a sweep, JSON with exactly the documented keys ---------------------------
"$SWAPTRACE" replay --json -p none -p fixed -p adaptive -p auto -p oracle -p leap -c 0,3 "$db" \
	> "$WORK/sweep.json" || fail "replay sweep"
python3 - "$WORK/sweep.json" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
d = json.load(open(sys.argv[1]))
M = {"faults", "misses", "hits", "pages_read", "ra_pages", "ra_hits", "ra_wasted", "accuracy",
     "coverage", "read_requests", "read_merges", "avg_request_kib"}
assert set(d) == {"runs"}, d.keys()
runs = d["runs"]
assert len(runs) == 12, len(runs)
for r in runs:
    # the issue's shape exactly, keys in its order: "layout" only with --layout
    assert list(r) == ["policy", "page_cluster", "cache_pages", "totals", "partitions"], r.keys()
    assert set(r["totals"]) == M, r["totals"].keys()
    assert r["cache_pages"] == 52480          # the capture's 205 MB cgroup limit
    for p in r["partitions"]:
        assert set(p) == M | {"dev"}, p.keys()
    t = r["totals"]
    assert t["faults"] == t["misses"] + t["hits"]
    assert t["ra_hits"] <= t["ra_pages"] and t["pages_read"] == t["misses"] + t["ra_pages"]
    assert t["read_requests"] + t["read_merges"] == t["pages_read"]
    if r["page_cluster"] == 0 or r["policy"] == "none":
        # no readahead: every fault reads its own page, one request each
        assert t["ra_pages"] == 0 and t["hits"] == 0, r
        assert t["pages_read"] == t["faults"] == t["misses"] == 75047, t
        assert t["accuracy"] is None
by = {(r["policy"], r["page_cluster"]): r["totals"] for r in runs}
o = by[("oracle", 3)]
assert abs(o["accuracy"] - 1.0) < 1e-9, o
for p in ("fixed", "adaptive", "auto", "leap"):
    assert by[(p, 3)]["coverage"] <= o["coverage"], (p, by[(p, 3)], o)
    assert by[(p, 3)]["coverage"] > 0.1, p
print("sweep ok")
PY

# --- the runs are stored -----------------------------------------------------------
check_eq "$(sqlite3 "$db" 'SELECT count(*) FROM run')" 12 "stored runs"
check_eq "$(sqlite3 "$db" 'SELECT count(*) FROM run_partition')" 12 "stored partitions"
check_eq "$(sqlite3 "$db" "SELECT count(DISTINCT run_id) FROM run_histogram WHERE kind = 'ra_window'")" 12 "window histograms"
check_eq "$(sqlite3 "$db" "SELECT sum(count) FROM run_histogram h JOIN run r ON r.id = h.run_id WHERE r.policy = 'auto' AND r.page_cluster = 3 AND h.kind = 'request_pages' AND h.partition = -1") " \
	"$(sqlite3 "$db" "SELECT read_requests FROM run WHERE policy = 'auto' AND page_cluster = 3") " "request histogram sums to the requests"
check_eq "$(sqlite3 "$db" "SELECT sum(s.faults) = r.faults FROM run_series s JOIN run r ON r.id = s.run_id WHERE r.policy = 'auto' AND r.page_cluster = 3")" 1 "series sums to the faults"

# --- a run repeated is not stored again ---------------------------------------------
# The same replay twice stored every run twice (a report drew them once):
# a run whose settings and results, in run and every table keyed by it,
# are those of a stored run is not stored, and replay says which it is.
again="$WORK/again.db"
cp "$db" "$again"
rows() { # db: the rows of the run tables, and the last run id
	sqlite3 "$1" "SELECT (SELECT count(*) FROM run) || ' ' || (SELECT count(*) FROM run_partition) || ' ' ||
		(SELECT count(*) FROM run_histogram) || ' ' || (SELECT count(*) FROM run_series) || ' ' ||
		(SELECT max(id) FROM run)"
}
"$SWAPTRACE" replay --json -p none -p fixed -p adaptive -p auto -p oracle -p leap -c 0,3 "$again" \
	> "$WORK/again.json" 2> "$WORK/again.err" || fail "the sweep replayed again: $(cat "$WORK/again.err")"
check_eq "$(rows "$again")" "$(rows "$db")" "the sweep replayed again: nothing stored"
check_eq "$(cat "$WORK/again.err")" \
	"swaptrace: replay: 12 of 12 runs were already stored with the same results (run ids 1-12): not stored again" \
	"the sweep replayed again: the note"
cmp -s "$WORK/again.json" "$WORK/sweep.json" || fail "the sweep replayed again: not the same output"
# a sweep overlapping the first one: its new runs stored, in its order, ids following on
"$SWAPTRACE" replay -p fixed -p leap -p vma -c 3,4 "$again" > /dev/null 2> "$WORK/again.err" ||
	fail "an overlapping sweep: $(cat "$WORK/again.err")"
check_eq "$(cat "$WORK/again.err")" \
	"swaptrace: replay: 2 of 6 runs were already stored with the same results (run ids 4, 12): not stored again" \
	"an overlapping sweep: the note"
check_eq "$(sqlite3 "$again" "SELECT group_concat(id || ':' || policy || page_cluster, ' ') FROM run WHERE id > 12")" \
	"13:fixed4 14:leap4 15:vma3 16:vma4" "an overlapping sweep: its new runs stored"
check_eq "$(sqlite3 "$again" "SELECT count(DISTINCT run_id) FROM run_series WHERE run_id > 12") \
$(sqlite3 "$again" "SELECT count(DISTINCT run_id) FROM run_histogram WHERE run_id > 12")" "4 4" \
	"an overlapping sweep: the new runs' rows"
"$SWAPTRACE" replay -p vma -c 4 "$again" > /dev/null 2> "$WORK/again.err" || fail "one run replayed again"
check_eq "$(cat "$WORK/again.err")" \
	"swaptrace: replay: the run was already stored with the same results (run id 16): not stored again" \
	"one run replayed again: the note"
"$SWAPTRACE" replay --no-store -p vma -c 4 "$again" > /dev/null 2> "$WORK/again.err" || fail "--no-store replayed again"
check_eq "$(cat "$WORK/again.err")" "" "--no-store: no note"
check_eq "$(rows "$again")" "16 16 $(sqlite3 "$again" "SELECT count(*) FROM run_histogram") $(sqlite3 "$again" \
	"SELECT count(*) FROM run_series") 16" "repeated runs: the rows of 16 runs"
# A stored run whose results differ (here altered: another swaptrace, a
# rebuilt plugin), in any table keyed by the run, a row changed, missing or
# added, or a setting: the run is stored (and a second time not).
for alter in "UPDATE run SET ra_wasted = ra_wasted + 1 WHERE id = 4" \
	"UPDATE run SET approximate = 1 WHERE id = 4" \
	"UPDATE run_partition SET read_merges = read_merges - 1 WHERE run_id = 4" \
	"UPDATE run_histogram SET count = count + 1 WHERE run_id = 4 AND kind = 'request_pages' AND bucket = 1 AND partition = -1" \
	"DELETE FROM run_histogram WHERE run_id = 4 AND kind = 'ra_window' AND partition >= 0" \
	"INSERT INTO run_histogram VALUES (4, -1, 'ra_window', 1000, 1)" \
	"UPDATE run_series SET hits = hits + 1, misses = misses - 1 WHERE run_id = 4 AND second = 3" \
	"DELETE FROM run_series WHERE run_id = 4 AND second = (SELECT max(second) FROM run_series WHERE run_id = 4)" \
	"INSERT INTO run_series VALUES (4, 0, 100000, 1, 0, 1, 1)"; do
	cp "$again" "$WORK/altered.db"
	sqlite3 "$WORK/altered.db" "$alter" || { fail "$alter"; continue; }
	"$SWAPTRACE" replay -p fixed -c 3 "$WORK/altered.db" > /dev/null 2> "$WORK/altered.err" ||
		fail "$alter: replay: $(cat "$WORK/altered.err")"
	check_eq "$(sqlite3 "$WORK/altered.db" "SELECT group_concat(id) FROM run WHERE policy = 'fixed' AND page_cluster = 3")$(cat "$WORK/altered.err")" \
		"4,17" "$alter: the run is stored again"
	"$SWAPTRACE" replay -p fixed -c 3 "$WORK/altered.db" > /dev/null 2> "$WORK/altered.err"
	check_eq "$(sqlite3 "$WORK/altered.db" "SELECT count(*) FROM run")|$(cat "$WORK/altered.err")" \
		"17|swaptrace: replay: the run was already stored with the same results (run id 17): not stored again" \
		"$alter: the run stored again is not stored a third time"
done

# --- --layout adds the run's layout after cache_pages, nothing else changes ---
"$SWAPTRACE" replay --no-store --json -p auto -c 3 "$db" > "$WORK/plain.json" &&
"$SWAPTRACE" replay --no-store --json -p auto -c 3 -l traced "$db" > "$WORK/traced.json" ||
	fail "replay --json with and without -l traced"
python3 - "$WORK/plain.json" "$WORK/traced.json" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
plain, traced = (json.load(open(f))["runs"][0] for f in sys.argv[1:])
assert list(traced) == ["policy", "page_cluster", "cache_pages", "layout", "totals", "partitions"], traced.keys()
assert traced.pop("layout") == "traced" and traced == plain, (plain, traced)
PY

# --- CSV and table ------------------------------------------------------------------
"$SWAPTRACE" replay --no-store --csv -p auto -c 3 "$db" > "$WORK/out.csv" || fail "csv"
check_eq "$(head -1 "$WORK/out.csv")" \
	"policy,page_cluster,cache_pages,layout,dev,faults,misses,hits,pages_read,ra_pages,ra_hits,ra_wasted,accuracy,coverage,read_requests,read_merges,avg_request_kib" "csv header"
check_eq "$(wc -l < "$WORK/out.csv")" 3 "csv rows (all + one partition)"
"$SWAPTRACE" replay --no-store -p auto -c 3 "$db" | grep -q '^auto .* all ' || fail "table output"
check_eq "$(sqlite3 "$db" 'SELECT count(*) FROM run')" 12 "--no-store stores nothing"
# a request limit below one page: refused (on 16 KiB pages --max-request-kib 4
# stored every request in a 0-page bucket of the request histogram)
cp "$db" "$WORK/page16k.db"
sqlite3 "$WORK/page16k.db" "UPDATE capture SET page_size = 16384"
msg=$("$SWAPTRACE" replay -p fixed -c 3 --max-request-kib 4 "$WORK/page16k.db" 2>&1 >/dev/null)
check_eq "$?" 2 "--max-request-kib below a page: a usage error"
check_eq "$msg" "swaptrace: replay: bad --max-request-kib 4: below one page of '$WORK/page16k.db' (16 KiB)" \
	"--max-request-kib below a page: the message"
check_eq "$(sqlite3 "$WORK/page16k.db" 'SELECT count(*) FROM run')" 12 "--max-request-kib below a page: nothing stored"
# requests split at the swap devices' limit by default: the smaller of
# max_sectors_kb and max_segments pages (a swap page is a one-segment bio),
# as the capture's swap_device facts record them; else 1280 KiB or 128 pages
cp "$db" "$WORK/limits.db"
sqlite3 "$WORK/limits.db" "DELETE FROM run_histogram; DELETE FROM run_partition; DELETE FROM run_series;
	DELETE FROM run" || fail "request limits: no runs"
"$SWAPTRACE" replay -p fixed -c 8 "$WORK/limits.db" > /dev/null || fail "request limits: replay"
sqlite3 "$WORK/limits.db" "INSERT INTO capture_fact (section, key, value) VALUES
	('', 'swap_device', 'path=/dev/loop0 dev=7:0 type=partition max_sectors_kb=1280 max_segments=33 start=0'),
	('', 'swap_device', 'path=/dev/loop1 dev=7:1 type=partition max_sectors_kb=64 start=0'),
	('', 'swap_device', 'path=/dev/loop2 dev=7:2 type=partition start=0')"
"$SWAPTRACE" replay -p fixed -c 8 "$WORK/limits.db" > /dev/null || fail "request limits: replay with facts"
sqlite3 "$WORK/limits.db" "UPDATE capture_fact SET value = replace(value, 'max_sectors_kb=64', 'max_sectors_kb=1024')"
"$SWAPTRACE" replay -p fixed -c 8 "$WORK/limits.db" > /dev/null || fail "request limits: replay with facts"
check_eq "$(sqlite3 "$WORK/limits.db" "SELECT group_concat(max_request_kib || ':' || (SELECT max(bucket)
	FROM run_histogram h WHERE h.run_id = run.id AND kind = 'request_pages' AND partition = -1
	AND count > 0), ' ') FROM (SELECT * FROM run WHERE policy = 'fixed' AND page_cluster = 8 ORDER BY id) run")" \
	"512:128 64:16 132:33" "request limits: 128 segments by default, the smallest device's limit from the capture"
"$SWAPTRACE" report --no-replay -f svg -o "$WORK/limits" "$WORK/limits.db" > /dev/null || fail "request limits: report"
check_eq "$(python3 -c 'import json, sys
print(sorted(e["name"] for e in json.load(open(sys.argv[1]))["legend"] if e["name"].startswith("fixed")))' \
	"$WORK/limits/policy.json")" "['fixed', 'fixed (--max-request-kib 512)', 'fixed (--max-request-kib 64)']" \
	"request limits: a report names the runs made with another limit than the capture's devices'"
# a limit that split no request gives the default's numbers: a run an
# older replay stored at its default (1280 KiB) is a default run where its
# requests stayed below both limits (page-cluster 3), not where they reached one
cp "$WORK/limits.db" "$WORK/older.db"
sqlite3 "$WORK/older.db" "DELETE FROM capture_fact WHERE key = 'swap_device'"
{ "$SWAPTRACE" replay -p fixed -c 3 --max-request-kib 1280 "$WORK/older.db" &&
  "$SWAPTRACE" replay -p fixed -c 3 --max-request-kib 16 "$WORK/older.db"; } > /dev/null ||
	fail "request limits: older runs"
"$SWAPTRACE" report --no-replay -f svg -o "$WORK/older" "$WORK/older.db" > /dev/null || fail "request limits: older report"
check_eq "$(python3 -c 'import json, sys
print(sorted(e["name"] for e in json.load(open(sys.argv[1]))["legend"] if e["name"].startswith("fixed")))' \
	"$WORK/older/policy.json")" "['fixed', 'fixed (--max-request-kib 16)']" \
	"request limits: a run at another limit that split nothing is a default run"
"$SWAPTRACE" info "$WORK/limits.db" | grep -qx "  Read requests split at 132 KiB: the swap devices' max_sectors_kb or" ||
	fail "request limits: info does not give the limit: $("$SWAPTRACE" info "$WORK/limits.db" | sed -n '/^Replay/,$p')"
# a limit of no whole number of pages (127 KiB; 1280 KiB on 512 KiB pages)
# splits at whole pages and is stored as those: a run at the default is
# one (the report took it as made with --max-request-kib 124 or 1024 and
# left it out of its answer)
for case in "127:4096:124" "1280:524288:1024"; do
	IFS=: read -r kb ps stored <<< "$case"
	cp "$db" "$WORK/limits-$kb.db"
	sqlite3 "$WORK/limits-$kb.db" "DELETE FROM run_histogram; DELETE FROM run_partition;
		DELETE FROM run_series; DELETE FROM run; UPDATE capture SET page_size = $ps;
		INSERT INTO capture_fact (section, key, value) VALUES ('', 'swap_device',
		'path=/dev/loop0 dev=7:0 type=partition max_sectors_kb=$kb max_segments=128 start=0')"
	"$SWAPTRACE" replay -p fixed -c 3 "$WORK/limits-$kb.db" > /dev/null ||
		fail "request limits of no whole page ($case): replay"
	check_eq "$(sqlite3 "$WORK/limits-$kb.db" 'SELECT group_concat(max_request_kib) FROM run')" \
		"$stored" "request limits of no whole page ($case): stored as the pages split at"
	"$SWAPTRACE" report --no-replay -f svg -o "$WORK/limits-$kb" "$WORK/limits-$kb.db" > /dev/null ||
		fail "request limits of no whole page ($case): report"
	check_eq "$(python3 -c 'import json, sys
print(sorted(e["name"] for e in json.load(open(sys.argv[1]))["legend"] if e["name"].startswith("fixed")))' \
		"$WORK/limits-$kb/policy.json")" "['fixed']" \
		"request limits of no whole page ($case): a run at the default is named as one"
done
"$SWAPTRACE" info "$WORK/limits-127.db" | grep -qx "  Read requests split at 124 KiB: the swap devices' max_sectors_kb or" ||
	fail "request limits of no whole page: info does not give where they split: $("$SWAPTRACE" info "$WORK/limits-127.db" | grep 'split at')"
# the model's settings are stored with the run, and a report names a run
# made with other ones after them (both looked like the plain run's twin)
# (the plain run repeats the sweep's, which is kept)
cp "$db" "$WORK/model.db"
"$SWAPTRACE" replay -p fixed -c 3 "$WORK/model.db" > /dev/null 2>&1 &&
	"$SWAPTRACE" replay -p fixed -c 3 --inactive-fraction 0.95 --max-request-kib 4 "$WORK/model.db" \
		> /dev/null || fail "model settings: replay"
check_eq "$(sqlite3 "$WORK/model.db" "SELECT group_concat(id || '|' || coalesce(inactive_fraction, 'kernel')
	|| '|' || max_request_kib, ' ') FROM (SELECT * FROM run WHERE policy = 'fixed' AND page_cluster = 3
	ORDER BY id)")" "4|kernel|512 13|0.95|4" "model settings stored with the runs"
"$SWAPTRACE" report --no-replay -f svg -o "$WORK/model" "$WORK/model.db" > /dev/null ||
	fail "model settings: report"
check_eq "$(python3 -c 'import json, sys
print(sorted(e["name"] for e in json.load(open(sys.argv[1]))["legend"] if e["name"].startswith("fixed")))' \
	"$WORK/model/policy.json")" "['fixed', 'fixed (--inactive-fraction 0.95, --max-request-kib 4)']" \
	"a report names the run made with other model settings"
# ... its table row says them, and the run shown alone is a plain one
grep -q -- "<td class=\"t\">--inactive-fraction 0.95, --max-request-kib 4</td>" "$WORK/model/index.html" ||
	fail "the runs table does not give the model settings"
# a database whose runs all have other model settings: the answer says why
# it is empty; a plain run stored after one of them is the one shown alone
cp "$db" "$WORK/model-only.db"
sqlite3 "$WORK/model-only.db" "DELETE FROM run_partition; DELETE FROM run_histogram;
	DELETE FROM run_series; DELETE FROM run"
"$SWAPTRACE" replay -p fixed -c 0-3 --inactive-fraction 0.3 "$WORK/model-only.db" > /dev/null ||
	fail "model settings only: replay"
cp "$WORK/model-only.db" "$WORK/model-first.db"
"$SWAPTRACE" replay -p fixed -c 3 "$WORK/model-first.db" > /dev/null || fail "model settings first: replay"
"$SWAPTRACE" report --no-replay -f svg -o "$WORK/model-first" "$WORK/model-first.db" > /dev/null 2>&1 ||
	fail "model settings first: report"
grep -q "The highlighted run #5 " "$WORK/model-first/index.html" ||
	fail "the run shown alone is not the plain one: $(grep -o 'The highlighted run #[0-9]* ' "$WORK/model-first/index.html")"
"$SWAPTRACE" report --no-replay -f svg -o "$WORK/model-only" "$WORK/model-only.db" \
	> "$WORK/model-only.out" 2>&1 || fail "model settings only: report"
grep -q "No run replayed with the model's default settings: the answer compares only those" \
	"$WORK/model-only.out" || fail "model settings only: the answer does not say why it is empty: $(cat "$WORK/model-only.out")"
# a database of schema version 3 (no such columns, nor version 4's
# task.tgid, nor version 6's block_event view) is upgraded in place by a
# command that writes it, its runs kept; read-only ones say so
cp "$WORK/model.db" "$WORK/v3.db"
sqlite3 "$WORK/v3.db" "DROP VIEW block_event; CREATE VIEW block_event AS SELECT 1 AS version_5;
	ALTER TABLE run DROP COLUMN inactive_fraction; ALTER TABLE run DROP COLUMN
	max_request_kib; ALTER TABLE task DROP COLUMN tgid; UPDATE swt_meta SET value = '3' WHERE key = 'schema_version';
	PRAGMA user_version = 3;" || fail "making a version 3 database"
check_eq "$("$SWAPTRACE" info "$WORK/v3.db" 2>&1 >/dev/null; echo "rc=$?")" \
	"swaptrace: info: '$WORK/v3.db': database schema version 3, this swaptrace reads 6: a command that writes it (replay without --no-store; report without --run or --no-replay) upgrades it in place, or ingest again
rc=1" "a version 3 database opened read-only"
# replay --no-store reads a version 3 or 4 database as it is (it was
# refused, told that replay upgrades it): the runs of the database
# upgraded (task.tgid NULL), the file not written
cp "$db" "$WORK/v4.db"
sqlite3 "$WORK/v4.db" "ALTER TABLE task DROP COLUMN tgid; UPDATE swt_meta SET value = '4' WHERE key = 'schema_version';
	PRAGMA user_version = 4;" || fail "making a version 4 database"
"$SWAPTRACE" replay --no-store --csv -p auto -p fixed -c 0,3 "$db" > "$WORK/v5-nostore.csv" ||
	fail "replay --no-store on the current database"
for v in 3 4; do
	cp "$WORK/v$v.db" "$WORK/v$v-before.db"
	check_eq "$("$SWAPTRACE" replay --no-store --csv -p auto -p fixed -c 0,3 "$WORK/v$v.db" \
		2>&1 > "$WORK/v$v-nostore.csv"; echo "rc=$?")" "rc=0" "replay --no-store on a version $v database"
	cmp -s "$WORK/v$v-nostore.csv" "$WORK/v5-nostore.csv" ||
		fail "replay --no-store on a version $v database: not the runs of the current one"
	cmp -s "$WORK/v$v.db" "$WORK/v$v-before.db" ||
		fail "replay --no-store wrote the version $v database"
done
# four writers at once: one upgrades, the others find it done ("duplicate
# column name" failed them); the run is stored once (the settings of the
# sweep's are not known: another run), the others find it stored
for i in 1 2 3 4; do
	"$SWAPTRACE" replay -p none -c 0 "$WORK/v3.db" > /dev/null 2> "$WORK/v3-$i.err" &
	UPGRADERS[$i]=$!
done
repeats=0
for i in 1 2 3 4; do
	wait "${UPGRADERS[$i]}"
	status=$?
	if [ "$(cat "$WORK/v3-$i.err")" = "swaptrace: replay: the run was already stored with the same results (run id 14): not stored again" ]; then
		repeats=$((repeats + 1))
		: > "$WORK/v3-$i.err"
	fi
	check_eq "$status:$(cat "$WORK/v3-$i.err")" "0:" "replay $i of 4 upgrading a version 3 database"
done
check_eq "$repeats" 3 "replays upgrading a version 3 database that found the run stored"
check_eq "$(sqlite3 "$WORK/v3.db" "SELECT (SELECT value FROM swt_meta WHERE key = 'schema_version'),
	(SELECT user_version FROM pragma_user_version), count(*), count(inactive_fraction),
	count(max_request_kib), (SELECT count(*) FROM pragma_table_info('task')
	WHERE name = 'tgid') FROM run")" "6|6|14|0|1|1" \
	"a version 3 database upgraded: version, runs kept (settings unknown), the new run's recorded, task.tgid"
"$SWAPTRACE" info "$WORK/v3.db" > /dev/null || fail "info on an upgraded database"
check_eq "$(sqlite3 "$WORK/v3.db" "SELECT sql FROM sqlite_master WHERE name = 'block_event'")" \
	"$(sqlite3 "$db" "SELECT sql FROM sqlite_master WHERE name = 'block_event'")" \
	"a version 3 database upgraded: the block_event view made anew"
# a run of before (settings not recorded) and its repeat after are one run
# in a report: 14 stored, the two of none at 0 one
check_eq "$("$SWAPTRACE" report --no-replay -o "$WORK/v3-report" "$WORK/v3.db" 2>&1 | tail -1)" \
	"swaptrace: report: 6 charts from 13 replay runs in '$WORK/v3-report': open '$WORK/v3-report/index.html'" \
	"a report of an upgraded database counts repeated runs once"
# a setting given twice is replayed once (twice, it was stored twice), and
# repeated --page-cluster and --cache-pages lists add up as --policy does
"$SWAPTRACE" replay --no-store --csv -p leap -p leap:history=32 -p leap:history=032 -c 3,3 -c 1 \
	-m 100% -m 52480 "$db" \
	> "$WORK/twice.csv" || fail "settings given twice"
check_eq "$(sed 1d "$WORK/twice.csv" | grep ',all,' | cut -d, -f1-3 | tr '\n' ' ')" \
	"leap,3,52480 leap,1,52480 " "settings given twice are replayed once"
# a policy prints in one spelling, whichever came first: its parameters not
# at their defaults, in the policy's order (it printed as given)
"$SWAPTRACE" replay --no-store --csv -p leap:min_window=auto,history=032 \
	-p leap:min_window=02,history=16 -p oracle:at=faults -p oracle:at=misses -c 3 "$db" \
	> "$WORK/spelt.csv" || fail "policies in other spellings"
check_eq "$(sed -n 's/,3,52480,traced,all,.*//p' "$WORK/spelt.csv" | tr '\n' ' ')" \
	'leap "leap:history=16,min_window=2" oracle oracle:at=misses ' \
	"policies print in one spelling (--csv)"
check_eq "$("$SWAPTRACE" replay --no-store --json -p leap:history=032 -p fixed: -c 3 "$db" 2>&1)" \
	"swaptrace: replay: policy 'fixed:': an empty item in the parameter list" \
	"a spec refused is named as given"
check_eq "$("$SWAPTRACE" replay --no-store --json -p leap:history=032,min_window=4 -c 3 "$db" |
	grep -o '"policy":"[^"]*"')" '"policy":"leap:min_window=4"' "policies print in one spelling (--json)"
# ... within one list too: 65 settings that are one are not past the 64
# a sweep takes (they were, as they are not given in 65 options)
"$SWAPTRACE" replay --no-store --csv -p none -c "$(printf '3,%.0s' $(seq 64))3" \
	-m "$(printf '100%%,%.0s' $(seq 64))100%" -m "$(printf '52480,%.0s' $(seq 64))52480" "$db" \
	> "$WORK/twice.csv" 2> "$WORK/err.txt" || fail "a setting given 65 times in a list: $(cat "$WORK/err.txt")"
check_eq "$(sed 1d "$WORK/twice.csv" | grep ',all,' | cut -d, -f1-3 | tr '\n' ' ')" \
	"none,3,52480 " "a setting given 65 times in a list is replayed once"
# a built-in's numbers are decimal however spelt: stored in one spelling, so
# that the report takes history=032 for the default run it is (and at 3
# it repeats the sweep's run)
cp "$db" "$WORK/spelt.db"
"$SWAPTRACE" replay -p leap:min_window=auto,history=032 -c 3,4 "$WORK/spelt.db" > /dev/null \
	2> "$WORK/spelt.err" || fail "zero-padded parameters"
check_eq "$(sqlite3 "$WORK/spelt.db" "SELECT group_concat(DISTINCT params) || ' ' || count(*) FROM run
	WHERE policy = 'leap'")" "history=32,min_window=auto 3" "a built-in's numbers are stored in decimal"
check_eq "$(cat "$WORK/spelt.err")" \
	"swaptrace: replay: 1 of 2 runs was already stored with the same results (run id 12): not stored again" \
	"zero-padded parameters: the default run's repeat"
for spec in fixed: "leap:history=64," "leap:,history=64"; do
	msg=$("$SWAPTRACE" replay --no-store -p "$spec" "$db" 2>&1 >/dev/null)
	check_eq "$?:$msg" "2:swaptrace: replay: policy '$spec': an empty item in the parameter list" \
		"an empty item in -p $spec"
done
# zero-padded numbers are decimal (010 was octal: page-cluster 8, 050 % 40 %)
"$SWAPTRACE" replay --no-store --csv -p none -c 010 -m 050% "$db" > "$WORK/padded.csv" ||
	fail "zero-padded page-cluster and memory"
check_eq "$(sed -n 2p "$WORK/padded.csv" | cut -d, -f1-3)" "none,10,26240" \
	"zero-padded page-cluster and memory are decimal"

# --- runs deleted by hand with plain sqlite3 (foreign keys not enforced):
# the next runs take their ids and replace the rows they left ---
cp "$db" "$WORK/del.db"
sqlite3 "$WORK/del.db" "DELETE FROM run WHERE id > 10" || fail "deleting runs by hand"
"$SWAPTRACE" replay -p leap -c 0,3 "$WORK/del.db" > /dev/null || fail "replay after runs deleted by hand"
check_eq "$(sqlite3 "$WORK/del.db" "SELECT (SELECT group_concat(id) FROM run WHERE id > 10) || ' ' ||
	(SELECT count(*) FROM run_partition WHERE run_id NOT IN (SELECT id FROM run)) || ' ' ||
	(SELECT count(DISTINCT run_id) FROM run_histogram) || ' ' ||
	(SELECT count(DISTINCT run_id) FROM run_series)")" "11,12 0 12 12" "runs deleted by hand: their ids reused, their rows replaced"

# --- a file-size limit (ulimit -f) the stored runs outgrow: the replay
# fails in one line, as on a full disk, and rolls its runs back (SIGXFSZ
# killed it, status 153, with a hot journal of its half-stored runs left
# beside the database) ---
cp "$db" "$WORK/fsize.db"
sqlite3 "$WORK/fsize.db" "DELETE FROM run; VACUUM" || fail "file-size limit: preparing"
cp "$WORK/fsize.db" "$WORK/fsize.orig"
kib=$(($(stat -c %s "$WORK/fsize.db") / 1024))
(ulimit -f "$kib" && exec "$SWAPTRACE" replay -p none -p fixed -c 0-8 "$WORK/fsize.db") \
	> /dev/null 2> "$WORK/fsize.err"
check_eq "$?:$(cat "$WORK/fsize.err")" \
	"1:swaptrace: replay: '$WORK/fsize.db': disk I/O error (File too large)" \
	"file-size limit: exit status, message"
cmp -s "$WORK/fsize.db" "$WORK/fsize.orig" || fail "file-size limit: the database was changed"
check_eq "$(cd "$WORK" && ls fsize.db*)" "fsize.db" "file-size limit: files beside the database"

# --- memory size changes the answer, as documented ------------------------------------
"$SWAPTRACE" replay --no-store --json -p auto -c 3 -m 20000,52480,80000 "$db" > "$WORK/mem.json" || fail "cache sweep"
python3 - "$WORK/mem.json" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
r = json.load(open(sys.argv[1]))["runs"]
acc = [x["totals"]["accuracy"] for x in r]
assert [x["cache_pages"] for x in r] == [20000, 52480, 80000]
assert acc[0] < acc[1] < acc[2], acc    # readahead pages live longer in more memory
PY
# shares of the default (the sample's cgroup limit, 52 480 pages), rounded to the nearest page
"$SWAPTRACE" replay --no-store --json -p auto -c 3 -m 50%,100%,150%,1% "$db" > "$WORK/mempct.json" ||
	fail "cache sweep in percent"
check_eq "$(json_get "$WORK/mempct.json" '[r["cache_pages"] for r in d["runs"]]')" \
	"[26240, 52480, 78720, 525]" "--cache-pages in percent of the default"
check_eq "$(json_get "$WORK/mempct.json" 'd["runs"][1]["totals"]') " \
	"$(json_get "$WORK/mem.json" 'd["runs"][1]["totals"]') " "100% is the default memory"
# (1-65: more settings than a sweep takes)
for bad_list in 0% 1001% 50%x % 50%,1000 -5% 50%% 1-65; do
	"$SWAPTRACE" replay --no-store -m "$bad_list" "$db" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?" 2 "--cache-pages $bad_list exits 2"
	check_eq "$(cat "$WORK/err.txt")" "swaptrace: replay: bad --cache-pages '$bad_list': page counts, or percentages 1%..1000% of the default, e.g. 50%,100%,150% (one kind per list; 64 settings at most)" \
		"--cache-pages $bad_list message"
done
# more memory than the replay's rings index is refused with the options,
# exit 2, the limit named (it was refused as the first run started, exit 1)
"$SWAPTRACE" replay --no-store -m 357848404 "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: bad --cache-pages 357848404: more memory than the replay handles, 357848403 pages at most with the kernel's inactive share" \
	"--cache-pages beyond the replay's memory"
"$SWAPTRACE" replay --no-store -m 200000000 --inactive-fraction 0.99 "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: bad --cache-pages 200000000: more memory than the replay handles, 180698417 pages at most with this --inactive-fraction" \
	"--cache-pages beyond the replay's memory with most of it inactive"
# ... and so is a percentage (or the default 100%) of a capture's large limit
big="$WORK/big-limit.db"
cp "$db" "$big"
sqlite3 "$big" "UPDATE capture SET mem_limit_bytes = $((1 << 42))"
for case in 50%:536870912 :1073741824; do
	m=${case%:*}
	"$SWAPTRACE" replay --no-store ${m:+-m $m} "$big" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: '$big': ${m:-100%} of the default memory (1073741824 pages, the capture's memory limit) is ${case#*:} pages: more than the replay handles, 357848403 at most with the kernel's inactive share; give --cache-pages" \
		"--cache-pages '${m:-(default)}' of a large limit"
done

# --- policies ------------------------------------------------------------------------
"$SWAPTRACE" policies > "$WORK/policies.txt" || fail "policies"
for p in none fixed adaptive vma auto oracle leap; do
	grep -q "^$p " "$WORK/policies.txt" || fail "policies lists $p"
done
grep -q "history=32" "$WORK/policies.txt" || fail "policies shows parameters"

# --- plugins --------------------------------------------------------------------------
plugin="$SWT_BUILD_DIR/samples/libswt-policy-forward.so"
"$SWAPTRACE" replay --no-store --json -p "$plugin:pages=8" -c 3 "$db" > "$WORK/plugin.json" ||
	fail "template plugin"
check_eq "$(json_get "$WORK/plugin.json" 'd["runs"][0]["totals"]["ra_pages"] > 0')" True "template plugin reads ahead"
# a path that is not UTF-8 (a Latin-1 file name) still gives valid JSON
latin1=$(printf '%s/caf\351 "q".so' "$WORK")
cp "$plugin" "$latin1"
"$SWAPTRACE" replay --no-store --json -p "$latin1" -c 3 "$db" > "$WORK/latin1.json" ||
	fail "plugin with a Latin-1 path"
check_eq "$(json_get "$WORK/latin1.json" 'd["runs"][0]["policy"].endswith("caf\ufffd \"q\".so")')" True \
	"a Latin-1 plugin path is valid JSON, the byte as U+FFFD"
bad="$SWT_BUILD_DIR/tests/plugins"
expect_fail() { # pattern args...
	local pattern=$1; shift
	"$SWAPTRACE" "$@" > /dev/null 2> "$WORK/err.txt"
	local status=$?
	[ $status -ne 0 ] || fail "'$*' should fail"
	check_eq "$(wc -l < "$WORK/err.txt")" 1 "one error line for '$*'"
	grep -q -- "$pattern" "$WORK/err.txt" || fail "'$*': message '$(cat "$WORK/err.txt")' lacks '$pattern'"
}
before=$(sqlite3 "$db" 'SELECT count(*) FROM run')
expect_fail "crashed (Segmentation fault)" replay -p auto -p "$bad/libswt-bad-crash.so" -c 3 "$db"
check_eq "$(sqlite3 "$db" 'SELECT count(*) FROM run')" "$before" "a failed sweep stores nothing"
expect_fail "ABI version 99" replay -p "$bad/libswt-bad-bad_abi.so" "$db"
expect_fail "no 'swt_policy_plugin' symbol" replay -p "$bad/libswt-bad-no_symbol.so" "$db"
expect_fail "refuses to start" replay -p "$bad/libswt-bad-fail.so" "$db"
# a plugin refusing its parameters is a usage error, as a built-in's refusal
# is (it exited 1: the plugin's create() was first called in the run)
"$SWAPTRACE" replay -n -p "$bad/libswt-bad-fail.so" -p fixed "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: policy 'bad': this plugin refuses to start" \
	"a plugin that refuses to start"
# a reason that fills create()'s err to its end without a NUL, in a run
# (the trial before it is accepted): cut at the buffer's end (the message
# ran on into the stack past it)
"$SWAPTRACE" replay -n -c 3 -p "$bad/libswt-bad-unterminated.so" "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "1:swaptrace: replay: policy 'bad': $(printf 'x%.0s' $(seq 255))" \
	"a plugin's reason with no NUL"
"$SWAPTRACE" replay -n -p "$plugin:pages=abc" "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: policy 'forward': pages must be 1..63, not 'abc'" \
	"a plugin refusing a parameter's value"
# a parameter value holding a '/' does not move the end of the plugin's
# file name (the first ':' after the last '/': '...forward.so:pages=1' was
# loaded), nor does a ':' in its directory or in a built-in's value
mkdir -p "$WORK/a:b"
cp "$plugin" "$WORK/a:b/libfwd.so"
cp "$plugin" "$WORK/a:b/fwd"
for spec in "$plugin:pages=1/2" "$WORK/a:b/libfwd.so:pages=1/2" "$WORK/a:b/libfwd.so:pages=/x.so:1"; do
	"$SWAPTRACE" replay -n -p "$spec" "$db" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"2:swaptrace: replay: policy 'forward': pages must be 1..63, not '${spec#*.so:pages=}'" \
		"plugin spec '$spec'"
done
"$SWAPTRACE" replay -n -p "leap:history=1/2" "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: policy 'leap': history: not a number: '1/2'" \
	"a built-in's value holding a '/'"
# ... and a plugin in a directory holding a ':', with and without parameters,
# named *.so or not, is run
for spec in "$WORK/a:b/libfwd.so" "$WORK/a:b/libfwd.so:pages=8" "$WORK/a:b/fwd:pages=8"; do
	"$SWAPTRACE" replay -n --csv -p "$spec" -c 3 "$db" > "$WORK/colon.csv" 2> "$WORK/err.txt" ||
		fail "plugin spec '$spec': $(cat "$WORK/err.txt")"
done
# ... and one not named *.so keeps its file name as run.policy, and prints in
# a spelling that names it, where its parameters in the policy's order, or
# without those at their defaults, would end in '.so' (a spec ending so is a
# file name whole): 'params:n=2,lib=x.so' and 'params:lib=x.so' were
# printed, and stored as run.policy
cp "$bad/libswt-bad-params.so" "$WORK/a:b/params"
cp "$db" "$WORK/params.db"
"$SWAPTRACE" replay --csv -p "$WORK/a:b/params:lib=x.so,n=2" -p "$WORK/a:b/params:lib=x.so,n=1" \
	-c 3 "$WORK/params.db" > "$WORK/params.csv" 2> "$WORK/err.txt" ||
	fail "plugin specs with a value ending in .so: $(cat "$WORK/err.txt")"
check_eq "$(sqlite3 "$WORK/params.db" "SELECT group_concat(policy || '|' || params, ' ') FROM run
	WHERE params LIKE '%lib=x.so'")" "$WORK/a:b/params|n=2,lib=x.so $WORK/a:b/params|n=1,lib=x.so" \
	"a plugin's name stored whole, its last value ending in .so"
python3 -c '
import csv, sys
for r in csv.reader(open(sys.argv[1])):
    if r[4:5] == ["all"]:
        print(r[0])' "$WORK/params.csv" > "$WORK/params.specs"
check_eq "$(wc -l < "$WORK/params.specs")" 2 "two plugin runs printed"
while IFS= read -r spec; do
	check_eq "$("$SWAPTRACE" replay -n --csv -p "$spec" -c 3 "$db" 2>&1 |
		python3 -c 'import csv, sys; print(list(csv.reader(sys.stdin))[1][0])')" "$spec" \
		"printed plugin spec '$spec' names the plugin, and prints alike"
done < "$WORK/params.specs"
"$SWAPTRACE" replay -n -p "leap:history=abc" "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: policy 'leap': history: not a number: 'abc'" \
	"a built-in refusing a parameter's value"
"$SWAPTRACE" replay -n -p "oracle:at=hits" "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: policy 'oracle': at must be faults or misses, not 'hits'" \
	"the oracle refusing an at= it does not know"
# what the symbol points at is read only once it is known to be a policy:
# a char or a function there, or a name pointing nowhere, crashed swaptrace
expect_fail "its 'swt_policy_plugin' is 1 bytes, not a struct swt_policy" \
	replay -p "$bad/libswt-bad-not_struct.so" "$db"
expect_fail "its 'swt_policy_plugin' is a function, not a struct swt_policy" \
	replay -p "$bad/libswt-bad-function.so" "$db"
expect_fail "its name, summary or parameters point to memory that cannot be read" \
	replay -p "$bad/libswt-bad-bad_name.so" "$db"
# a slot listed eight times is read once: each miss reads one page ahead at most
"$SWAPTRACE" replay -n --json -c 3 -p "$bad/libswt-bad-duplicates.so" "$db" > "$WORK/dup.json" ||
	fail "replay with a plugin that lists a slot eight times"
check_eq "$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["runs"][0]["totals"]
print(t["ra_pages"] <= t["misses"], t["pages_read"] == t["misses"] + t["ra_pages"], t["read_requests"] == t["misses"])' \
	"$WORK/dup.json")" "True True True" "a slot listed eight times is read once"
expect_fail "replay with 'bad' failed: on_miss returned a window of unknown kind 7 at swap fault 1" \
	replay -n -p "$bad/libswt-bad-bad_kind.so" "$db"
# a count past the list's capacity read entries never written (exit 0), and
# a descending list was replayed as other I/O
expect_fail "replay with 'bad' failed: on_miss listed 74 entries at swap fault 1, past the window's capacity of 64" \
	replay -n -c 3 -p "$bad/libswt-bad-count_past.so" "$db"
expect_fail "on_miss listed slot [0-9]* after [0-9]* at swap fault 1: windows are listed in ascending order" \
	replay -n -c 3 -p "$bad/libswt-bad-descending.so" "$db"
# a window list of the plugin's own (4096 slots, past what the engine's
# rings are sized for) is refused, not read; an exit(0) is no result
expect_fail "replay with 'bad' failed: on_miss changed the window's list or capacity at swap fault 1 (the engine's list holds 64 entries: write into it)" \
	replay -n -p "$bad/libswt-bad-own_list.so" "$db"
expect_fail "policy '$bad/libswt-bad-exit_zero.so' ended the replay process (exit status 0) before it sent a result" \
	replay -n -p "$bad/libswt-bad-exit_zero.so" "$db"
# The isolated replay process a plugin runs in, child of swaptrace PID:
# printed once it is there, within TRIES tenths of a second.
# The process a plugin hangs in: a child of swaptrace still there half a
# second later (the trial load of a plugin's constructors, a child too,
# ends at once: taken for the hanging one, it made a writer meet the
# sweep still reading its capture).
plugin_child() { # pid tries
	local child
	for _ in $(seq 1 "$2"); do
		child=$(pgrep -P "$1" | tail -n 1)
		if [ -n "$child" ]; then
			sleep 0.5
			pgrep -P "$1" | grep -qx "$child" && break
			child=
		fi
		sleep 0.1
	done
	echo "$child"
}
# Kill swaptrace PID and give its plugin's process CHILD 5 s to follow.
kill_replay() { # pid child
	kill -KILL "$1"
	wait "$1" 2>/dev/null
	for _ in $(seq 1 50); do
		[ -n "$2" ] && kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
}
# Replay with hanging PLUGIN, kill swaptrace: the process the plugin runs
# in (WHAT, for messages) must be found and must die with it.
check_dies_with_swaptrace() { # plugin what
	local hung child
	"$SWAPTRACE" replay -n -p "$1" "$db" > /dev/null 2>&1 &
	hung=$!
	child=$(plugin_child "$hung" 100)
	sleep 0.5
	kill_replay "$hung" "$child"
	if [ -z "$child" ]; then
		fail "$2 was not found"
	elif kill -0 "$child" 2>/dev/null; then
		kill -KILL "$child"
		fail "$2 outlived the swaptrace killed for it"
	fi
}
# a plugin that never returns dies with the swaptrace killed for it
check_dies_with_swaptrace "$bad/libswt-bad-hang.so" "the replay process of a hanging plugin"
# A plugin that stops its own process (SIGSTOP, or a terminal's SIGTSTP
# with its default action) hung swaptrace for ever, reading the pipe of a
# process that would never write: it is killed, the replay fails in one
# line naming the plugin, and the sweep stores nothing (not its fixed run).
# timeout(1) runs swaptrace in a process group of its own, which is not
# orphaned: SIGTSTP stops there as in a shell's job.
"$SWAPTRACE" ingest -q -o "$WORK/stop.db" "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0" || fail "ingest for the stop cases"
for case in "stop:Stopped (signal)" "tstp:Stopped"; do
	so=$bad/libswt-bad-${case%%:*}.so
	timeout 60 "$SWAPTRACE" replay -p fixed -p "$so" -c 3 "$WORK/stop.db" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"1:swaptrace: replay: policy '$so' stopped the replay process (${case#*:}) during the replay; killed" \
		"a plugin that stops its process (${case%%:*})"
done
# the same before the runs, in the trial of the plugin's loading (its
# constructors) and of its create(), where it hung swaptrace too: the
# constructor's stop is refused as its crash is, create()'s is killed and
# left to the runs, which say so as above
so=$bad/libswt-bad-ctor_stop.so
timeout 60 "$SWAPTRACE" replay -p fixed -p "$so" -c 3 "$WORK/stop.db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" \
	"1:swaptrace: replay: policy plugin '$so' stopped the process (Stopped (signal)) while being loaded or unloaded (its constructors or destructors); killed" \
	"a plugin whose constructor stops its process"
so=$bad/libswt-bad-create_stop.so
timeout 60 "$SWAPTRACE" replay -p fixed -p "$so" -c 3 "$WORK/stop.db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" \
	"1:swaptrace: replay: policy '$so' stopped the replay process (Stopped (signal)) during the replay; killed" \
	"a plugin whose create() stops its process"
check_eq "$(sqlite3 "$WORK/stop.db" 'SELECT count(*) FROM run')" 0 "plugins that stop their process: nothing stored"
# but a stop of the whole process group, as a shell's Ctrl-Z, stops
# swaptrace too, and fg continues both: the replay goes on as if nothing
# happened.  The plugin's process stopped first and continued last, swaptrace
# running meanwhile, as a signal sent to the processes one by one may do.
timeout 60 "$SWAPTRACE" replay -n -p "$bad/libswt-bad-slow.so" -c 3 "$WORK/stop.db" > /dev/null 2> "$WORK/err.txt" &
group=$!
replayer=$(plugin_child "$group" 50)
child=$([ -n "$replayer" ] && plugin_child "$replayer" 50)
if [ -z "$child" ]; then
	fail "the replay process of a slow plugin was not found"
else
	kill -STOP "$child"
	sleep 0.2
	kill -STOP -- "-$group"
	sleep 1
	kill -CONT "$replayer" "$group"
	sleep 0.1
	kill -CONT "$child"
fi
wait "$group"
check_eq "$?:$(cat "$WORK/err.txt")" "0:" "a replay stopped and continued with its process group"
# create() is tried once before the sweep, in a child set up as a run's:
# one that never returns there dies with swaptrace too (it lived on until
# the trial's 10 s alarm, for ever if the plugin ignored it), and a crash
# there is a crash (a sanitizer's runtime made it exit 1: "create()
# refused its parameters, saying nothing", a usage error)
check_dies_with_swaptrace "$bad/libswt-bad-create_hang.so" "the trial of a hanging create()"
"$SWAPTRACE" replay -n -p "$bad/libswt-bad-create_crash.so" "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" \
	"1:swaptrace: replay: policy '$bad/libswt-bad-create_crash.so' crashed (Segmentation fault) during the replay" \
	"a plugin whose create() crashes"
# create() calling exit(1), the trial's code for a refusal, is no refusal:
# it said "create() refused its parameters, saying nothing", a usage error
"$SWAPTRACE" replay -n -p "$bad/libswt-bad-create_exit.so" "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" \
	"1:swaptrace: replay: policy '$bad/libswt-bad-create_exit.so' ended the replay process (exit status 1) before it sent a result" \
	"a plugin whose create() calls exit(1)"
# a plugin's constructors and destructors run in swaptrace's own process,
# at dlopen() and dlclose(): they are tried in a child first (a crashing
# constructor killed swaptrace with no word, exit 139; one calling exit(0)
# ended it with exit 0 and no runs; a crashing destructor killed it after
# the runs were stored, before their table was printed)
before=$(sqlite3 "$db" 'SELECT count(*) FROM run')
for case in "ctor_crash:crashed (Segmentation fault)" "ctor_exit:ended the process (exit status 0)" \
	"dtor_crash:crashed (Segmentation fault)"; do
	so=$bad/libswt-bad-${case%%:*}.so
	"$SWAPTRACE" replay -p fixed -p "$so" -c 3 "$db" > "$WORK/out.txt" 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"1:swaptrace: replay: policy plugin '$so' ${case#*:} while being loaded or unloaded (its constructors or destructors)" \
		"a plugin whose ${case%%:*}"
	check_eq "$(wc -c < "$WORK/out.txt")" 0 "a plugin whose ${case%%:*}: nothing printed"
done
check_eq "$(sqlite3 "$db" 'SELECT count(*) FROM run')" "$before" \
	"plugins whose constructors or destructors fail: nothing stored"
# a plugin printing to stdout (in its constructor, create() and on_miss)
# does not reach swaptrace's --json, which a JSON reader then refused
"$SWAPTRACE" replay -n --json -c 3 -p "$bad/libswt-bad-prints.so" "$db" > "$WORK/prints.json" \
	2> "$WORK/err.txt" || fail "a plugin that prints: $(cat "$WORK/err.txt")"
check_eq "$(json_get "$WORK/prints.json" 'len(d["runs"])')" 1 "a plugin that prints: --json reads as JSON"
# create() runs once more than there are replays: the trial above, in a
# child before the capture is loaded (so no run's environment is known),
# then once per run, each in its own child.  A side effect outside the
# process, as this plugin's line in a file, shows each call: the trial's
# first, then the runs' (include/swaptrace/policy.h tells plugins)
SWT_CREATE_LOG="$WORK/create.log" "$SWAPTRACE" replay --no-store --json -p "$bad/libswt-bad-create_log.so" \
	-c 0,3 "$db" > "$WORK/create.json" || fail "replay with a plugin that logs its create() calls"
check_eq "$(cat "$WORK/create.log")" \
	"trial
$(json_get "$WORK/create.json" '"\n".join("run page-cluster %d" % r["page_cluster"] for r in d["runs"])')" \
	"create() calls: the trial, then one per run"
# A writer holding the database when a sweep starts: said then, after the
# 5 s SQLite waits, not at the store after the whole sweep (whose work was
# lost, with a bare "database is locked")
cp "$db" "$WORK/locked.db"
# hold_db SQL DB: sqlite3 runs SQL on DB and keeps its connection open
# until release_db closes its input (a pipe from `sleep 30` kept the test
# waiting out the sleep: killing sqlite3 left the sleep running)
hold_db() {
	rm -f "$WORK/hold.fifo"
	mkfifo "$WORK/hold.fifo" || fail "hold_db: mkfifo"
	sqlite3 "$2" < "$WORK/hold.fifo" > /dev/null &
	HOLDER=$!
	exec {HOLD_FD}> "$WORK/hold.fifo"
	printf '%s\n' "$1" >&"$HOLD_FD"
}
release_db() {
	exec {HOLD_FD}>&-
	wait "$HOLDER" 2>/dev/null
	rm -f "$WORK/hold.fifo"
}
hold_db 'BEGIN IMMEDIATE; DELETE FROM run;' "$WORK/locked.db"
for _ in $(seq 1 50); do
	[ -e "$WORK/locked.db-journal" ] && break
	sleep 0.1
done
"$SWAPTRACE" replay -p fixed -c 3 "$WORK/locked.db" > "$WORK/out.txt" 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt"):$(wc -c < "$WORK/out.txt")" \
	"1:swaptrace: replay: '$WORK/locked.db': the database is locked: another process has been writing it for more than 5 s; try again when it is done: the runs cannot be stored in it (--no-store prints them only):0" \
	"a sweep on a database another process is writing"
release_db
# While a sweep replays, the database is free for others: the sweep
# writes it only at the end, in one short transaction (one transaction
# over the whole sweep once locked out other replays, "database is
# locked", and readers too once its writes spilled).  Here the sweep's
# second policy hangs, after its first run is done: a writer that does
# not wait finds no lock, info reads, and the sweep killed there leaves
# the database as it was.
before=$(sqlite3 "$db" 'SELECT count(*) FROM run')
"$SWAPTRACE" replay -p fixed -p "$bad/libswt-bad-hang.so" "$db" > /dev/null 2>&1 &
sweep=$!
child=$(plugin_child "$sweep" 300)
if [ -n "$child" ]; then
	sqlite3 -cmd ".timeout 0" "$db" "BEGIN IMMEDIATE; COMMIT" 2> "$WORK/err.txt" ||
		fail "a writer while a sweep replays: $(cat "$WORK/err.txt")"
	"$SWAPTRACE" info "$db" > /dev/null 2> "$WORK/err.txt" ||
		fail "info while a sweep replays: $(cat "$WORK/err.txt")"
else
	fail "the sweep's hanging plugin never started"
fi
kill_replay "$sweep" "$child"
check_eq "$(sqlite3 "$db" 'SELECT count(*) FROM run')" "$before" "a sweep killed midway stores nothing"
"$SWAPTRACE" replay -n -p leap:history=2,history=256 "$db" > /dev/null 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: policy 'leap': parameter 'history' given twice" \
	"a parameter given twice"
expect_fail "replay with 'bad' failed: on_miss returned -5 at swap fault 11 (" \
	replay -p "$bad/libswt-bad-error.so" -c 3 "$db"
check_eq "$(sqlite3 "$db" 'SELECT count(*) FROM run')" "$before" "a sweep whose plugin fails stores nothing"
expect_fail "cannot load" replay -p ./no/such/plugin.so "$db"
"$SWAPTRACE" replay -p ./no/such/plugin.so "$db" 2> "$WORK/err.txt"
check_eq "$?:$(cat "$WORK/err.txt")" "2:swaptrace: replay: policy plugin './no/such/plugin.so': cannot load: no such file" \
	"a plugin path to nothing is a usage error"
"$SWAPTRACE" replay -p nonesuch "$db" 2>/dev/null; check_eq $? 2 "unknown policy is a usage error"
"$SWAPTRACE" replay -c 40 "$db" 2>/dev/null; check_eq $? 2 "bad page-cluster is a usage error"
"$SWAPTRACE" replay -p leap:depth=3 "$db" 2>/dev/null; check_eq $? 2 "unknown parameter is a usage error"
expect_fail "No such file" replay "$WORK/missing.db"
# a writable database in a directory that is not (immutable here: root
# writes any directory whatever its mode): SQLite cannot make its journal,
# so nothing can be stored, said up front (the sweep ran, and its first
# insert failed: "unable to open database file"); --no-store works
mkdir "$WORK/rodir"
cp "$db" "$WORK/rodir/ro.db"
if chattr +i "$WORK/rodir" 2>/dev/null; then
	"$SWAPTRACE" replay -p fixed -c 3 "$WORK/rodir/ro.db" > "$WORK/out.txt" 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/out.txt" "$WORK/err.txt")" "1:swaptrace: replay: '$WORK/rodir/ro.db': its directory cannot be written, where SQLite keeps the database's journal: the runs cannot be stored in it (--no-store prints them only)" \
		"replay into a database in a read-only directory"
	"$SWAPTRACE" replay --no-store -p fixed -c 3 "$WORK/rodir/ro.db" > /dev/null 2> "$WORK/err.txt" ||
		fail "replay --no-store of a database in a read-only directory: '$(cat "$WORK/err.txt")'"
	chattr -i "$WORK/rodir"
else
	echo "note: the read-only directory case is skipped: chattr +i is not supported here"
fi
# A database in WAL mode: a command leaves beside it no -wal or -shm that
# was not there.  A read-only connection makes both at its first read and,
# not allowed to checkpoint, cannot remove them at its close: replay
# --no-store, info and report --no-replay or --run left two new files.
# Those a command found stay (here a writer's, gone without a checkpoint:
# its rows are in them), and so do those another process has open.
wal="$WORK/wal.db"
cp "$db" "$wal"
check_eq "$(sqlite3 "$wal" 'PRAGMA journal_mode=WAL')" wal "a database in WAL mode: set up"
wal_files() { (cd "$WORK" && ls -d wal.db-* 2>/dev/null | tr '\n' ' '); }
wal_cmd() { # what args... (the database last)
	local what=$1
	shift
	"$SWAPTRACE" "$@" "$wal" > /dev/null 2> "$WORK/err.txt" ||
		fail "$what of a database in WAL mode: $(cat "$WORK/err.txt")"
	check_eq "$(wal_files)" "" "$what of a database in WAL mode: files left beside it"
	rm -f "$wal-wal" "$wal-shm"
}
wal_cmd "replay --no-store" replay --no-store -p fixed -c 3
wal_cmd "replay" replay -p fixed -p none -c 3
wal_cmd "info" info
wal_cmd "info --json --latency" info --json --latency
wal_cmd "report --no-replay" report --no-replay -f svg -o "$WORK/wal-report"
wal_cmd "report --run" report --run "$(sqlite3 "$wal" 'SELECT max(id) FROM run')" -f svg \
	-o "$WORK/wal-report"
wal_cmd "report" report -f svg -o "$WORK/wal-report"
# named by a symbolic link, the database's -wal and -shm are made beside
# the file it points at, where SQLite looks for them (they stayed there)
mkdir -p "$WORK/wal-link"
ln -sf ../wal.db "$WORK/wal-link/wal.db"
for args in "replay --no-store -p fixed -c 3" "info"; do
	# shellcheck disable=SC2086
	"$SWAPTRACE" $args "$WORK/wal-link/wal.db" > /dev/null 2> "$WORK/err.txt" ||
		fail "$args of a database in WAL mode by a link: $(cat "$WORK/err.txt")"
	check_eq "$(wal_files)" "" "$args of a database in WAL mode by a link: files left beside it"
	rm -f "$wal-wal" "$wal-shm"
done
python3 - "$wal" <<'PY' || fail "a database in WAL mode: a writer gone without a checkpoint"
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE kept(x)")
c.execute("INSERT INTO kept VALUES (42)")
c.commit()
os._exit(0 if os.path.getsize(sys.argv[1] + "-wal") > 0 else 1)
PY
"$SWAPTRACE" replay --no-store -p fixed -c 3 "$wal" > /dev/null 2> "$WORK/err.txt" ||
	fail "replay --no-store of a database with a writer's -wal: $(cat "$WORK/err.txt")"
"$SWAPTRACE" info "$wal" > /dev/null 2> "$WORK/err.txt" ||
	fail "info of a database with a writer's -wal: $(cat "$WORK/err.txt")"
check_eq "$(wal_files)" "wal.db-shm wal.db-wal " "a writer's -wal and -shm: left as they were found"
check_eq "$(sqlite3 "$wal" 'SELECT x FROM kept')" 42 "a writer's -wal: its rows still read"
check_eq "$(wal_files)" "" "a writer's -wal: checkpointed by the next last close that can"
hold_db 'SELECT count(*) FROM run;' "$wal"
for _ in $(seq 1 50); do
	[ -e "$wal-shm" ] && break
	sleep 0.1
done
wal_open=$(wal_files)
"$SWAPTRACE" replay --no-store -p fixed -c 3 "$wal" > /dev/null 2> "$WORK/err.txt" ||
	fail "replay --no-store of a database another process has open: $(cat "$WORK/err.txt")"
"$SWAPTRACE" info "$wal" > /dev/null 2> "$WORK/err.txt" ||
	fail "info of a database another process has open: $(cat "$WORK/err.txt")"
check_eq "$wal_open:$(wal_files)" "wal.db-shm wal.db-wal :wal.db-shm wal.db-wal " \
	"the -wal and -shm of a database another process has open: left to it"
release_db
# a database edited by hand with a slot past what the slot tables index
# (the error path once read the tables it had just freed)
edited="$WORK/edited.db"
cp "$db" "$edited"
sqlite3 "$edited" "UPDATE swap_in SET slot = 4294967296 WHERE id = (SELECT min(id) FROM swap_in)"
expect_fail "swap_in row [0-9]*: slot 4294967296 is past the end of swap area 7:0 (262144 slots)" \
	replay -p auto "$edited"
# ... in an area of no recorded size, which the slot tables would index
cp "$edited" "$WORK/unsized.db"
sqlite3 "$WORK/unsized.db" "UPDATE swap_area SET slots = NULL"
expect_fail "swap area 7:0: slot 4294967296 is beyond what the replay handles" replay -p auto \
	"$WORK/unsized.db"
# swap-ins of an area the database no longer lists are left out, with a
# warning (they went without a word), and so are swap-outs; -5 ns is no
# time ingest writes
cp "$db" "$WORK/noarea.db"
sqlite3 "$WORK/noarea.db" "UPDATE swap_in SET area_id = 9 WHERE id % 10 = 0;
	UPDATE swap_out SET area_id = 9 WHERE id % 7 = 0"
"$SWAPTRACE" replay -n -p none "$WORK/noarea.db" > /dev/null 2> "$WORK/err.txt" || fail "replay with swap-ins of no area"
check_eq "$(cat "$WORK/err.txt")" "swaptrace: replay: warning: $(sqlite3 "$WORK/noarea.db" 'SELECT count(*) FROM swap_in WHERE area_id = 9') swap-ins and $(sqlite3 "$WORK/noarea.db" 'SELECT count(*) FROM swap_out WHERE area_id = 9') swap-outs name no swap area of the database (swap_area rows missing): left out" \
	"swap-ins and swap-outs of no area: the warning"
sqlite3 "$WORK/noarea.db" "UPDATE swap_in SET ts = -5 WHERE id = (SELECT min(id) FROM swap_in)"
expect_fail "'$WORK/noarea.db': a swap_in row at time -5 ns: not a database ingest wrote" replay -n "$WORK/noarea.db"
# no swap-ins: refused as report and info refuse it (a run of 0 faults was
# stored, and the report then printed an answer heading with nothing under it)
cp "$db" "$WORK/empty.db"
sqlite3 "$WORK/empty.db" "DELETE FROM swap_in"
runs_before=$(sqlite3 "$WORK/empty.db" 'SELECT count(*) FROM run')
expect_fail "'$WORK/empty.db': no swap-in faults: nothing to replay" replay -p fixed "$WORK/empty.db"
check_eq "$(sqlite3 "$WORK/empty.db" 'SELECT count(*) FROM run')" "$runs_before" "no swap-ins: nothing stored"
# one slot past the area (within what the tables index) once sized every
# slot table by it: 2^32 - 1 took tens of gigabytes
sqlite3 "$edited" "UPDATE swap_in SET slot = 4294967295 WHERE id = (SELECT min(id) FROM swap_in)"
expect_fail "'$edited': swap_in row $(sqlite3 "$edited" 'SELECT min(id) FROM swap_in'): slot 4294967295 is past the end of swap area 7:0 (262144 slots): not a database ingest wrote\$" \
	replay -p auto "$edited"
sqlite3 "$edited" "UPDATE swap_in SET slot = 5 WHERE id = (SELECT min(id) FROM swap_in);
	UPDATE swap_out SET slot = 262144 WHERE id = (SELECT min(id) FROM swap_out)"
expect_fail "swap_out row $(sqlite3 "$edited" 'SELECT min(id) FROM swap_out'): slot 262144 is past the end of swap area 7:0" \
	replay -p auto "$edited"
sqlite3 "$edited" "UPDATE swap_out SET slot = 5 WHERE id = (SELECT min(id) FROM swap_out)"
# a slot below 1 (slot 0 is the area's header), refused by the store's
# check before the streams are read, as info and report refuse it
first=$(sqlite3 "$edited" "SELECT min(id) FROM swap_in")
sqlite3 "$edited" "UPDATE swap_in SET slot = -5 WHERE id = $first"
expect_fail "'$edited': swap_in row $first: slot -5 is below the swap area: not a database ingest wrote\$" \
	replay -p auto "$edited"
sqlite3 "$edited" "UPDATE swap_in SET slot = 0 WHERE id = $first"
expect_fail "'$edited': swap_in row $first: slot 0 is the swap area's header, never a page: not a database ingest wrote\$" \
	replay -p auto "$edited"
# a slot a hand edit made text (or a fraction, or a blob), which SQLite
# keeps in an INTEGER column: read as 0 ('abc': "a swap-in at slot 0"), as
# the number it starts with ('7abc': replayed as slot 7), or its whole
# part; refused, naming the table and row, in the exact stream, the
# swap-outs and the reconstructed one, and where max() made it the top
textslot() { # table id value [replay options...]: the message for that row (after SQL $prepare)
	local table=$1 id=$2 value=$3
	shift 3
	cp "$db" "$WORK/textslot.db"
	sqlite3 "$WORK/textslot.db" "${prepare:-} UPDATE $table SET slot = $value WHERE id = $id" ||
		fail "text slot: preparing $table row $id"
	expect_fail "^swaptrace: replay: '$WORK/textslot.db': $table row $id: slot $(sed "s/[.]/[.]/g" <<<"$value") is not a whole number: not a database ingest wrote\$" \
		replay -n -p none "$@" "$WORK/textslot.db"
}
first_in=$(sqlite3 "$db" 'SELECT min(id) FROM swap_in')
textslot swap_in "$first_in" "'abc'"
textslot swap_in $((first_in + 100)) "'7abc'"
textslot swap_in $((first_in + 100)) "1.5"
textslot swap_in $((first_in + 100)) "X'07'"
textslot swap_out "$(sqlite3 "$db" 'SELECT max(id) FROM swap_out')" "'x'"
# ... in a row of an area swap_area does not list, which replay leaves out
# (it replayed the rest, where info and report refused it), and in a
# swap-entry probe of a capture whose stream is exact without them (it
# read no probe, where info and report did not look at probes)
prepare="UPDATE swap_in SET area_id = 9 WHERE id = $((first_in + 100));" \
	textslot swap_in $((first_in + 100)) "'7abc'"
prepare="UPDATE swap_out SET area_id = 9 WHERE id = (SELECT max(id) FROM swap_out);" \
	textslot swap_out "$(sqlite3 "$db" 'SELECT max(id) FROM swap_out')" "'x'"
prepare="INSERT INTO swap_probe (id, ts, pid, kind, area_id, slot, address)
	SELECT id, ts, pid, 'read', area_id, slot, address FROM swap_in ORDER BY id LIMIT 3;" \
	textslot swap_probe $((first_in + 1)) "'7abc'"
# tables as long as the highest slot: a few pages at the far end of a huge
# area would take more memory than there is (one such row was OOM-killed at
# 24 GB), and so would simulated devices of petabytes: refused up front
cp "$db" "$WORK/far.db"
sqlite3 "$WORK/far.db" "UPDATE swap_area SET slots = 4294967295;
	UPDATE swap_out SET slot = 4294967290 WHERE id = (SELECT max(id) FROM swap_out)"
SWT_TEST_MEM_AVAILABLE_KIB=8388608 expect_fail \
	"'$WORK/far.db': swap area 7:0: its highest slot used, 4294967290, makes the replay's slot tables 64.0 GiB, more than the 8.0 GiB of memory available" \
	replay -n "$WORK/far.db"
SWT_TEST_MEM_AVAILABLE_KIB=8388608 expect_fail \
	"layout 'devices=256T': devices this big take 10.0 GiB to simulate, more than the 8.0 GiB" \
	replay -n -l devices=256T "$db"
# and so would a small trace placed past a billion pages already there
# (used= was not counted: the pages above them took 16 bytes a slot, and
# the used ones were taken one by one for minutes first)
SWT_TEST_MEM_AVAILABLE_KIB=8388608 expect_fail \
	"layout '1:size=4T:used=1000000000': devices this big take 15.1 GiB to simulate, more than the 8.0 GiB" \
	replay -n -l 1:size=4T:used=1000000000 "$db"
# Two devices the size of a traced one of 2^32 - 1 slots: the kernel
# fills a device's partial last cluster first, so the re-placed pages
# reach slot 2^31 - 2 and the tables would be 64 GiB (once OOM-killed
# at 24 GB; only the traced input's slots were checked)
cp "$db" "$WORK/huge.db"
sqlite3 "$WORK/huge.db" "UPDATE swap_area SET slots = 4294967295"
SWT_TEST_MEM_AVAILABLE_KIB=8388608 expect_fail \
	"layout '2': swap area sim0: its highest slot used, 2147483646, makes the replay's slot tables 64.0 GiB, more than the 8.0 GiB of memory available (they are as long as the highest slot); give it smaller devices (devices=SIZE,...)" \
	replay -n -l 2 "$WORK/huge.db"
# In a memory cgroup, its limit is the memory there is: an oracle replay
# whose slot tables (640 MB) fit the host but not the cgroup's 512 MB is
# refused, not OOM-killed (the check read only /proc/meminfo once).
cg=""
if [ "$(id -u)" = 0 ] && [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
	cg=/sys/fs/cgroup/memory/swt-replay-$$ cg_limit=memory.limit_in_bytes
elif [ "$(id -u)" = 0 ] && grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	cg=/sys/fs/cgroup/swt-replay-$$ cg_limit=memory.max
fi
if [ -n "$cg" ] && mkdir "$cg" 2>/dev/null; then
	cp "$db" "$WORK/cg.db"
	sqlite3 "$WORK/cg.db" "UPDATE swap_area SET slots = 4294967295;
		UPDATE swap_out SET slot = 40000000 WHERE id = (SELECT max(id) FROM swap_out)"
	echo $((512 << 20)) > "$cg/$cg_limit"
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
		"$SWAPTRACE" replay -n -p oracle -c 3 "$WORK/cg.db" > /dev/null 2> "$WORK/err.txt"
	status=$?
	rmdir "$cg" 2>/dev/null || echo "warning: cannot remove cgroup $cg" >&2
	[ $status = 1 ] || fail "replay in a 512 MB cgroup: exit $status, not 1 (killed?)"
	grep -q "swap area 7:0: its highest slot used, 40000000, makes the replay's slot tables 0.6 GiB, more than the 0\.[0-9] GiB of memory available" \
		"$WORK/err.txt" || fail "replay in a 512 MB cgroup: '$(cat "$WORK/err.txt")'"
else
	echo "note: the memory-cgroup case is skipped: not root, or no memory cgroup to create"
fi
# the same on the host: refused by the memory there is, not killed
expect_fail "layout '2': swap area sim0: its highest slot used, 2147483646, makes the replay's slot tables 64.0 GiB, more than the" \
	replay -n -l 2 "$WORK/huge.db"
cp "$db" "$WORK/cpus.db"
sqlite3 "$WORK/cpus.db" "UPDATE capture SET ncpus = 100000"
expect_fail "'$WORK/cpus.db': capture.ncpus is 100000 (0 to 65536): not a database ingest wrote" \
	replay -n -l 2 "$WORK/cpus.db"
# values cut or guessed: a page size of 0, 3000 or text was 4 KiB, 2^40 was
# 1 MiB; a flag of 2^32 read through an int was 0 (rotational 2^32 made auto
# take VMA readahead on the disk)
for damage in "capture SET page_size = 0:its capture row's page_size is not a database ingest wrote" \
	"capture SET page_size = 3000:its capture row's page_size is not a database ingest wrote" \
	"capture SET page_size = 'x':its capture row's page_size is not a database ingest wrote" \
	"capture SET page_size = 1 << 40:its capture row's page_size is not a database ingest wrote" \
	"capture SET page_size = 1 << 22:pages of 4096 KiB: replay models pages of 1 MiB at most" \
	"capture SET vma_ra_enabled = 1 << 32:its capture row's vma_ra_enabled is not a database ingest wrote" \
	"swap_area SET rotational = 1 << 32:swap area 7:0: rotational or synchronous is not 0 or 1: not a database ingest wrote" \
	"swap_area SET synchronous = 7:swap area 7:0: rotational or synchronous is not 0 or 1: not a database ingest wrote"; do
	cp "$db" "$WORK/flags.db"
	sqlite3 "$WORK/flags.db" "UPDATE ${damage%%:*}" || fail "damaging: ${damage%%:*}"
	expect_fail "^swaptrace: replay: '$WORK/flags.db': ${damage#*:}\$" replay -n -p auto "$WORK/flags.db"
done
# a page-cluster 0 capture whose swap-ins are not all demand reads: it was
# told to "replay a page-cluster 0 capture, or pass --approximate"
cp "$db" "$WORK/demand.db"
sqlite3 "$WORK/demand.db" "UPDATE capture SET page_cluster = 0; UPDATE swap_in SET demand = 2 WHERE id = (SELECT min(id) FROM swap_in)"
expect_fail "^swaptrace: replay: '$WORK/demand.db': captured with page-cluster 0, yet some of its swap-ins are not marked demand reads (swap_in.demand): not a database ingest wrote\$" \
	replay -n "$WORK/demand.db"
# slots near 2^62 on an area of unknown size, which is then as big as its
# slots: loading once sized a table by them (the size wrapped past 2^64
# bytes, and the write beyond it crashed) before the engine's check ran
sqlite3 "$edited" "UPDATE swap_area SET slots = NULL;
	UPDATE swap_in SET slot = 4611686018427387904 WHERE id = (SELECT min(id) FROM swap_in);
	UPDATE swap_out SET slot = 4611686018427387905 WHERE id = (SELECT min(id) FROM swap_out)"
expect_fail "'$edited': swap area 7:0: slot 4611686018427387905 is beyond what the replay handles (2^32)" \
	replay -p auto "$edited"
# a damaged time: the per-second series are sized by the faults replayed,
# not by the capture's span, which every event sets (2^60 ns once asked for
# 37 GB, a bare "out of memory"); their seconds still count from
# capture.first_ns.
span="$WORK/span.db"
cp "$db" "$span"
sqlite3 "$span" "UPDATE capture SET last_ns = 1152921504606846976"
"$SWAPTRACE" replay -p auto -c 3 "$span" > /dev/null 2> "$WORK/err.txt" ||
	fail "replay with a damaged capture.last_ns: $(cat "$WORK/err.txt")"
check_eq "$(sqlite3 "$span" "SELECT group_concat(second || ':' || n, ' ') FROM (SELECT second, sum(faults) AS n
	FROM run_series WHERE run_id = (SELECT max(id) FROM run WHERE policy = 'auto' AND page_cluster = 3)
	GROUP BY second ORDER BY second)")" \
	"$(sqlite3 "$span" "SELECT group_concat(s || ':' || n, ' ') FROM (SELECT (ts - (SELECT first_ns FROM capture))
	/ 1000000000 AS s, count(*) AS n FROM swap_in WHERE demand = 1 GROUP BY s ORDER BY s)")" \
	"faults per second of the series, from capture.first_ns"
# A fault 1.6 days after the others (refused once, when the series held
# every second of the span): replayed, in a point of its own.
sqlite3 "$span" "UPDATE swap_in SET ts = ts + 140737488355328 WHERE id = (SELECT max(id) FROM swap_in)"
"$SWAPTRACE" replay -p auto -c 3 "$span" > /dev/null 2> "$WORK/err.txt" ||
	fail "faults 1.6 days apart: $(cat "$WORK/err.txt")"
check_eq "$(sqlite3 "$span" "SELECT second || ':' || faults FROM run_series WHERE run_id = (SELECT max(id) FROM run
	WHERE policy = 'auto' AND page_cluster = 3) AND partition >= 0 ORDER BY second DESC LIMIT 1")" \
	"$(sqlite3 "$span" "SELECT ((max(ts) - (SELECT first_ns FROM capture)) / 1000000000) || ':1' FROM swap_in")" \
	"the late fault's second"
# beyond the 2^32 seconds the engine counts: a damaged timestamp
sqlite3 "$span" "UPDATE swap_in SET ts = 4611686018427387904 WHERE id = (SELECT max(id) FROM swap_in)"
expect_fail "'$span': the swap faults span 146 years (" replay -p auto -c 3 "$span"

# --- a long capture: a sweep holds one run's series at a time ---------------------------
# The sample stretched 10 000 times (30 hours, nearly every fault in a
# second of its own).  A run's series are then as long as its faults;
# a sweep of 18 runs once kept all of them (and the span alone, over a
# day, was refused).  Peak memory against one run's, with ASan's
# quarantine off so that what the sweep frees counts as freed.
long="$WORK/long.db"
cp "$db" "$long"
sqlite3 "$long" "DELETE FROM run_partition; DELETE FROM run_histogram; DELETE FROM run_series; DELETE FROM run;
	UPDATE swap_in SET ts = (SELECT first_ns FROM capture) + (ts - (SELECT first_ns FROM capture)) * 10000;
	UPDATE swap_out SET ts = (SELECT first_ns FROM capture) + (ts - (SELECT first_ns FROM capture)) * 10000;
	UPDATE fault SET ts = (SELECT first_ns FROM capture) + (ts - (SELECT first_ns FROM capture)) * 10000
		WHERE ts >= (SELECT first_ns FROM capture);
	UPDATE capture SET last_ns = first_ns + (last_ns - first_ns) * 10000" || fail "stretching the sample"
peak_kib() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
		/usr/bin/time -f "%M" -o "$WORK/peak.txt" "$SWAPTRACE" "$@" > /dev/null 2> "$WORK/err.txt" ||
		fail "replay $*: $(cat "$WORK/err.txt")"
	cat "$WORK/peak.txt"
}
one=$(peak_kib replay -p fixed -c 3 "$long")
sweep=$(peak_kib replay -p none -p fixed -p adaptive -p vma -p auto -p oracle -c 0,3,8 "$long")
# (fixed at 3 replayed twice, stored once)
check_eq "$(sqlite3 "$long" "SELECT count(*) FROM run")" 18 "runs of the long capture stored"
check_eq "$(sqlite3 "$long" "SELECT count(DISTINCT run_id) || ' ' || min(n) || ' ' || max(n) FROM
	(SELECT run_id, count(*) AS n, sum(faults) AS f FROM run_series WHERE partition >= 0 GROUP BY run_id)")" \
	"18 $(sqlite3 "$long" "SELECT n || ' ' || n FROM (SELECT count(DISTINCT (ts - (SELECT first_ns
	FROM capture)) / 1000000000) AS n FROM swap_in WHERE demand = 1)")" \
	"every run's series: a point per second with faults"
[ -n "$one" ] && [ -n "$sweep" ] && [ "$sweep" -lt $((one + 25 * 1024)) ] ||
	fail "a sweep of 18 runs peaks at $sweep KiB, one run at $one KiB: the runs' series are kept"

# --- the table's columns line up whatever the policy's spelling ---------------------------
# (a parameter list or plugin path once pushed every later column out of line)
"$SWAPTRACE" replay -n -p fixed -p leap:history=64,min_window=8 -p "$SWT_BUILD_DIR/samples/libswt-policy-forward.so" \
	"$db" > "$WORK/wide.txt" 2>&1 || fail "replay with long policy names: $(cat "$WORK/wide.txt")"
check_eq "$(grep -v '^#' "$WORK/wide.txt" | awk '{ print length($0) }' | sort -u | wc -l)" 1 \
	"header and rows of the table are one width with long policy names"

# --- a device whose kind is not recorded counts as rotational ---------------------------
# The sample's trace.dat with --swap 7:0 and no rotational=, and metadata
# without its dev line (which says rotational=1, and a --swap area keeps
# it): auto takes cluster readahead (its adaptive result), as the layouts
# take such a device, says why, and names the way to say "SSD" (auto once
# took VMA readahead here, silently, for a NULL swap_area.rotational).
grep -v '^dev ' "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/meta.txt" > "$WORK/nodev-meta.txt"
"$SWAPTRACE" ingest -q -o "$WORK/kind.db" --meta "$WORK/nodev-meta.txt" --swap 7:0 \
	"$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/trace.dat" || fail "ingest with --swap 7:0"
"$SWAPTRACE" replay -n --csv -p auto -p adaptive "$WORK/kind.db" > "$WORK/kind.csv" 2> "$WORK/kind.err" ||
	fail "replay of a device of unknown kind: $(cat "$WORK/kind.err")"
check_eq "$(awk -F, '$5 == "all" { print $1 "=" $8 }' "$WORK/kind.csv" | sort | tr '\n' ' ')" \
	"adaptive=20163 auto=20163 " "auto on a device of unknown kind: cluster readahead"
check_eq "$(cat "$WORK/kind.err")" "swaptrace: replay: warning: swap area 7:0: not recorded whether it is rotational (ingested without metadata): taken as rotational, as loop and virtio disks are, so auto uses cluster readahead; for an SSD ingest with --swap 7:0,rotational=0" \
	"the warning for a device of unknown kind"
"$SWAPTRACE" ingest -q -o "$WORK/ssd.db" --swap 7:0,rotational=0 "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/trace.dat" ||
	fail "ingest with --swap 7:0,rotational=0"
"$SWAPTRACE" replay -n --csv -p auto -p vma "$WORK/ssd.db" > "$WORK/ssd.csv" 2> "$WORK/ssd.err" ||
	fail "replay of an SSD: $(cat "$WORK/ssd.err")"
check_eq "$(awk -F, '$5 == "all" { print $1 "=" $8 }' "$WORK/ssd.csv" | sort | tr '\n' ' ')$(cat "$WORK/ssd.err")" \
	"auto=21805 vma=21805 " "auto on a device said to be an SSD: VMA readahead, no warning"
# the same with metadata that does not say vma_ra_enabled: taken as false
# (cluster readahead, adaptive's result), said, with the kernel's default
grep -v '^vma_ra_enabled ' "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/meta.txt" > "$WORK/novra-meta.txt"
"$SWAPTRACE" ingest -q -o "$WORK/novra.db" --meta "$WORK/novra-meta.txt" --swap 7:0,rotational=0 \
	"$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/trace.dat" || fail "ingest without vma_ra_enabled"
"$SWAPTRACE" replay -n --csv -p auto -p adaptive "$WORK/novra.db" > "$WORK/novra.csv" 2> "$WORK/novra.err" ||
	fail "replay without vma_ra_enabled: $(cat "$WORK/novra.err")"
check_eq "$(awk -F, '$5 == "all" { print $1 "=" $8 }' "$WORK/novra.csv" | sort | tr '\n' ' ')" \
	"adaptive=20163 auto=20163 " "auto without vma_ra_enabled: cluster readahead"
check_eq "$(cat "$WORK/novra.err")" "swaptrace: replay: warning: vma_ra_enabled not recorded: taken as false, so auto uses cluster readahead where a kernel left at its default (true) uses VMA readahead on these non-rotational devices; ingest with --meta FILE holding 'vma_ra_enabled true' to replay that" \
	"the warning without vma_ra_enabled"
"$SWAPTRACE" replay -n --csv -p adaptive "$WORK/novra.db" 2> "$WORK/novra-adaptive.err" > /dev/null
check_eq "$(cat "$WORK/novra-adaptive.err")" "" "no vma_ra_enabled warning without auto"

# --- a kernel that ran the multi-gen LRU ---------------------------------------------
# meta.txt's lru_gen (capture records /sys/kernel/mm/lru_gen/enabled) reaches
# replay through ingest: on (bit 0 set), replay warns that it models the
# two-list LRU; off, or a kernel without it, no warning; same results.
for lru in 0x0007 0x0006 absent; do
	# a host fact: in the file's header, before its sections
	sed "1a lru_gen $lru" "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/meta.txt" > "$WORK/lru-meta.txt"
	"$SWAPTRACE" ingest -q -o "$WORK/lru-$lru.db" --meta "$WORK/lru-meta.txt" \
		"$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/trace.dat" || fail "ingest with lru_gen $lru"
	"$SWAPTRACE" replay -n --csv -p auto "$WORK/lru-$lru.db" > "$WORK/lru-$lru.csv" 2> "$WORK/lru-$lru.err" ||
		fail "replay with lru_gen $lru: $(cat "$WORK/lru-$lru.err")"
done
check_eq "$(cat "$WORK/lru-0x0007.err")" "swaptrace: replay: warning: '$WORK/lru-0x0007.db': the traced kernel ran the multi-gen LRU (lru_gen 0x0007); the replay models the two-list active/inactive LRU, so its readahead accuracy and waste are less certain (docs/replay-model.md)" \
	"the warning for a kernel that ran the multi-gen LRU"
check_eq "$(cat "$WORK/lru-0x0006.err" "$WORK/lru-absent.err")" "" "no warning where the multi-gen LRU was off or absent"
cmp -s "$WORK/lru-0x0007.csv" "$WORK/lru-absent.csv" || fail "the multi-gen LRU changed replay's results"

# --- swap-ins the block trace cannot show ------------------------------------------
# zero-filled pages (swpin_zero) and zswap (zswpin) come back without block
# I/O: replay says its demand stream lacks them (the counters are the
# capture's /proc/vmstat deltas; capture tests them live)
cp "$WORK/lru-absent.db" "$WORK/unseen.db"
sqlite3 "$WORK/unseen.db" "INSERT INTO vmstat (name, delta) VALUES ('swpin_zero', 0), ('zswpin', 77)"
"$SWAPTRACE" replay -n --csv -p auto "$WORK/unseen.db" > /dev/null 2> "$WORK/unseen.err" || fail "replay: unseen swap-ins"
check_eq "$(cat "$WORK/unseen.err")" "swaptrace: replay: warning: '$WORK/unseen.db': 77 swap-ins on the traced host took no block I/O (/proc/vmstat, machine-wide: zswpin 77 from zswap): the block trace shows neither them nor their swap-outs, so the replay's demand stream and slot occupancy lack those of the workload" \
	"the warning for swap-ins without block I/O"
# one of each, and no swap-in the trace shows: the warning comes first,
# since it may be why there is nothing to replay
cp "$WORK/lru-absent.db" "$WORK/unseen1.db"
sqlite3 "$WORK/unseen1.db" "DELETE FROM swap_in; DELETE FROM request WHERE write = 0;
	INSERT INTO vmstat (name, delta) VALUES ('swpin_zero', 1), ('zswpin', 0)"
"$SWAPTRACE" replay -n -p auto "$WORK/unseen1.db" > /dev/null 2> "$WORK/unseen1.err"
check_eq "$?:$(cat "$WORK/unseen1.err")" "1:swaptrace: replay: warning: '$WORK/unseen1.db': 1 swap-in on the traced host took no block I/O (/proc/vmstat, machine-wide: swpin_zero 1 zero-filled page): the block trace shows neither them nor their swap-outs, so the replay's demand stream and slot occupancy lack those of the workload
swaptrace: replay: '$WORK/unseen1.db': no swap-in faults: nothing to replay" \
	"a capture whose one swap-in took no block I/O"
# a hand-edited count past any counter's is not said
sqlite3 "$WORK/unseen1.db" "UPDATE vmstat SET delta = 9223372036854775807 WHERE name = 'swpin_zero';
	UPDATE vmstat SET delta = 5 WHERE name = 'zswpin'"
"$SWAPTRACE" replay -n -p auto "$WORK/unseen1.db" > /dev/null 2> "$WORK/unseen1.err"
check_eq "$?:$(head -1 "$WORK/unseen1.err")" "1:swaptrace: replay: warning: '$WORK/unseen1.db': 5 swap-ins on the traced host took no block I/O (/proc/vmstat, machine-wide: zswpin 5 from zswap): the block trace shows neither them nor their swap-outs, so the replay's demand stream and slot occupancy lack those of the workload" \
	"a swpin_zero count past 2^62"

# --- swap-entry probes make any capture's demand stream exact ---------------------------
# The sample's demand reads restated as swt_fault probes, with demand
# unknown as at page-cluster 3: replayed without --approximate, and with
# the same results as the exact stream.
probed="$WORK/probed.db"
cp "$db" "$probed"
sqlite3 "$probed" "INSERT INTO swap_probe (ts, cpu, pid, kind, area_id, slot, address)
	SELECT ts, NULL, pid, 'fault', area_id, slot, address FROM swap_in WHERE demand = 1 ORDER BY ts, id;
	UPDATE swap_in SET demand = NULL;" || fail "preparing a probed capture"
"$SWAPTRACE" replay --no-store --json -p auto -p fixed -p vma -c 0,3 "$db" > "$WORK/exact.json" || fail "exact replay"
"$SWAPTRACE" replay --no-store --json -p auto -p fixed -p vma -c 0,3 "$probed" > "$WORK/probed.json" 2> "$WORK/probed.err" ||
	fail "a probed capture replays without --approximate: $(cat "$WORK/probed.err")"
cmp -s "$WORK/exact.json" "$WORK/probed.json" || fail "the probes' stream differs from the exact one"
[ -s "$WORK/probed.err" ] && fail "a probed capture is not approximate: $(cat "$WORK/probed.err")"
# a probe without a slot names no entry: left out of the stream, and no
# slot that is no whole number to info, report and replay
cp "$probed" "$WORK/probed-null.db"
sqlite3 "$WORK/probed-null.db" "INSERT INTO swap_probe (ts, pid, kind, area_id, slot)
	SELECT max(ts), NULL, 'fault', 0, NULL FROM swap_in" || fail "preparing a probe without a slot"
"$SWAPTRACE" replay --no-store --json -p auto -p fixed -p vma -c 0,3 "$WORK/probed-null.db" \
	> "$WORK/probed-null.json" 2> "$WORK/probed-null.err" ||
	fail "a probe without a slot: $(cat "$WORK/probed-null.err")"
cmp -s "$WORK/exact.json" "$WORK/probed-null.json" || fail "a probe without a slot changed the stream"
"$SWAPTRACE" info "$WORK/probed-null.db" > /dev/null 2> "$WORK/probed-null.err" ||
	fail "info on a probe without a slot: $(cat "$WORK/probed-null.err")"
# ... and one whose slot a hand edit made text, in the stream it makes
probe_id=$(sqlite3 "$probed" "SELECT min(id) + 10 FROM swap_probe")
cp "$probed" "$WORK/textslot-probed.db"
sqlite3 "$WORK/textslot-probed.db" "UPDATE swap_probe SET slot = '7abc' WHERE id = $probe_id" ||
	fail "text slot: preparing a probed capture"
expect_fail "^swaptrace: replay: '$WORK/textslot-probed.db': swap_probe row $probe_id: slot '7abc' is not a whole number: not a database ingest wrote\$" \
	replay -n -p none "$WORK/textslot-probed.db"

# --- rows stored out of time order -------------------------------------------------
# ingest writes the streams and the fault events in time order, and replay
# reads them in id order, with no sort: a database whose ids run against
# time (here reversed) is read again in time order, and replays the same
cp "$db" "$WORK/reversed.db"
sqlite3 "$WORK/reversed.db" "UPDATE swap_in SET id = 1000000000 - id;
	UPDATE swap_out SET id = 1000000000 - id;
	UPDATE fault SET id = 1000000000 - id;
	UPDATE swap_in SET fault_id = 1000000000 - fault_id WHERE fault_id IS NOT NULL;" ||
	fail "preparing a capture stored out of time order"
[ "$(sqlite3 "$WORK/reversed.db" "SELECT count(*) FROM swap_in a JOIN swap_in b ON b.id = a.id + 1
	WHERE b.ts < a.ts")" -gt 1000 ] || fail "the reversed capture's ids do not run against time"
"$SWAPTRACE" replay --no-store --json -p auto -p fixed -p vma -c 0,3 "$WORK/reversed.db" \
	> "$WORK/reversed.json" || fail "replay of a capture stored out of time order"
cmp -s "$WORK/exact.json" "$WORK/reversed.json" || fail "a capture stored out of time order replays otherwise"

# --- swapoff's reads are no faults ----------------------------------------------------
# swapoff reads every page back (pswpin counts them): added to the sample
# after its last read, one per slot, by a task named swapoff, they change
# no run and are said to be left out.
SWAPOFF_READS="INSERT INTO task (pid, comm) VALUES (999999, 'swapoff');
	INSERT INTO swap_in (ts, area_id, slot, dev, pid, bio_id, demand)
	SELECT (SELECT max(ts) FROM swap_in) + 1000 * slot, area_id, slot, dev, 999999, min(bio_id), max(demand)
	  FROM swap_in GROUP BY area_id, slot;"
cp "$db" "$WORK/swapoff.db"
sqlite3 "$WORK/swapoff.db" "$SWAPOFF_READS" || fail "preparing a capture with swapoff reads"
"$SWAPTRACE" replay --no-store --json -p auto -p fixed -p vma -c 0,3 "$WORK/swapoff.db" > "$WORK/swapoff.json" \
	2> "$WORK/swapoff.err" || fail "replay with swapoff reads: $(cat "$WORK/swapoff.err")"
cmp -s "$WORK/exact.json" "$WORK/swapoff.json" || fail "swapoff's reads were replayed as faults"
# with swap-entry probes, swapoff's calls of swapin_readahead are probed too
cp "$probed" "$WORK/probed-swapoff.db"
sqlite3 "$WORK/probed-swapoff.db" "$SWAPOFF_READS
	INSERT INTO swap_probe (ts, cpu, pid, kind, area_id, slot, address)
	SELECT ts, NULL, pid, 'fault', area_id, slot, NULL FROM swap_in WHERE pid = 999999;
	UPDATE swap_in SET demand = NULL;" || fail "preparing a probed capture with swapoff reads"
"$SWAPTRACE" replay --no-store --json -p auto -p fixed -p vma -c 0,3 "$WORK/probed-swapoff.db" \
	> "$WORK/probed-swapoff.json" 2> /dev/null || fail "replay of probes with swapoff reads"
cmp -s "$WORK/exact.json" "$WORK/probed-swapoff.json" || fail "swapoff's probes were replayed as faults"
check_eq "$(cat "$WORK/swapoff.err")" \
	"swaptrace: replay: warning: $(sqlite3 "$db" "SELECT count(DISTINCT area_id || ':' || slot) FROM swap_in") swap-ins were read by swapoff, not faulted: left out" \
	"swapoff's reads are said to be left out"
check_eq "$("$SWAPTRACE" info "$WORK/swapoff.db" | tail -1)" \
	"  $(sqlite3 "$db" "SELECT count(DISTINCT area_id || ':' || slot) FROM swap_in") swap-in pages were read by swapoff, not faulted: replay leaves them out." \
	"info says swapoff's reads are left out"
sqlite3 "$WORK/swapoff.db" "DELETE FROM swap_in WHERE pid IS NOT 999999"
check_eq "$("$SWAPTRACE" info "$WORK/swapoff.db" | tail -1)" \
	"Replay: every swap-in was read by swapoff, none faulted: nothing to replay." \
	"info on swapoff's reads alone"
"$SWAPTRACE" replay -n "$WORK/swapoff.db" > /dev/null 2> "$WORK/swapoff.err"
check_eq "$?:$(tail -1 "$WORK/swapoff.err")" \
	"1:swaptrace: replay: '$WORK/swapoff.db': no swap-in faults: nothing to replay" \
	"replay of swapoff's reads alone"

# --- a readahead-mixed capture needs --approximate -----------------------------------
find_captures
pc3="$WORK/pc3.db"
"$SWAPTRACE" ingest -q -o "$pc3" "$CAPTURES/rnd-1dev-pc3" || fail "ingest pc3"
expect_fail "pass --approximate" replay "$pc3"
# an option to give, as --cache-pages is: a usage error (it exited 1)
"$SWAPTRACE" replay -n "$pc3" > /dev/null 2>&1
check_eq "$?" 2 "a readahead-mixed capture without --approximate: exit status"
# a slot a hand edit made text, in the stream reconstructed from the reads
# (as textslot above)
cp "$pc3" "$WORK/textslot-pc3.db"
sqlite3 "$WORK/textslot-pc3.db" "UPDATE swap_in SET slot = '12' || 'x' WHERE id = 1000" || fail "text slot: preparing pc3"
expect_fail "^swaptrace: replay: '$WORK/textslot-pc3.db': swap_in row 1000: slot '12x' is not a whole number: not a database ingest wrote\$" \
	replay -n --approximate -p none -c 3 "$WORK/textslot-pc3.db"

# --- a swap device the metadata leaves out --------------------------------------------
# rnd-4dev-pc0 with meta.txt's loop3 lines dropped: its swap-ins are not
# swap, and ingest says so (they went without a word: 56 142 of 74 866)
mkdir -p "$WORK/no-loop3" && cp "$CAPTURES/rnd-4dev-pc0/trace.dat" "$WORK/no-loop3/" &&
	grep -v loop3 "$CAPTURES/rnd-4dev-pc0/meta.txt" > "$WORK/no-loop3/meta.txt" ||
	fail "making a capture without loop3's metadata"
"$SWAPTRACE" ingest -q -o "$WORK/no-loop3.db" "$WORK/no-loop3" 2> "$WORK/no-loop3.err" ||
	fail "ingest without loop3's metadata: $(cat "$WORK/no-loop3.err")"
check_eq "$(cat "$WORK/no-loop3.err")" \
	"swaptrace: ingest: warning: the block I/O on 7:3, where no swap area is stated, is not counted as swap (a swap device the metadata leaves out?)" \
	"a swap device the metadata leaves out: the warning"
"$SWAPTRACE" replay --no-store --approximate --json -p auto -c 3 "$pc3" > "$WORK/approx.json" 2> "$WORK/warn.txt" ||
	fail "approximate replay"
grep -q "approximate demand stream: .* faults reconstructed from its reads and faults" "$WORK/warn.txt" ||
	fail "the reconstruction is announced"
# the capture cut where one fault that did no I/O found a page read ahead:
# "1 readahead hit" (it said "1 readahead hits").  That fault is found as
# replay/reconstruct.c finds one (load_hits, replay_hit): a fault that
# queued no read, on a page its process faulted before, within 512 pages of
# one of its read faults, while a page another fault read ahead waits (its
# slot neither written nor read again since; which of that fault's pages it
# wanted is not told apart); in temporary tables, indexed: as one query it
# took minutes.  1093554004297 on rnd-1dev-pc3; without the waiting page
# the first such fault comes before any readahead
FIRST_RA_HIT="CREATE TEMP TABLE rd AS
	SELECT s.ts, s.area_id, s.slot, s.fault_id, coalesce(t.tgid, s.pid) AS p,
	       s.address / (SELECT page_size FROM capture) AS vpage
	FROM swap_in s LEFT JOIN task t ON t.pid = s.pid WHERE t.comm IS NOT 'swapoff';
CREATE INDEX temp.rd_addr ON rd (p, vpage);
CREATE INDEX temp.rd_slot ON rd (area_id, slot, ts);
CREATE INDEX temp.rd_fault ON rd (fault_id);
CREATE TEMP TABLE wr AS SELECT area_id, slot, ts FROM swap_out;
CREATE INDEX temp.wr_slot ON wr (area_id, slot, ts);
CREATE TEMP TABLE ahead AS
	SELECT r.* FROM rd r WHERE (SELECT count(*) FROM rd o WHERE o.fault_id = r.fault_id) > 1;
CREATE TEMP TABLE refault AS
	SELECT * FROM (SELECT f.id, f.ts, coalesce(t.tgid, f.pid) AS p,
			      f.address / (SELECT page_size FROM capture) AS vpage,
			      row_number() OVER (PARTITION BY coalesce(t.tgid, f.pid),
					f.address / (SELECT page_size FROM capture) ORDER BY f.ts, f.id) AS nth
		       FROM fault f LEFT JOIN task t ON t.pid = f.pid)
	WHERE nth > 1 AND vpage != 0 AND id NOT IN (SELECT fault_id FROM rd WHERE fault_id IS NOT NULL);
SELECT f.ts FROM refault f
WHERE EXISTS (SELECT 1 FROM rd r WHERE r.p = f.p AND r.vpage BETWEEN f.vpage - 512 AND f.vpage + 512)
  AND EXISTS (SELECT 1 FROM ahead r WHERE r.ts < f.ts
	AND NOT EXISTS (SELECT 1 FROM wr o WHERE o.area_id = r.area_id AND o.slot = r.slot
			AND o.ts > r.ts AND o.ts <= f.ts)
	AND NOT EXISTS (SELECT 1 FROM rd o WHERE o.area_id = r.area_id AND o.slot = r.slot
			AND o.ts > r.ts AND o.ts < f.ts))
ORDER BY f.ts, f.id LIMIT 1"
first_hit=$(sqlite3 "$pc3" "$FIRST_RA_HIT") && [ -n "$first_hit" ] ||
	fail "pc3's first readahead hit not found: '$first_hit'"
cp "$pc3" "$WORK/pc3-onehit.db"
sqlite3 "$WORK/pc3-onehit.db" "DELETE FROM fault WHERE ts > $first_hit;
	DELETE FROM swap_in WHERE ts > $first_hit" || fail "cutting pc3 at its first readahead hit"
"$SWAPTRACE" replay --no-store --approximate -p auto -c 3 "$WORK/pc3-onehit.db" > /dev/null \
	2> "$WORK/warn-onehit.txt" || fail "approximate replay of one readahead hit: $(cat "$WORK/warn-onehit.txt")"
grep -q "faults reconstructed from its reads and faults ([0-9]* that read, 1 readahead hit; " \
	"$WORK/warn-onehit.txt" || fail "one readahead hit: $(cat "$WORK/warn-onehit.txt")"
cp "$pc3" "$WORK/pc3-swapoff.db"
sqlite3 "$WORK/pc3-swapoff.db" "$SWAPOFF_READS" || fail "preparing a pc3 capture with swapoff reads"
"$SWAPTRACE" replay --no-store --approximate --json -p auto -c 3 "$WORK/pc3-swapoff.db" > "$WORK/approx-swapoff.json" \
	2> /dev/null || fail "approximate replay with swapoff reads"
cmp -s "$WORK/approx.json" "$WORK/approx-swapoff.json" || fail "swapoff's reads were reconstructed as faults"
# fault events whose pids (or the reads') are gone: one fault per fault that
# read and no readahead hit -- said as such, not as "each read a fault"; and
# no fault events at all, with the reads still grouped by their fault ids,
# replays (an empty fault table once crashed the reconstruction)
for damage in "UPDATE swap_in SET pid = NULL" "DELETE FROM fault"; do
	cp "$pc3" "$WORK/pc3-damaged.db"
	sqlite3 "$WORK/pc3-damaged.db" "$damage" || fail "$damage: preparing"
	"$SWAPTRACE" replay --no-store --approximate -p auto -c 3 "$WORK/pc3-damaged.db" > /dev/null \
		2> "$WORK/warn-damaged.txt" || fail "$damage: approximate replay: $(cat "$WORK/warn-damaged.txt")"
	grep -q "approximate demand stream: .* faults reconstructed, one per fault that read, and no readahead hit" \
		"$WORK/warn-damaged.txt" || fail "$damage: the stream is not described: $(cat "$WORK/warn-damaged.txt")"
done
# fault events whose faults each read one page and none found one read ahead
# (a kernel whose readahead window shrank to a page on a random workload):
# the stream is described as that, not as a capture without fault events
cp "$db" "$WORK/one-page.db"
sqlite3 "$WORK/one-page.db" "UPDATE swap_in SET demand = NULL; UPDATE capture SET page_cluster = 3" ||
	fail "preparing a capture whose faults each read one page"
"$SWAPTRACE" replay --no-store --approximate -p auto -c 3 "$WORK/one-page.db" > /dev/null \
	2> "$WORK/warn-one-page.txt" || fail "approximate replay of one page per fault"
check_eq "$(cat "$WORK/warn-one-page.txt")" \
	"swaptrace: replay: warning: approximate demand stream: the capture's reads mix demand and readahead; $(sqlite3 "$db" "SELECT count(*) FROM swap_in") faults reconstructed from its reads and faults: each read one page, and none found a page read ahead (docs/replay-model.md)" \
	"one page per fault is described as such"
# with no page-cluster recorded, readahead may have been off: "may mix", as
# info says it (replay said they mix, as a fact)
sqlite3 "$WORK/one-page.db" "UPDATE capture SET page_cluster = NULL" || fail "forgetting the page-cluster"
"$SWAPTRACE" replay --no-store --approximate -p auto -c 3 "$WORK/one-page.db" > /dev/null \
	2> "$WORK/warn-one-page.txt" || fail "approximate replay without a page-cluster"
check_eq "$(cat "$WORK/warn-one-page.txt")" \
	"swaptrace: replay: warning: approximate demand stream: the capture's reads may mix demand and readahead; $(sqlite3 "$db" "SELECT count(*) FROM swap_in") faults reconstructed from its reads and faults: each read one page, and none found a page read ahead (docs/replay-model.md)" \
	"no page-cluster recorded: the reads may mix"
# block events alone: no faults to reconstruct from, every read a fault, and
# no fault addresses for VMA readahead -- both said
blkonly="$WORK/pc3-blk.db"
"$SWAPTRACE" ingest -q -o "$blkonly" --meta "$CAPTURES/rnd-1ssd-vma-pc3/meta.txt" \
	"$(blk_input rnd-1ssd-vma-pc3)" || fail "ingest blktrace only"
"$SWAPTRACE" replay --no-store --approximate -p auto -p vma -c 3 "$blkonly" > /dev/null 2> "$WORK/warn-blk.txt" ||
	fail "approximate replay of block events alone"
grep -q "without fault events each read stands for a fault" "$WORK/warn-blk.txt" ||
	fail "every read standing for a fault is announced"
grep -q "no fault addresses (block events only): vma reads nothing ahead" "$WORK/warn-blk.txt" ||
	fail "vma without fault addresses is announced"
grep -q "no fault addresses (block events only): auto uses cluster readahead" "$WORK/warn-blk.txt" ||
	fail "auto's fallback without fault addresses is announced"
"$SWAPTRACE" replay --no-store --approximate -p auto -c 3 "$pc3" 2>&1 > /dev/null | grep -q "no fault addresses" &&
	fail "a capture with fault addresses gets no such warning"
# fault events that name none of the reads: each read stands for a fault,
# and the capture is not said to lack fault events
cp "$pc3" "$WORK/unlinked.db"
sqlite3 "$WORK/unlinked.db" "UPDATE swap_in SET fault_id = NULL" || fail "unlinking the reads from their faults"
"$SWAPTRACE" replay --no-store --approximate -p auto -c 3 "$WORK/unlinked.db" > /dev/null \
	2> "$WORK/warn-unlinked.txt" || fail "approximate replay of reads no fault names"
grep -q "and as its fault events name none of the reads (swap_in.fault_id), each read stands for a fault" \
	"$WORK/warn-unlinked.txt" || fail "unlinked reads are not described: $(cat "$WORK/warn-unlinked.txt")"
# a warning naming a database deep down is written whole (it was cut at 512 bytes)
deep=$(long_path 500 blk.db)
cp "$blkonly" "$deep"
check_eq "$("$SWAPTRACE" replay --no-store --approximate -p vma -c 3 "$deep" 2>&1 > /dev/null |
	grep "vma reads")" \
	"swaptrace: replay: warning: '$deep': no fault addresses (block events only): vma reads nothing ahead" \
	"a warning naming a long path"
# info says which of these a capture is, before replay is tried
info_replay() { "$SWAPTRACE" info "$1" | sed -n '/^Replay: /,$p'; }
check_eq "$(info_replay "$db")" "Replay: every swap read is its fault's own page: an exact demand stream." \
	"info: a page-cluster 0 capture"
check_eq "$(info_replay "$probed")" "Replay: swap-entry probes name every fault: an exact demand stream." \
	"info: a capture with swap-entry probes"
check_eq "$(info_replay "$pc3")" "Replay: captured at page-cluster 3, so the swap reads mix demand and readahead.
  replay --approximate reconstructs the demand stream from the reads and
  the fault events (docs/replay-model.md); report does so by itself." "info: a readahead capture"
check_eq "$(info_replay "$blkonly")" "Replay: captured at page-cluster 3, so the swap reads mix demand and readahead.
  Without fault events, replay --approximate can only let each read stand
  for a fault, which counts wasted readahead as hits (docs/replay-model.md)." \
	"info: a readahead capture of block events alone"
# block events with no metadata: the page-cluster is not known, and the advice says how to give it
nometa="$WORK/pc0-nometa.db"
"$SWAPTRACE" ingest -q -o "$nometa" "$(blk_input rnd-1dev-pc0)" || fail "ingest blktrace without metadata"
expect_fail "the capture records no page-cluster (ingest it with --meta FILE)" replay -p auto "$nometa"
# --- a damaged page that only a read with a default of its own reads ---------
# The devices' request limits (capture_fact) are read at the load, the
# vmstat counts for a warning: a failed read was taken as its default
# (requests split at the default limit, no warning said) and the runs were
# printed and stored, exit 0.  One line naming the database, nothing
# printed, nothing stored.
for table in capture_fact vmstat; do
	cp "$db" "$WORK/damaged.db"
	zero_root_pages "$WORK/damaged.db" "$table" || fail "damaging $table"
	runs=$(sqlite3 "$WORK/damaged.db" 'SELECT count(*) FROM run')
	"$SWAPTRACE" replay --json -p auto -c 7 "$WORK/damaged.db" > "$WORK/out.txt" 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"1:swaptrace: replay: '$WORK/damaged.db': query: database disk image is malformed" \
		"replay with a damaged $table page"
	[ -s "$WORK/out.txt" ] && fail "replay with a damaged $table page printed $(head -c 200 "$WORK/out.txt")"
	check_eq "$(sqlite3 "$WORK/damaged.db" 'SELECT count(*) FROM run')" "$runs" \
		"replay with a damaged $table page stores nothing"
done
finish
