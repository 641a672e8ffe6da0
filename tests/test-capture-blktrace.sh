#!/bin/bash
# swaptrace capture --blktrace: the kernel's blk tracer in the top-level
# buffer, written as blktrace files.  blkparse reads them and its per-device
# counts equal the ingest's; the swap pages equal the recorded pswpin and
# pswpout deltas; nothing is lost; a second --blktrace capture meanwhile is
# refused with a clear message and does not disturb the first; the host's
# settings are as before (the top-level buffer's contents excepted).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/capture-env.sh"
require_capture_env
need_tool blkparse
need_tool sqlite3
grep -qw blk "$TRACEFS/available_tracers" || skip "this kernel has no blk tracer"

add_loop_swap 512 5 || fail "cannot set up loop swap"
make_cgroup 51
host_state > "$WORK/state.before"
CAP="$WORK/cap"

# one blk tracer per host: a second capture must say so and leave the first alone
"$SWAPTRACE" capture -q --blktrace -o "$WORK/first" --duration 3 &
FIRST=$!
BACKGROUND+=("$FIRST")
sleep 1
swt capture --blktrace -o "$WORK/second" --duration 1 > /dev/null 2> "$WORK/second.err"
check_eq "$?" 1 "second --blktrace capture: exit status"
grep -q "another capture is using the kernel's blk tracer" "$WORK/second.err" ||
	fail "second --blktrace capture: unclear message: $(cat "$WORK/second.err")"
[ -e "$WORK/second" ] && fail "the refused capture left its directory behind"
wait_bounded "$FIRST"
check_eq "$?" 0 "first --blktrace capture: exit status"
[ -s "$WORK/first/trace.dat" ] || fail "first --blktrace capture: no trace.dat"
check_host_restored "$WORK/state.before" "after two --blktrace captures"

# a top-level buffer that traces only some CPUs would lose the others' I/O
# without a word (such captures once came back with 112 of 19 794 swap-ins)
MASK=$(cat "$TRACEFS/tracing_cpumask")
if [ "$(nproc --all)" -gt 1 ]; then
	echo 1 > "$TRACEFS/tracing_cpumask"
	swt capture --blktrace -o "$WORK/masked" --duration 1 > /dev/null 2> "$WORK/masked.err"
	rc=$?
	echo "$MASK" > "$TRACEFS/tracing_cpumask"
	check_eq "$rc:$(wc -l < "$WORK/masked.err")" "1:1" "--blktrace with tracing_cpumask 1: one error line"
	grep -q "traces only some CPUs (tracing_cpumask is '1')" "$WORK/masked.err" ||
		fail "--blktrace with tracing_cpumask 1: unclear message: $(cat "$WORK/masked.err")"
fi
# someone else's blk trace of the device: its act_mask, LBA range and pid
# filter narrowed ours and were lost when it stopped
DISK=${LOOP#/dev/}
echo 1 > "/sys/block/$DISK/trace/enable"
swt capture --blktrace -o "$WORK/taken" --duration 1 > /dev/null 2> "$WORK/taken.err"
rc=$?
echo 0 > "/sys/block/$DISK/trace/enable"
check_eq "$rc:$(wc -l < "$WORK/taken.err")" "1:1" "--blktrace on a device traced already: one error line"
grep -q "'$DISK' is already traced with the blk tracer" "$WORK/taken.err" ||
	fail "--blktrace on a device traced already: unclear message: $(cat "$WORK/taken.err")"
check_host_restored "$WORK/state.before" "after refused --blktrace captures"

# a top-level clock that counts no nanoseconds (TSC cycles, events): the
# capture records in 'local' and puts the clock back
if grep -qw x86-tsc "$TRACEFS/trace_clock" || grep -qw counter "$TRACEFS/trace_clock"; then
	odd=$(grep -ow x86-tsc "$TRACEFS/trace_clock" || echo counter)
	clock_before=$(sed 's/.*\[\(.*\)\].*/\1/' "$TRACEFS/trace_clock")
	echo "$odd" > "$TRACEFS/trace_clock"
	swt capture --blktrace -o "$WORK/odd-clock" --duration 0.5 > /dev/null 2> "$WORK/odd-clock.err"
	check_eq "$?" 0 "--blktrace with trace_clock $odd: exit status"
	grep -q "the top-level trace_clock '$odd' does not count nanoseconds: 'local' while recording" \
		"$WORK/odd-clock.err" || fail "--blktrace with trace_clock $odd: no note: $(cat "$WORK/odd-clock.err")"
	grep -q "^clock local" "$WORK/odd-clock/meta.txt" ||
		fail "--blktrace with trace_clock $odd: meta.txt says $(grep '^clock' "$WORK/odd-clock/meta.txt")"
	check_eq "$(sed 's/.*\[\(.*\)\].*/\1/' "$TRACEFS/trace_clock")" "$odd" \
		"--blktrace with trace_clock $odd: the clock put back"
	echo "$clock_before" > "$TRACEFS/trace_clock"
	check_host_restored "$WORK/state.before" "after a --blktrace capture with trace_clock $odd"
fi

# ... but not before the top level is found idle: a clock change empties the
# top-level buffer, and someone's session there (an event enabled, an odd
# clock) lost what it had recorded when a refused capture switched the
# clock and back
if grep -qw x86-tsc "$TRACEFS/trace_clock" || grep -qw counter "$TRACEFS/trace_clock"; then
	odd=$(grep -ow x86-tsc "$TRACEFS/trace_clock" || echo counter)
	clock_before=$(sed 's/.*\[\(.*\)\].*/\1/' "$TRACEFS/trace_clock")
	on_before=$(cat "$TRACEFS/tracing_on")
	echo "$odd" > "$TRACEFS/trace_clock"
	echo 1 > "$TRACEFS/events/sched/sched_process_exec/enable"
	echo 1 > "$TRACEFS/tracing_on"
	echo "swaptrace-test-marker-$$" > "$TRACEFS/trace_marker"
	swt capture --blktrace -o "$WORK/busy-clock" --duration 0.5 > /dev/null 2> "$WORK/busy-clock.err"
	check_eq "$?" 1 "--blktrace over someone's session with trace_clock $odd: exit status"
	grep -q "the top-level trace buffer is in use" "$WORK/busy-clock.err" ||
		fail "--blktrace over someone's session: $(cat "$WORK/busy-clock.err")"
	grep -q "swaptrace-test-marker-$$" "$TRACEFS/trace" ||
		fail "--blktrace over someone's session with trace_clock $odd: their buffer was emptied"
	check_eq "$(sed 's/.*\[\(.*\)\].*/\1/' "$TRACEFS/trace_clock")" "$odd" \
		"--blktrace over someone's session: their clock"
	echo 0 > "$TRACEFS/events/sched/sched_process_exec/enable"
	echo "$on_before" > "$TRACEFS/tracing_on"
	echo "$clock_before" > "$TRACEFS/trace_clock"
	: > "$TRACEFS/trace"
	check_host_restored "$WORK/state.before" "after a --blktrace capture refused over someone's session"
fi

# someone's top-level buffer that does not overwrite (options/overwrite 0),
# small enough to fill: a full one drops records with no "LOST" notice in
# trace_pipe, so the capture must make it overwrite (reported) while it
# records.  It came back with 9 868 of 23 374 swap-ins and "0 lost events".
top_kb=$(normalise_size "$(cat "$TRACEFS/buffer_size_kb")")
echo 64 > "$TRACEFS/buffer_size_kb"
given64=$(cat "$TRACEFS/buffer_size_kb")	# the kernel rounds up (67 here)
echo 0 > "$TRACEFS/options/overwrite"
capture_workload "$WORK/no-overwrite" --blktrace --buffer-kb 64 -- sh -c "$(workload mb=64 accesses=20000 seed=13)"
check_eq "$?" 0 "--blktrace over a buffer that does not overwrite: exit status"
check_eq "$(cat "$TRACEFS/options/overwrite")" 0 "--blktrace: options/overwrite put back"
echo 1 > "$TRACEFS/options/overwrite"
echo "$top_kb" > "$TRACEFS/buffer_size_kb"
if swt_ingest -q -o "$WORK/no-overwrite.db" "$WORK/no-overwrite"; then
	"$SWAPTRACE" info --json "$WORK/no-overwrite.db" > "$WORK/no-overwrite.json"
	in=$(json_get "$WORK/no-overwrite.json" 'd["swap_in_pages"]')
	lost=$(json_get "$WORK/no-overwrite.json" 'd["lost_events"]')
	din=$(meta_delta "$WORK/no-overwrite/meta.txt" pswpin)
	# everything recorded, or what is missing counted as lost
	[ "$in" = "$din" ] || [ "$lost" -gt 0 ] ||
		fail "--blktrace over a buffer that does not overwrite: $in of $din swap-ins, none lost"
else
	fail "--blktrace over a buffer that does not overwrite: ingest failed"
fi
check_host_restored "$WORK/state.before" "after a --blktrace capture over a buffer that does not overwrite"
grep -q "^buffer_kb task=$given64 block=$given64$" "$WORK/no-overwrite/meta.txt" ||
	fail "--blktrace --buffer-kb 64 on a $given64 KiB buffer: meta.txt says $(grep '^buffer_kb' "$WORK/no-overwrite/meta.txt")"
# someone's buffer larger than asked is kept, and meta.txt says what the
# kernel gave (it said what was asked)
top_kb=$(normalise_size "$(cat "$TRACEFS/buffer_size_kb")")
echo 2048 > "$TRACEFS/buffer_size_kb"
given=$(cat "$TRACEFS/buffer_size_kb")
swt capture --blktrace --buffer-kb 256 -o "$WORK/larger" --duration 0.5 > /dev/null 2> "$WORK/larger.err"
check_eq "$?" 0 "--blktrace on a buffer larger than asked: exit status"
check_eq "$(cat "$TRACEFS/buffer_size_kb")" "$given" "--blktrace on a buffer larger than asked: kept"
echo "$top_kb" > "$TRACEFS/buffer_size_kb"
grep -q "^buffer_kb task=[0-9]* block=$given$" "$WORK/larger/meta.txt" ||
	fail "--blktrace on a $given KiB buffer: meta.txt says $(grep '^buffer_kb' "$WORK/larger/meta.txt")"
check_host_restored "$WORK/state.before" "after a --blktrace capture on a buffer larger than asked"

capture_workload "$CAP" --blktrace -- sh -c "$(workload mb=64 accesses=30000 seed=11)"
check_eq "$?" 0 "--blktrace capture: exit status"
check_host_restored "$WORK/state.before" "after a --blktrace capture"

ls "$CAP"/blk/swap.blktrace.* > /dev/null 2>&1 || fail "no blktrace files"
check_private "$CAP" "capture directory"
blkparse -i "$CAP/blk/swap" > "$WORK/blkparse.txt" 2>&1 || fail "blkparse cannot read the files"
grep -q "^Events (swap): [1-9][0-9]* entries" "$WORK/blkparse.txt" || fail "blkparse found no events"
check_counts "$CAP" "--blktrace capture"
check_eq "$(info_counts "$CAP.json")" "$(blkparse_counts "$CAP/blk/swap")" \
	"per-device counters vs blkparse"
# faults (trace.dat) and reads (blktrace files) come from two sources: each
# read goes to its task's latest fault before it (every read once went to
# the trace's last fault, and VMA replays of such captures read nothing ahead)
check_eq "$(sqlite3 "$CAP.db" "SELECT count(*) FROM swap_in s WHERE fault_id IS NOT
	(SELECT f.id FROM fault f WHERE f.pid = s.pid AND f.ts <= s.ts ORDER BY f.ts DESC LIMIT 1)")" 0 \
	"--blktrace capture: swap-ins whose fault is not their task's latest before them"
[ "$(sqlite3 "$CAP.db" "SELECT count(DISTINCT fault_id) > 10 FROM swap_in")" = 1 ] ||
	fail "--blktrace capture: $(sqlite3 "$CAP.db" "SELECT count(DISTINCT fault_id) || ' faults for ' ||
		count(*) FROM swap_in") swap-ins"
# block I/O comes from the blktrace files only: trace.dat holds no block events
trace-cmd report -i "$CAP/trace.dat" > "$WORK/report.txt" 2>/dev/null || fail "trace-cmd report failed"
check_eq "$(grep -c ' block_[a-z_]*: ' "$WORK/report.txt")" 0 \
	"block tracepoints recorded next to the blk tracer"
grep -q ' page_fault_user: ' "$WORK/report.txt" || fail "trace.dat holds no page faults"
grep -q "^block_source blktrace" "$CAP/meta.txt" || fail "meta.txt does not name the block source"
# no block instance: the OOM killer's victims go into the pid-filtered task
# buffer, which holds only the kills a followed task made, and meta.txt says so
if [ -e "$TRACEFS/events/oom/mark_victim/format" ]; then
	grep -q "^oom_victims followed$" "$CAP/meta.txt" ||
		fail "--blktrace with a target: meta.txt says '$(grep '^oom_victims' "$CAP/meta.txt")', not 'oom_victims followed'"
	check_eq "$(grep -c ' mark_victim: ' "$WORK/report.txt")" 0 "--blktrace capture: OOM victims without a kill"
fi
finish
