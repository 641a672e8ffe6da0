#!/bin/bash
# Replay fidelity against this host's own kernel, and the kernel's own
# spread: PAIRS twin captures of the sample workload, one at page-cluster 0
# and one at page-cluster PC (3), on fresh loop-device swap each time.
# Each page-cluster 0 capture is replayed with `auto` at PC and compared
# with the real page-cluster PC runs' counters (/proc/vmstat swap_ra,
# swap_ra_hit, pgmajfault; read request size from the block events), as
# tests/test-replay-fidelity.sh does for the shared captures -- but over
# several runs of each side, so the real kernel's run-to-run spread shows
# next to the model's error.
#
# The same workload does not always fault as often: reclaim sometimes
# keeps fewer of its pages (on the sequential workload here, 88 000 or
# 100 000--125 000 swap faults for the same seed, at either page-cluster),
# and coverage follows the fault count.  So each prediction is also
# compared with the real runs whose fault count is within FAULT_TOL of its
# own capture's (the same regime), as well as with all of them.
#
# Needs root, loop devices and a memory cgroup (v1 or v2); restores
# page-cluster and removes its devices and cgroup on every exit.  Builds a
# Release tree in build-bench/ unless SWAPTRACE and SWAPLOAD are given.
#
#   bench/fidelity-live.sh                       # 6 pairs, sequential, 1 device
#   MODE=rnd ALIGN=byte NDEV=4 SEED=21 bench/fidelity-live.sh  # reads spanning two pages
#   SSD=1 MODE=rnd ALIGN=byte SEED=23 bench/fidelity-live.sh    # non-rotational: VMA readahead
#   MODE=rnd ALIGN=byte WRITE=50 bench/fidelity-live.sh  # half the pieces written: slots freed
#   KEEP=/var/tmp/twins PAIRS=10 bench/fidelity-live.sh   # keep the captures
#   KEEP=/var/tmp/twins PAIRS=10 REUSE=1 bench/fidelity-live.sh  # replay them again
set -u -o pipefail
cd "$(dirname "$0")/.."

PAIRS=${PAIRS:-6}
NDEV=${NDEV:-1}
SWAP_MB=${SWAP_MB:-1024}
MB=${MB:-256}
LIMIT_MB=${LIMIT_MB:-205}
ACCESSES=${ACCESSES:-120000}
MODE=${MODE:-seq}
SEED=${SEED:-22}
PC=${PC:-3}
SSD=${SSD:-0}
ALIGN=${ALIGN:-page}
WRITE=${WRITE:-0}
FAULT_TOL=${FAULT_TOL:-0.05}
KEEP=${KEEP:-}
REUSE=${REUSE:-0}

if [ "$REUSE" = 1 ]; then
	[ -n "$KEEP" ] || { echo "fidelity-live: REUSE=1 needs KEEP=DIR" >&2; exit 1; }
else
	[ "$(id -u)" -eq 0 ] || { echo "fidelity-live: needs root" >&2; exit 1; }
	[ -w /proc/sys/vm/page-cluster ] || { echo "fidelity-live: cannot set page-cluster" >&2; exit 1; }
fi
BENCH=fidelity-live
. bench/swap-host.sh
if [ "$REUSE" = 1 ]; then
	SWAPLOAD=${SWAPLOAD:-unused}	# replays only
fi
swap_host_build || exit 1

WORK=$(mktemp -d "${TMPDIR:-/tmp}/swt-fidelity-XXXXXX")
CAPS=${KEEP:-$WORK/caps}
mkdir -p "$CAPS" || exit 1
PC_BEFORE=$(cat /proc/sys/vm/page-cluster)

teardown() {
	swap_host_teardown
	rm -f "$WORK"/swap*.img
}
cleanup() {
	teardown
	[ "$(cat /proc/sys/vm/page-cluster)" = "$PC_BEFORE" ] || echo "$PC_BEFORE" > /proc/sys/vm/page-cluster
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Fresh swap devices and cgroup for one run: every run starts from empty
# swap and an empty cgroup.
setup() {
	local i
	for i in $(seq 1 "$NDEV"); do
		swap_host_loop "$WORK/swap$i.img" "$SWAP_MB" "$([ "$SSD" = 1 ] && echo ssd)" || return 1
	done
	swap_host_cgroup "$LIMIT_MB"
}

# capture_run DIR PAGE_CLUSTER: capture and ingest one run (DIR.db); at
# this overcommit the kernel now and then OOM-kills the workload, which is
# the kernel's doing: that run is tried again, three times at most.
capture_run() {
	local dir=$1 try rc before
	for try in 1 2 3; do
		setup || { echo "fidelity-live: cannot set up swap and cgroup" >&2; return 1; }
		echo "$2" > /proc/sys/vm/page-cluster
		before=$(swap_host_oom_kills)
		rm -rf "$dir" "$dir.db"
		"$SWAPTRACE" capture -q -o "$dir" -- sh -c "$(swap_host_in_cgroup "'$SWAPLOAD'" mb=$MB mode=$MODE accesses=$ACCESSES seed=$SEED align=$ALIGN write=$WRITE)" \
			> "$WORK/out" 2> "$WORK/err"
		rc=$?
		if [ "$rc" -eq 137 ] && [ "$(swap_host_oom_kills)" != "$before" ]; then
			teardown
			continue
		fi
		teardown
		if [ "$rc" -ne 0 ]; then
			echo "fidelity-live: capture failed ($rc): $(tail -1 "$WORK/err")" >&2
			return 1
		fi
		"$SWAPTRACE" ingest -q -o "$dir.db" "$dir" || return 1
		return 0
	done
	echo "fidelity-live: the workload was OOM-killed three times at page-cluster $2" >&2
	return 1
}

if [ "$REUSE" = 1 ]; then
	echo "fidelity-live: the $PAIRS pairs kept in $CAPS, page-cluster 0 replayed with auto at $PC"
else
	echo "fidelity-live: $PAIRS pairs of swapload mb=$MB mode=$MODE accesses=$ACCESSES seed=$SEED align=$ALIGN write=$WRITE" \
	     "in a $LIMIT_MB MiB cgroup on $NDEV x $SWAP_MB MiB loop swap$([ "$SSD" = 1 ] && echo ' (non-rotational)')," \
	     "page-cluster 0 replayed with auto at $PC"
fi
for i in $(seq 1 "$PAIRS"); do
	if [ "$REUSE" = 1 ]; then
		[ -f "$CAPS/pair$i-pc0.db" ] && [ -f "$CAPS/pair$i-pc$PC.db" ] ||
			{ echo "fidelity-live: no pair $i in $CAPS" >&2; exit 1; }
		continue
	fi
	# alternating, so that drift of the machine hits both sides alike
	capture_run "$CAPS/pair$i-pc0" 0 || exit 1
	capture_run "$CAPS/pair$i-pc$PC" "$PC" || exit 1
	echo "  pair $i captured"
done

python3 - "$SWAPTRACE" "$CAPS" "$PAIRS" "$PC" "$FAULT_TOL" <<'PY'
import json, sqlite3, statistics, subprocess, sys

swt, caps, pairs, pc, tol = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
KEYS = ("accuracy", "coverage", "avg_request_kib")

def vmstat_delta(meta):
    d, section = {}, None
    for line in open(meta):
        if line.startswith("#"):
            section = line.strip()
            continue
        p = line.split()
        if section == "# vmstat delta" and len(p) == 2:
            d[p[0]] = int(p[1])
    return d

def real(name):
    v = vmstat_delta(f"{caps}/{name}/meta.txt")
    kib = sqlite3.connect(f"{caps}/{name}.db").execute(
        "SELECT sum(nr_sectors) / 2.0 / count(*) FROM request WHERE write = 0 AND issue_ns IS NOT NULL").fetchone()[0]
    faults = v["pgmajfault"] + v["swap_ra_hit"]
    return {"faults": faults, "accuracy": v["swap_ra_hit"] / v["swap_ra"] if v["swap_ra"] else float("nan"),
            "coverage": v["swap_ra_hit"] / faults, "avg_request_kib": kib}

def predicted(name):
    out = subprocess.run([swt, "replay", "--no-store", "--json", "-p", "auto", "-c", str(pc), f"{caps}/{name}.db"],
                         capture_output=True, text=True, check=True).stdout
    t = json.loads(out)["runs"][0]["totals"]
    return {k: t[k] for k in ("faults",) + KEYS}

reals = [real(f"pair{i}-pc{pc}") for i in range(1, pairs + 1)]
preds = [predicted(f"pair{i}-pc0") for i in range(1, pairs + 1)]

print("%-5s %30s   %30s" % ("pair", "page-cluster 0 -> predicted", f"real page-cluster {pc}"))
print("%-5s %8s %7s %7s %7s   %8s %7s %7s %7s" % ("", "faults", "acc", "cov", "KiB", "faults", "acc", "cov", "KiB"))
for i, (p, r) in enumerate(zip(preds, reals), 1):
    print("%-5d %8d %7.3f %7.3f %7.2f   %8d %7.3f %7.3f %7.2f" % (i, p["faults"], p["accuracy"], p["coverage"],
          p["avg_request_kib"], r["faults"], r["accuracy"], r["coverage"], r["avg_request_kib"]))

def spread(rows, what):
    print("%-10s faults %d-%d; " % (what, min(r["faults"] for r in rows), max(r["faults"] for r in rows)) +
          ", ".join("%s %.3f (%.3f-%.3f)" % (k, statistics.mean(r[k] for r in rows), min(r[k] for r in rows),
                                             max(r[k] for r in rows)) for k in KEYS))
spread(reals, "real:")
spread(preds, "predicted:")

def err(p, rows):
    means = {k: statistics.mean(r[k] for r in rows) for k in KEYS}
    return {k: (p[k] - means[k]) / means[k] for k in KEYS}

def show(label, errs):
    print("%-44s " % label + ", ".join("%s %+.1f %%" % (k, 100 * statistics.mean(e[k] for e in errs)) for k in KEYS) +
          "   (worst: " + ", ".join("%+.1f" % (100 * max((e[k] for e in errs), key=abs)) for k in KEYS) + ")")

print("errors of the predictions, mean over pairs:")
show("  against all real runs' mean", [err(p, reals) for p in preds])
matched = []
for p in preds:
    same = [r for r in reals if abs(r["faults"] - p["faults"]) <= tol * p["faults"]]
    if same:
        matched.append(err(p, same))
if matched:
    show("  against real runs within %.0f %% of its faults" % (100 * tol), matched)
    print("  (%d of %d predictions have real runs in their regime)" % (len(matched), len(preds)))
else:
    print("  no real run within %.0f %% of any prediction's faults" % (100 * tol))
PY
