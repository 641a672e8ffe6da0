#!/bin/bash
# Fidelity against the real kernel: replaying each -pc0 capture (a pure
# demand stream) with policy auto at page-cluster 3 predicts what its -pc3
# twin's kernel really did: readahead accuracy (swap_ra_hit/swap_ra),
# coverage (swap_ra_hit/(pgmajfault+swap_ra_hit)) and the average read
# request size (from the twin's block events).  Goals (relative): 10 % for
# the one-device pairs, 25 % for four devices; request size 15 %.
#
# Where the model meets the goal the test asserts it.  Where it does not
# (coverage of seq-1dev, and of rnd-4dev in its traced placement: see
# docs/replay-model.md, "Fidelity") the test pins the known
# error within 5 points, so that a change to the model that moves it is
# noticed -- and a fix shows up as a pin to update, not a silent pass.
#
# The built-ins' fast paths (replay.h) must give exactly what on_miss and
# on_hit give (SWT_TEST_NO_FAST_PATH turns them off), the engine's
# 8-byte nodes what their side table for long runs gives
# (SWT_TEST_WIDE_NODES takes it), and its LRU rings what they give when
# compacted every thousand pages and checked against the slot words at the
# end (SWT_TEST_TIGHT_RINGS).
#
# Then sanity on every capture: oracle has accuracy 1 and the highest
# coverage of all policies at every page-cluster 1-8; reading at misses
# only (oracle:at=misses) it has accuracy 1 too, less coverage, and on
# seq-1dev at 4, 5 and 8 fixed's whole windows gain a few hits more than
# it (under one point: docs/replay-model.md, Policies); every readahead
# policy covers far more of the sequential capture's faults than none.
. "$(dirname "$0")/lib.sh"
find_captures

printf '%-16s %-9s %8s %8s %8s\n' pair metric real replay error
check_pair() { # name tolerance [layout=SPEC] [metric=pinned_error ...]
	local name=$1 tol=$2 pc0="$CAPTURES/$1-pc0" pc3="$CAPTURES/$1-pc3" layout=traced label=$1
	shift 2
	case ${1:-} in layout=*) layout=${1#layout=}; label="$name@$layout"; shift ;; esac
	[ -d "$pc0" ] && [ -d "$pc3" ] || { fail "$name: capture pair missing"; return; }
	if [ ! -f "$WORK/$name-pc3.db" ]; then
		"$SWAPTRACE" ingest -q -o "$WORK/$name-pc0.db" "$pc0" || { fail "$name: ingest pc0"; return; }
		"$SWAPTRACE" ingest -q -o "$WORK/$name-pc3.db" "$pc3" || { fail "$name: ingest pc3"; return; }
	fi
	"$SWAPTRACE" replay --no-store --json -p auto -c 3 -l "$layout" "$WORK/$name-pc0.db" \
		> "$WORK/$label.json" || { fail "$label: replay"; return; }
	python3 - "$label" "$tol" "$WORK/$label.json" "$pc3/meta.txt" "$WORK/$name-pc3.db" "$@" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sqlite3, sys
name, tol, path, meta, db = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
pinned = {k: float(v) for k, v in (a.split("=") for a in sys.argv[6:])}
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
# one run, or for a spread layout the mean over its runs (one per device offset)
runs = [r["totals"] for r in json.load(open(path))["runs"]]
mean = {k: sum(r[k] for r in runs) / len(runs) for k in ("accuracy", "coverage", "avg_request_kib")}
ok = True
for metric, real, pred, t in (("accuracy", real_acc, mean["accuracy"], tol),
                              ("coverage", real_cov, mean["coverage"], tol),
                              ("req_kib", real_kib, mean["avg_request_kib"], 0.15)):
    err = (pred - real) / real
    if metric in pinned:
        bad = abs(100 * err - pinned[metric]) > 5
        note = "  known gap (goal %.0f%%)%s" % (100 * t, ", MOVED from %+.0f%%" % pinned[metric] if bad else "")
    else:
        bad = abs(err) > t
        note = "  FAIL (goal %.0f%%)" % (100 * t) if bad else ""
    print("%-16s %-9s %8.3f %8.3f %+7.1f%%%s" % (name, metric, real, pred, 100 * err, note))
    ok = ok and not bad
sys.exit(0 if ok else 1)
PY
}
check_pair rnd-1dev 0.10
check_pair seq-1dev 0.10 coverage=-12
check_pair rnd-1ssd-vma 0.10
check_pair rnd-4dev 0.25 coverage=-27
# The rnd-4dev gap is placement: the adaptive hit detector calls a miss
# adjacent when its slot is +-1 of the previous miss on any device, so the
# devices' relative slot offsets decide which windows survive.  In the pc0
# twin slot 1 of device 0 was taken before the trace, shifting device 0 by
# one slot; the pc3 twin had no such shift.  Re-placing the pc0 stream with
# the kernel's allocator on four fresh devices (the pc3 twin's offsets)
# meets the goal -- see docs/layouts.md.
check_pair rnd-4dev 0.25 layout=4
# Which offsets the devices have is incidental, and one trace cannot know
# the twin's: the mean over all 16 one-page offsets (--layout 4:spread,
# docs/layouts.md) is the prediction that does not depend on them.
check_pair rnd-4dev 0.25 layout=4:spread

# --- a readahead capture's demand stream, reconstructed (--approximate) ----------
# Replaying a -pc3 capture with what its kernel ran (auto, page-cluster 3)
# through the stream reconstructed from its reads and faults must give back
# what that kernel counted: faults (pgmajfault + swap_ra_hit) within 5 %,
# readahead accuracy and coverage within 15 % (docs/replay-model.md, Input);
# printed as NAME-pc3*.  VMA readahead's coverage within 20 %: its windows
# cannot read the pages the trace never shows faulting (-9.8 % on the exact
# stream of the -pc0 twin already), and until the faulting page's own PTE
# was read right, a stale entry of it read as readahead had made up ~3 points.
# Taking each fault's first read alone, as swaptrace once did, misses every
# readahead hit (coverage -90 %) and fails this.
for name in rnd-1dev seq-1dev rnd-1ssd-vma rnd-4dev; do
	"$SWAPTRACE" replay --no-store --json --approximate -p auto -c 3 "$WORK/$name-pc3.db" \
		> "$WORK/$name-approx.json" 2> "$WORK/$name-approx.err" || { fail "$name-pc3: approximate replay"; continue; }
	grep -q "reconstructed" "$WORK/$name-approx.err" || fail "$name-pc3: the reconstruction is announced"
	python3 - "$name" "$WORK/$name-approx.json" "$CAPTURES/$name-pc3/meta.txt" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
name, path, meta = sys.argv[1:4]
vm = {}
for line in open(meta):
    parts = line.split()
    if len(parts) == 2 and parts[0] in ("pgmajfault", "swap_ra", "swap_ra_hit"):
        vm[parts[0]] = int(parts[1])
t = json.load(open(path))["runs"][0]["totals"]
real = {"faults": vm["pgmajfault"] + vm["swap_ra_hit"], "accuracy": vm["swap_ra_hit"] / vm["swap_ra"]}
real["coverage"] = vm["swap_ra_hit"] / real["faults"]
ok = True
for metric, tol in (("faults", 0.05), ("accuracy", 0.15), ("coverage", 0.20 if "vma" in name else 0.15)):
    err = (t[metric] - real[metric]) / real[metric]
    bad = abs(err) > tol
    fmt = "%-16s %-9s %8d %8d %+7.1f%%%s" if metric == "faults" else "%-16s %-9s %8.3f %8.3f %+7.1f%%%s"
    print(fmt % (name + "-pc3*", metric, real[metric], t[metric], 100 * err,
                 "  FAIL (goal %.0f%%)" % (100 * tol) if bad else ""))
    ok = ok and not bad
sys.exit(0 if ok else 1)
PY
done

# --- the built-ins' fast paths (replay.h) give what on_miss/on_hit give ---------
for name in rnd-1dev seq-1dev rnd-1ssd-vma rnd-4dev; do
	for args in "-c 0-8" "-c 3 -l 4 -m 20000"; do
		# shellcheck disable=SC2086  # args are several options
		"$SWAPTRACE" replay --no-store --json -p none -p fixed -p adaptive -p vma -p auto \
			$args "$WORK/$name-pc0.db" > "$WORK/fast.json" || fail "$name: replay $args"
		# shellcheck disable=SC2086
		SWT_TEST_NO_FAST_PATH=1 "$SWAPTRACE" replay --no-store --json -p none -p fixed \
			-p adaptive -p vma -p auto $args "$WORK/$name-pc0.db" > "$WORK/general.json" ||
			fail "$name: replay $args without fast paths"
		cmp -s "$WORK/fast.json" "$WORK/general.json" ||
			fail "$name ($args): the fast paths and on_miss/on_hit give different results"
		# shellcheck disable=SC2086
		SWT_TEST_WIDE_NODES=1 "$SWAPTRACE" replay --no-store --json -p none -p fixed \
			-p adaptive -p vma -p auto $args "$WORK/$name-pc0.db" > "$WORK/wide.json" ||
			fail "$name: replay $args with wide nodes"
		cmp -s "$WORK/fast.json" "$WORK/wide.json" ||
			fail "$name ($args): 8-byte nodes and their side table give different results"
		# shellcheck disable=SC2086
		"$SWAPTRACE" replay --no-store --json -p fixed -p auto -p oracle $args \
			"$WORK/$name-pc0.db" > "$WORK/rings.json" || fail "$name: replay $args"
		# shellcheck disable=SC2086
		SWT_TEST_TIGHT_RINGS=1 "$SWAPTRACE" replay --no-store --json -p fixed -p auto -p oracle \
			$args "$WORK/$name-pc0.db" > "$WORK/tight.json" ||
			fail "$name: replay $args with rings compacted often (or rings and slot words disagree)"
		cmp -s "$WORK/rings.json" "$WORK/tight.json" ||
			fail "$name ($args): rings compacted often give different results"
	done
done
echo "fast paths: the same results as on_miss/on_hit on every pair; nodes as wide ones; rings compacted often as rarely"

# --- sanity on every pair's demand stream ---------------------------------------
for name in rnd-1dev seq-1dev rnd-1ssd-vma rnd-4dev; do
	"$SWAPTRACE" replay --no-store --json -p none -p fixed -p adaptive -p vma -p auto -p oracle -p leap \
		-p oracle:at=misses -c 1-8 "$WORK/$name-pc0.db" > "$WORK/$name-all.json" ||
		{ fail "$name: sweep"; continue; }
	python3 - "$name" "$WORK/$name-all.json" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
name = sys.argv[1]
# every page-cluster: above 5, cluster windows outgrow VMA windows, and the
# oracle once stayed in VMA windows on the SSD capture, below fixed's
misses_gap = {("seq-1dev", 4), ("seq-1dev", 5), ("seq-1dev", 8)}
for pc in range(1, 9):
    runs = {r["policy"]: r["totals"] for r in json.load(open(sys.argv[2]))["runs"] if r["page_cluster"] == pc}
    assert runs["none"]["ra_pages"] == 0 and runs["none"]["pages_read"] == runs["none"]["faults"], runs["none"]
    o, m = runs["oracle"], runs["oracle:at=misses"]
    # 1.0 but for a page whose slot is written again before the fault it was read for
    # (1 of 72 149 on seq-1dev at page-cluster 7, at misses only)
    assert o["accuracy"] > 0.9999 and m["accuracy"] > 0.9999, (o, m)
    for p, t in runs.items():
        assert t["coverage"] <= o["coverage"], (name, pc, p, t["coverage"], o["coverage"])
        if name == "seq-1dev" and p != "none" and pc >= 3:
            assert t["coverage"] > 0.4, (p, t["coverage"])
    # at misses only, the oracle's own hits spare it windows over later swap-outs
    kernel_like = [p for p in runs if not p.startswith("oracle")]
    best = max(kernel_like, key=lambda p: runs[p]["coverage"])
    if (name, pc) in misses_gap:
        assert m["coverage"] < runs[best]["coverage"] <= m["coverage"] + 0.01, (name, pc, best, m)
    else:
        assert runs[best]["coverage"] <= m["coverage"], (name, pc, best, m)
    print("%s, page-cluster %d: oracle %.3f is the highest coverage (at misses only %.3f%s);"
          " none reads only demand pages"
          % (name, pc, o["coverage"], m["coverage"],
             ", below %s's %.3f: known" % (best, runs[best]["coverage"])
             if (name, pc) in misses_gap else ""))
PY
done
finish
