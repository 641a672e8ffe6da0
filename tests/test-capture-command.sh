#!/bin/bash
# swaptrace capture of a command that swaps: a loop-device swap with direct
# I/O, the sample workload in a memory cgroup at 1.25x its limit.  The
# swap-in and swap-out pages in the database equal the pswpin/pswpout
# deltas the capture recorded, nothing was lost, trace-cmd report reads
# the same events ingest stored, the files are private, the command's exit
# status comes back, and the host's tracing settings, page-cluster and
# /proc/swaps are exactly as before.  A command that forks its workload
# gets the maps of every process of it that faulted, also one that left
# its process tree (double-forked), and a multi-threaded one's threads get
# their process's maps, and one started after many other processes of the
# command (they once used up the 64 processes mapped).  A command that --duration
# outlived gets its exit status in meta.txt once it ends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/capture-env.sh"
require_capture_env

# VMA replay of a capture takes its bounds from the recorded maps: a
# mapping made and gone between two looks may still be guessed, 1% at most
vma_bounds_from_maps() { # label db out
	local inmaps guessed
	"$SWAPTRACE" replay --no-store --approximate -p vma -c 3 "$2" > "$3" 2> /dev/null ||
		fail "$1: replay"
	read -r inmaps guessed < <(sed -n "s/^# VMA bounds: \([0-9]*\) faults in the capture's memory maps, \([0-9]*\) guessed.*/\1 \2/p" "$3")
	[ -n "$inmaps" ] && [ "$guessed" -le $(( (inmaps + guessed) / 100 )) ] ||
		fail "$1: VMA bounds guessed: $(grep '^# VMA bounds' "$3" || echo "none from the maps")"
	echo "$1: $inmaps faults in the maps, $guessed guessed"
}

add_loop_swap 512 5 || fail "cannot set up loop swap"
make_cgroup 51
host_state > "$WORK/state.before"
CAP="$WORK/cap"

if ! capture_workload "$CAP" -- sh -c "$(workload mb=64 accesses=20000 seed=7)"; then
	cat "$WORK/err.txt" >&2
	fail "capture failed"
fi
grep -q "^mode=rnd mb=64 accesses=20000" "$WORK/out.txt" || fail "the workload's output is missing"
grep -q "swaptrace: capture: wrote '$CAP'" "$WORK/err.txt" || fail "no summary line"
# what to do next: ingest and report it -- or, with nothing swapped in, why
# there is nothing to replay (pswpin is machine-wide: judged by the delta
# the capture recorded)
grep -qxF "swaptrace: capture: next: swaptrace ingest -o '$CAP.db' '$CAP' && swaptrace report '$CAP.db'" \
	"$WORK/err.txt" || fail "no next-step line after a capture that swapped: $(cat "$WORK/err.txt")"
# --duration shorter than the command: the capture is written when
# recording stops, while the command goes on (it was written only once the
# command exited: a long-running one's capture was kept from use, and lost
# if swaptrace was killed meanwhile); the exit status is still the command's
"$SWAPTRACE" capture -o "$WORK/outlived" --duration 1 -- sh -c "sleep 5; exit 3" \
	> /dev/null 2> "$WORK/outlived.err" &
CAPPID=$!
BACKGROUND+=("$CAPPID")
for _ in $(seq 40); do [ -s "$WORK/outlived/trace.dat" ] && [ -s "$WORK/outlived/meta.txt" ] && break; sleep 0.1; done
kill -0 "$CAPPID" 2>/dev/null || fail "outlived: swaptrace did not wait for the command"
[ -e "$WORK/outlived/.reserve" ] && fail "outlived: the capture is not complete while the command runs"
trace-cmd report -i "$WORK/outlived/trace.dat" > /dev/null 2>&1 ||
	fail "outlived: trace.dat unreadable while the command runs"
swt_ingest -q -o "$WORK/outlived.db" "$WORK/outlived" || fail "outlived: ingest while the command runs"
grep -q '^command_' "$WORK/outlived/meta.txt" && fail "outlived: meta.txt has an exit status while the command runs"
wait_bounded "$CAPPID"
check_eq "$?" 3 "outlived: the command's exit status"
# meta.txt, written before the command ended, gets its exit status once it
# has (it had none); and the messages come in the order things happened
# (the summary was printed before "recording stopped")
check_eq "$(meta_value "$WORK/outlived/meta.txt" command_exit)" 3 "outlived: command_exit in meta.txt"
check_eq "$(meta_value "$WORK/outlived/meta.txt" end)" duration "outlived: recorded end"
check_eq "$(sed -n 's/^swaptrace: capture: \(recording stopped\|wrote\|waiting\).*/\1/p' "$WORK/outlived.err" | tr '\n' ,)" \
	"recording stopped,wrote,waiting," "outlived: the order of the messages"
# ... also when it ends while the capture is being written (that was exit 0)
for t in 1.0 1.03 1.06 1.1 1.2; do
	swt capture -q -o "$WORK/outlived-$t" --duration 1 -- sh -c "sleep $t; exit 7" > /dev/null 2>&1
	check_eq "$?" 7 "outlived by ${t}s: the command's exit status"
	check_eq "$(meta_value "$WORK/outlived-$t/meta.txt" command_exit)" 7 "outlived by ${t}s: command_exit in meta.txt"
done
swt capture -o "$WORK/idle/" -- true > /dev/null 2> "$WORK/idle.err" || fail "capture of a command that does not swap"
idle_pswpin=$(awk '/^# vmstat delta/ { s = 1; next } /^#/ { s = 0 } s && $1 == "pswpin" { print $2 }' \
	"$WORK/idle/meta.txt")
if [ "$idle_pswpin" = 0 ]; then
	grep -q "^swaptrace: capture: warning: nothing was swapped in while recording" "$WORK/idle.err" ||
		fail "no warning after a capture without swap-ins: $(cat "$WORK/idle.err")"
	grep -q "next:" "$WORK/idle.err" && fail "a next step after a capture without swap-ins"
else
	grep -qxF "swaptrace: capture: next: swaptrace ingest -o '$WORK/idle.db' '$WORK/idle' && swaptrace report '$WORK/idle.db'" \
		"$WORK/idle.err" || fail "no next-step line (trailing slash dropped): $(cat "$WORK/idle.err")"
fi
check_host_restored "$WORK/state.before" "after a command capture"

for f in meta.txt trace.dat; do
	[ -s "$CAP/$f" ] || fail "no $f in the capture"
done
[ -d "$CAP/raw" ] && fail "raw pages left behind after trace.dat was written"
check_private "$CAP" "capture directory"
maj=$(( 0x$(stat -c %t "$LOOP") ))
min=$(( 0x$(stat -c %T "$LOOP") ))
grep -q "^swap_device path=$LOOP dev=$maj:$min type=partition prio=5 .* start=0 slots=131072 " "$CAP/meta.txt" ||
	fail "meta.txt does not describe $LOOP"
# the request limits replay splits reads at, as sysfs shows them
lq=/sys/block/$(basename "$LOOP")/queue
grep -q "^swap_device path=$LOOP .* max_sectors_kb=$(cat "$lq/max_sectors_kb") max_segments=$(cat "$lq/max_segments") " \
	"$CAP/meta.txt" || fail "meta.txt does not give $LOOP's request limits: $(grep '^swap_device' "$CAP/meta.txt")"
grep -q "^probes none (" "$CAP/meta.txt" || grep -q "^probes kprobe " "$CAP/meta.txt" ||
	fail "meta.txt does not say which probes were used"
check_eq "$(meta_value "$CAP/meta.txt" mem_limit_bytes)" $((51 << 20)) "memory cgroup limit"
check_eq "$(meta_value "$CAP/meta.txt" command_exit)" 0 "recorded exit status"
# the multi-gen LRU's switch as the host has it, or "absent" where the kernel lacks it
if [ -e /sys/kernel/mm/lru_gen/enabled ]; then
	check_eq "$(meta_value "$CAP/meta.txt" lru_gen)" "$(cat /sys/kernel/mm/lru_gen/enabled)" "lru_gen"
else
	check_eq "$(meta_value "$CAP/meta.txt" lru_gen)" absent "lru_gen without the multi-gen LRU"
fi
pid=$(sed -n 's/^target command pid=//p' "$CAP/meta.txt")
grep -q "^maps pid=$pid exe=$SWAPLOAD " "$CAP/meta.txt" || fail "no maps line for the workload"
grep -q "rw-p" "$CAP/maps/$pid-end.txt" || fail "the workload's end map is missing"
[ -s "$CAP/maps/$pid-start.txt" ] || fail "the workload's start map is missing"

check_counts "$CAP" "command capture"
check_event_counts "$CAP" "command capture"
# the workload's maps reach table vma, every swap fault of it lies in one
# of its mappings, and the replay takes VMA bounds from them
check_eq "$(sqlite3 "$CAP.db" "SELECT count(*) > 0 FROM vma WHERE pid = $pid AND snapshot = 'end'")" 1 \
	"the workload's last maps in table vma"
check_eq "$(sqlite3 "$CAP.db" "SELECT count(*) FROM swap_in s WHERE s.pid = $pid AND s.address IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM vma v WHERE v.pid = s.pid AND s.address >= v.start AND s.address < v.end)")" 0 \
	"the workload's swap faults outside its recorded maps"
# (the host's page-cluster is the capture's: its reads may mix demand and readahead)
"$SWAPTRACE" replay --no-store --approximate -p vma -c 3 "$CAP.db" > "$WORK/replay.txt" 2> /dev/null ||
	fail "replay of the capture"
faults=$(awk '$1 == "vma" && $3 == "all" { print $4 }' "$WORK/replay.txt")
grep -q "^# VMA bounds: $faults faults in the capture's memory maps, 0 guessed" "$WORK/replay.txt" ||
	fail "the replay did not take VMA bounds from the maps: $(head -1 "$WORK/replay.txt") ($faults faults)"

# a command whose workload is two processes it forks, in a subshell: the
# maps of every task that faulted are recorded, not only the command's own
# (they were: "1 task" in table vma, and VMA replay guessed the bounds of
# nearly every fault)
TWO="$WORK/two"
if ! capture_workload "$TWO" -- sh -c "echo \$\$ > '$CGROUP_DIR/cgroup.procs' &&
	( '$SWAPLOAD' mb=40 accesses=8000 seed=1 & p=\$!; '$SWAPLOAD' mb=40 accesses=8000 seed=2; b=\$?;
	  wait \$p; a=\$?; [ \$b -ne 0 ] && exit \$b; exit \$a )"; then
	cat "$WORK/err.txt" >&2
	fail "capture of two forked workloads failed"
fi
check_eq "$(grep -c "^mode=rnd mb=40 accesses=8000" "$WORK/out.txt")" 2 "two workloads: their output"
check_eq "$(grep -c "^maps pid=[0-9]* exe=$SWAPLOAD " "$TWO/meta.txt")" 2 \
	"two workloads: maps lines of swapload processes"
swt_ingest -q -o "$TWO.db" "$TWO" || fail "two workloads: ingest"
for p in $(sqlite3 "$TWO.db" "SELECT DISTINCT pid FROM swap_in WHERE address IS NOT NULL"); do
	grep -q "^maps pid=$p " "$TWO/meta.txt" ||
		fail "two workloads: pid $p faulted but its maps were not recorded"
done
check_eq "$(sqlite3 "$TWO.db" "SELECT count(DISTINCT pid) >= 2 FROM swap_in WHERE address IS NOT NULL")" 1 \
	"two workloads: faulting pids"
vma_bounds_from_maps "two workloads" "$TWO.db" "$WORK/two-replay.txt"

# a multi-threaded workload: the events name the faulting threads, the maps
# are the process's.  The capture lists its threads, ingest gives each the
# process as its tgid, and VMA replay takes their faults' bounds from the
# process's maps (it guessed those of every thread but the first: 3 in 4)
THR="$WORK/threads"
if ! capture_workload "$THR" -- sh -c "$(workload mb=64 accesses=20000 seed=3 threads=4)"; then
	cat "$WORK/err.txt" >&2
	fail "capture of a multi-threaded workload failed"
fi
grep -q "^mode=rnd mb=64 accesses=20000 .* threads=4$" "$WORK/out.txt" || fail "threads: the workload's output"
tpid=$(sed -n 's/^target command pid=//p' "$THR/meta.txt")
tids=$(sed -n "s/^threads pid=$tpid tids=//p" "$THR/meta.txt")
[ "$(echo "$tids" | tr ',' '\n' | grep -c .)" -ge 3 ] ||
	fail "threads: meta.txt lists no 3 threads of $tpid: $(grep '^threads' "$THR/meta.txt")"
swt_ingest -q -o "$THR.db" "$THR" || fail "threads: ingest"
check_eq "$(sqlite3 "$THR.db" "SELECT count(DISTINCT pid) >= 3 FROM swap_in WHERE address IS NOT NULL")" 1 \
	"threads: faulting threads"
check_eq "$(sqlite3 "$THR.db" "SELECT count(*) FROM (SELECT DISTINCT s.pid FROM swap_in s
	LEFT JOIN task t ON t.pid = s.pid WHERE s.address IS NOT NULL AND t.tgid IS NOT $tpid)")" 0 \
	"threads: faulting threads without the process as their tgid"
vma_bounds_from_maps "threads" "$THR.db" "$WORK/thr-replay.txt"
# the trace says the same by itself: each thread started while recording
# (task:task_newtask with CLONE_THREAD) gets its starter's process, so a
# thread that lived between two looks at /proc is placed too
check_eq "$(sqlite3 "$THR.db" "SELECT count(*) >= 3 FROM event WHERE system = 'task' AND name = 'task_newtask'
	AND pid = $tpid")" 1 "threads: task_newtask events of the workload's threads"
cp -r "$THR" "$THR-events"
sed -i '/^threads /d' "$THR-events/meta.txt"
swt_ingest -q -o "$THR-events.db" "$THR-events" || fail "threads from events: ingest"
check_eq "$(sqlite3 "$THR-events.db" "SELECT count(*) FROM (SELECT DISTINCT s.pid FROM swap_in s
	LEFT JOIN task t ON t.pid = s.pid WHERE s.address IS NOT NULL AND s.pid != $tpid AND t.tgid IS NOT $tpid)")" 0 \
	"threads from events: faulting threads without the process as their tgid"
"$SWAPTRACE" replay --no-store --approximate -p vma -c 3 "$THR-events.db" > "$WORK/thr-ev-replay.txt" 2> /dev/null ||
	fail "threads from events: replay"
check_eq "$(cat "$WORK/thr-ev-replay.txt")" "$(cat "$WORK/thr-replay.txt")" \
	"threads from events: the replay is the one with the capture's looks"

# a workload that double-forks (a daemon): re-parented to init, it leaves
# the command's process tree, but the trace still follows it; its maps are
# recorded (they were not, and VMA replay guessed every bound of it)
DBL="$WORK/double"
if ! capture_workload "$DBL" -- sh -c "echo \$\$ > '$CGROUP_DIR/cgroup.procs' &&
	( '$SWAPLOAD' mb=64 accesses=20000 seed=4 > '$WORK/daemon.out' & echo \$! > '$WORK/daemon.pid' ) &&
	p=\$(cat '$WORK/daemon.pid') && while kill -0 \$p 2> /dev/null; do sleep 0.05; done"; then
	cat "$WORK/err.txt" >&2
	fail "capture of a double-forked workload failed"
fi
grep -q "^mode=rnd mb=64 accesses=20000" "$WORK/daemon.out" || fail "double fork: the workload's output"
dpid=$(cat "$WORK/daemon.pid")
grep -q "^maps pid=$dpid exe=$SWAPLOAD " "$DBL/meta.txt" ||
	fail "double fork: no maps line for the daemon $dpid: $(grep '^maps' "$DBL/meta.txt")"
swt_ingest -q -o "$DBL.db" "$DBL" || fail "double fork: ingest"
check_eq "$(sqlite3 "$DBL.db" "SELECT count(*) > 1000 FROM swap_in WHERE pid = $dpid AND address IS NOT NULL")" 1 \
	"double fork: the daemon's traced faults"
vma_bounds_from_maps "double fork" "$DBL.db" "$WORK/dbl-replay.txt"

# a script that runs 80 other commands first (in parallel, long enough to
# be seen; 64 processes are mapped at once): the workload after them still
# has its maps recorded
MANY="$WORK/many"
if ! capture_workload "$MANY" -- sh -c "echo \$\$ > '$CGROUP_DIR/cgroup.procs' &&
	for i in \$(seq 80); do sleep 0.5 & done; wait;
	'$SWAPLOAD' mb=64 accesses=20000 seed=5 & echo \$! > '$WORK/many.pid'; wait \$!"; then
	cat "$WORK/err.txt" >&2
	fail "capture of a workload after 80 commands failed"
fi
[ "$(grep -c "^maps pid=[0-9]* exe=/usr/bin/sleep " "$MANY/meta.txt")" -ge 60 ] ||
	fail "many: the sleeps were not seen: $(grep -c '^maps' "$MANY/meta.txt") maps lines"
mpid=$(cat "$WORK/many.pid")
grep -q "^maps pid=$mpid exe=$SWAPLOAD " "$MANY/meta.txt" ||
	fail "many: no maps line for the workload $mpid: $(grep -c '^maps' "$MANY/meta.txt") maps lines"
swt_ingest -q -o "$MANY.db" "$MANY" || fail "many: ingest"
vma_bounds_from_maps "many" "$MANY.db" "$WORK/many-replay.txt"

trace-cmd report -i "$CAP/trace.dat" > "$WORK/report.txt" 2>/dev/null || fail "trace-cmd report failed"
for b in swaptrace swaptrace-block; do
	grep -q -m1 "^ *$b: " "$WORK/report.txt" || fail "trace-cmd report shows no '$b' buffer"
done

# "-o ." suggested 'swaptrace ingest -o '..db' '.'': a database named '..db'
# inside the capture itself; the next step names the directory by its path
mkdir "$WORK/dot"
(cd "$WORK/dot" && capture_workload . -- sh -c "$(workload mb=64 accesses=2000 seed=3)") ||
	fail "capture into '.'"
dot=$(realpath "$WORK/dot")
grep -qxF "swaptrace: capture: next: swaptrace ingest -o '$dot.db' '$dot' && swaptrace report '$dot.db'" \
	"$WORK/err.txt" || fail "capture into '.': next step: $(grep next: "$WORK/err.txt")"

# a command in a cgroup with no limit of its own, under the limited one:
# the parent's limit binds it (it was recorded as unlimited, and replay
# had no memory size to start from)
CHILD="$CGROUP_DIR/child"
if [ "$CG_LIMIT_FILE" = memory.max ]; then
	echo +memory > "$CGROUP_DIR/cgroup.subtree_control" || fail "cannot enable memory for the child cgroup"
fi
mkdir "$CHILD" && EXTRA_CGROUPS+=("$CHILD") || fail "cannot create a child cgroup"
swt capture -q -o "$WORK/child" -- sh -c "echo \$\$ > '$CHILD/cgroup.procs' && exec sleep 0.5" ||
	fail "capture in a child cgroup"
check_eq "$(meta_value "$WORK/child/meta.txt" memcg)" "$CHILD" "child cgroup: memcg"
check_eq "$(meta_value "$WORK/child/meta.txt" mem_limit_bytes)" $((51 << 20)) "child cgroup: its parent's limit"

# zero-filled pages swap out and in without block I/O (kernels 6.12 on:
# /proc/vmstat swpout_zero, swpin_zero): a workload of them swaps as the
# kernel counts it, but no block trace shows it; capture, info and replay
# say so rather than present a replay that lacks those faults
if grep -q '^swpin_zero ' /proc/vmstat; then
	zeros="import sys
b = bytearray(96 << 20)
for i in range(0, len(b), 4096): b[i] = 0
for r in range(2):
    s = sum(b[i] for i in range(0, len(b), 4096))
sys.exit(s)"
	capture_workload "$WORK/zero" -- sh -c "echo \$\$ > '$CGROUP_DIR/cgroup.procs' && exec python3 -c '$zeros'" ||
		fail "capture of a workload of zero-filled pages: $(cat "$WORK/err.txt")"
	zero_in=$(awk '/^# vmstat delta/ { s = 1; next } /^#/ { s = 0 } s && $1 == "swpin_zero" { print $2 }' \
		"$WORK/zero/meta.txt")
	[ "${zero_in:-0}" -gt 1000 ] || fail "zero-filled pages: only ${zero_in:-no} swpin_zero recorded"
	grep -qE "^swaptrace: capture: warning: swap-ins on this host took no block I/O while recording \(/proc/vmstat: swpin_zero $zero_in zero-filled pages\): the block trace shows none of them" \
		"$WORK/err.txt" || fail "zero-filled pages: no capture warning: $(cat "$WORK/err.txt")"
	"$SWAPTRACE" ingest -q -o "$WORK/zero.db" "$WORK/zero" || fail "zero-filled pages: ingest"
	"$SWAPTRACE" info "$WORK/zero.db" > "$WORK/zero-info.txt" 2>&1 || fail "zero-filled pages: info"
	grep -qF "  Swap-ins without block I/O (swpin_zero $zero_in zero-filled pages, machine-wide): the block" \
		"$WORK/zero-info.txt" || fail "zero-filled pages: info does not say: $(cat "$WORK/zero-info.txt")"
	grep -qE "^  kernel: .*swpin_zero $zero_in" "$WORK/zero-info.txt" || fail "zero-filled pages: info's kernel counters"
	# the few pages that were not zero (the interpreter's own) still replay (at the
	# host's page-cluster: approximated)
	if [ "$(sqlite3 "$WORK/zero.db" 'SELECT count(*) FROM swap_in')" -gt 0 ]; then
		"$SWAPTRACE" replay -n --approximate -p none "$WORK/zero.db" > /dev/null 2> "$WORK/zero-replay.err" ||
			fail "zero-filled pages: replay: $(cat "$WORK/zero-replay.err")"
		grep -qF "swap-ins on the traced host took no block I/O (/proc/vmstat, machine-wide: swpin_zero $zero_in zero-filled pages)" \
			"$WORK/zero-replay.err" || fail "zero-filled pages: no replay warning: $(cat "$WORK/zero-replay.err")"
	fi
	check_host_restored "$WORK/state.before" "after a capture of zero-filled pages"
else
	echo "note: this kernel has no swpin_zero counter (before 6.12): zero-filled pages take I/O; not tested"
fi

# the command's exit status is the capture's
swt capture -q -o "$WORK/exit3" -- sh -c 'exit 3'
check_eq "$?" 3 "exit status of a failing command"
[ -s "$WORK/exit3/trace.dat" ] || fail "no trace.dat for the failing command"
check_host_restored "$WORK/state.before" "after a failing command"
finish
