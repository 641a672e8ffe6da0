#!/bin/bash
# Fidelity against the real kernel: replaying each -pc0 capture (a pure
# demand stream) with policy auto at page-cluster 3 must predict what its
# -pc3 twin's kernel really did: readahead accuracy (swap_ra_hit/swap_ra),
# coverage (swap_ra_hit/(pgmajfault+swap_ra_hit)) and the average read
# request size (from the twin's block events).  Tolerances (relative): 10 %
# for the one-device pairs, 25 % for four devices (issue 3); the request
# size is reported, and checked within 15 %.
. "$(dirname "$0")/lib.sh"
find_captures

printf '%-14s %-9s %8s %8s %8s\n' pair metric real replay error
check_pair() { # name tolerance
	local name=$1 tol=$2 pc0="$CAPTURES/$1-pc0" pc3="$CAPTURES/$1-pc3"
	[ -d "$pc0" ] && [ -d "$pc3" ] || { fail "$name: capture pair missing"; return; }
	"$SWAPTRACE" ingest -q -o "$WORK/$name-pc0.db" "$pc0" || { fail "$name: ingest pc0"; return; }
	"$SWAPTRACE" ingest -q -o "$WORK/$name-pc3.db" "$pc3" || { fail "$name: ingest pc3"; return; }
	"$SWAPTRACE" replay --no-store --json -p auto -c 3 "$WORK/$name-pc0.db" > "$WORK/$name.json" ||
		{ fail "$name: replay"; return; }
	python3 - "$name" "$tol" "$WORK/$name.json" "$pc3/meta.txt" "$WORK/$name-pc3.db" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sqlite3, sys
name, tol, path, meta, db = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
vm = {}
for line in open(meta):
    parts = line.split()
    if len(parts) == 2 and parts[0] in ("pgmajfault", "swap_ra", "swap_ra_hit"):
        vm[parts[0]] = int(parts[1])
real_acc = vm["swap_ra_hit"] / vm["swap_ra"]
real_cov = vm["swap_ra_hit"] / (vm["pgmajfault"] + vm["swap_ra_hit"])
con = sqlite3.connect(db)
real_kib = con.execute("SELECT sum(nr_sectors) / 2.0 / count(*) FROM request"
                       " WHERE write = 0 AND issue_ns IS NOT NULL").fetchone()[0]
run = json.load(open(path))["runs"][0]["totals"]
ok = True
for metric, real, pred, t in (("accuracy", real_acc, run["accuracy"], tol),
                              ("coverage", real_cov, run["coverage"], tol),
                              ("req_kib", real_kib, run["avg_request_kib"], 0.15)):
    err = (pred - real) / real
    bad = abs(err) > t
    print("%-14s %-9s %8.3f %8.3f %+7.1f%%%s" % (name, metric, real, pred, 100 * err,
          "  FAIL (tolerance %.0f%%)" % (100 * t) if bad else ""))
    ok = ok and not bad
sys.exit(0 if ok else 1)
PY
}
check_pair rnd-1dev 0.10
check_pair seq-1dev 0.10
check_pair rnd-1ssd-vma 0.10
check_pair rnd-4dev 0.25
finish
