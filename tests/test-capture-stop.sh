#!/bin/bash
# Captures that end early: the workload killed half-way (SIGKILL), and
# swaptrace itself sent SIGINT (passed on to the command, recording until
# it exits), then SIGINT twice (stop at once).  The exit status is the
# command's as a shell reports it; the swap pages still equal the recorded
# pswpin/pswpout deltas, nothing is lost, what was recorded is readable,
# and the host's settings are exactly as before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/capture-env.sh"
require_capture_env

add_loop_swap 512 5 || fail "cannot set up loop swap"
make_cgroup 51
host_state > "$WORK/state.before"
LONG=$(workload mb=64 accesses=10000000 seed=9)

# wait until the workload swaps: its cgroup holds a process that has faulted on swap
wait_swapping() {
	local i
	for i in $(seq 1 100); do
		[ -n "$(cat "$CGROUP_DIR/cgroup.procs" 2>/dev/null)" ] &&
			[ "$(awk '/^swap /{ print $2 }' "$CGROUP_DIR/memory.stat" 2>/dev/null || echo 0)" != 0 ] && return 0
		[ -n "$(cat "$CGROUP_DIR/cgroup.procs" 2>/dev/null)" ] && [ "$CG_LIMIT_FILE" = memory.max ] &&
			[ "$(cat "$CGROUP_DIR/memory.swap.current" 2>/dev/null || echo 0)" != 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# 1. the workload killed half-way
"$SWAPTRACE" capture -q -o "$WORK/killed" -- sh -c "$LONG" > /dev/null 2> "$WORK/killed.err" &
CAPPID=$!
BACKGROUND+=("$CAPPID")
wait_swapping || fail "killed: the workload never swapped"
sleep 1
kill -KILL $(cat "$CGROUP_DIR/cgroup.procs")
wait_bounded "$CAPPID"
check_eq "$?" 137 "killed: exit status (128 + SIGKILL)"
check_eq "$(meta_value "$WORK/killed/meta.txt" command_signal)" 9 "killed: recorded signal"
check_host_restored "$WORK/state.before" "after the workload was killed"
check_counts "$WORK/killed" "killed workload"
check_event_counts "$WORK/killed" "killed workload"

# 2. SIGINT to swaptrace: passed on, recorded until the command exits
"$SWAPTRACE" capture -o "$WORK/sigint" -- sh -c "$LONG" > /dev/null 2> "$WORK/sigint.err" &
CAPPID=$!
BACKGROUND+=("$CAPPID")
wait_swapping || fail "sigint: the workload never swapped"
sleep 1
OOMS=$(oom_kills)
kill -INT "$CAPPID"
wait_bounded "$CAPPID"
RC=$?
if [ "$RC" = 137 ] && [ "$(oom_kills)" != "$OOMS" ]; then
	echo "note: the kernel OOM-killed the workload before SIGINT reached it"
else
	check_eq "$RC" 130 "sigint: exit status (128 + SIGINT)"
fi
grep -q "signal 2 passed on to the command" "$WORK/sigint.err" || fail "sigint: no note about the signal"
check_eq "$(meta_value "$WORK/sigint/meta.txt" end)" signal "sigint: recorded end"
check_host_restored "$WORK/state.before" "after SIGINT"
check_counts "$WORK/sigint" "SIGINT to swaptrace"

# 3. SIGINT twice: stop at once, the command is killed
"$SWAPTRACE" capture -q -o "$WORK/twice" -- sh -c "trap '' INT; $LONG" > /dev/null 2>&1 &
CAPPID=$!
BACKGROUND+=("$CAPPID")
wait_swapping || fail "twice: the workload never swapped"
kill -INT "$CAPPID"
sleep 0.5
kill -INT "$CAPPID"
wait_bounded "$CAPPID"
check_eq "$?" 137 "twice: exit status (the command was killed)"
check_host_restored "$WORK/state.before" "after SIGINT twice"
trace-cmd report -i "$WORK/twice/trace.dat" > /dev/null 2>&1 || fail "twice: trace-cmd cannot read trace.dat"
swt_ingest -q -o "$WORK/twice.db" "$WORK/twice" || fail "twice: ingest failed"
finish
