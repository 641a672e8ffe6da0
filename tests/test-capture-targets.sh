#!/bin/bash
# Following a running workload instead of starting one: --cgroup and --pid
# with --duration, and two captures at the same time (each in its own
# instances; the second must not break the first).  The workload runs
# across the start and the end of these recordings, so the swap pages may
# differ from the pswpin/pswpout deltas by the I/O in flight while tracing
# starts and stops; they must agree within a few pages.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/capture-env.sh"
require_capture_env

add_loop_swap 512 5 || fail "cannot set up loop swap"
make_cgroup 51
host_state > "$WORK/state.before"
TOL=64

# A fresh long-running workload for each case (the kernel's memory-cgroup
# OOM killer may have taken the last one: not the capture's doing).  At
# this overcommit it now and then strikes as the workload starts: then it
# is started again, three times at most.
start_workload() {
	local try before
	for try in 1 2 3; do
		[ -n "${WL:-}" ] && kill -KILL "$WL" 2>/dev/null && wait "$WL" 2>/dev/null
		before=$(oom_kills)
		sh -c "$(workload mb=64 accesses=100000000 seed=13)" > /dev/null 2>&1 &
		WL=$!
		BACKGROUND+=("$WL")
		sleep 1.5
		kill -0 "$WL" 2>/dev/null && return 0
		[ "$(oom_kills)" = "$before" ] && break
		echo "note: the kernel OOM-killed the workload as it started (try $try)"
	done
	fail "the workload did not start"
}

# the cgroup, named relative to the memory controller.  Should the OOM
# killer end the workload before the capture finds it ("no tasks to
# follow") or before its first look at the workload's map, the workload
# and the capture are started again (three times at most), as for the
# workload alone.
for try in 1 2 3; do
	start_workload
	OOMS=$(oom_kills)
	swt capture -q -o "$WORK/cg" --cgroup "$(basename "$CGROUP_DIR")" --duration 2 \
		2> "$WORK/cg.err"
	rc=$?
	[ "$(oom_kills)" != "$OOMS" ] && [ "$try" -lt 3 ] &&
		{ { [ "$rc" -ne 0 ] && grep -q "no tasks to follow" "$WORK/cg.err"; } ||
		  { [ "$rc" -eq 0 ] && [ ! -s "$WORK/cg/maps/$WL-start.txt" ]; }; } || break
	echo "note: the kernel OOM-killed the workload before the capture found it (try $try)"
	rm -rf "$WORK/cg"
done
cat "$WORK/cg.err" >&2
[ "$rc" -eq 0 ] || fail "--cgroup capture failed"
check_host_restored "$WORK/state.before" "after a --cgroup capture"
grep -q "^target cgroup $CGROUP_DIR\$" "$WORK/cg/meta.txt" || fail "--cgroup: target not recorded"
check_eq "$(meta_value "$WORK/cg/meta.txt" end)" duration "--cgroup: recorded end"
check_eq "$(meta_value "$WORK/cg/meta.txt" mem_limit_bytes)" $((51 << 20)) "--cgroup: limit"
IDLE_OK=0
[ "$(oom_kills)" != "$OOMS" ] && IDLE_OK=1 && echo "note: the kernel OOM-killed the workload"
# its map at the start, and at the end unless the OOM killer ended it first
[ -s "$WORK/cg/maps/$WL-start.txt" ] || fail "--cgroup: no map of the workload at the start"
[ -s "$WORK/cg/maps/$WL-end.txt" ] || [ "$IDLE_OK" = 1 ] ||
	fail "--cgroup: no map of the workload at the end"
check_counts "$WORK/cg" "--cgroup capture" "$TOL" "$IDLE_OK"
check_event_counts "$WORK/cg" "--cgroup capture"

# the process, and at the same time a system-wide capture (both again if
# the OOM killer ended the workload before --pid could follow it)
for try in 1 2 3; do
	start_workload
	OOMS=$(oom_kills)
	rm -rf "$WORK/pid" "$WORK/all"
	"$SWAPTRACE" capture -q -o "$WORK/pid" --pid "$WL" --duration 3 2> "$WORK/pid.err" &
	P1=$!
	BACKGROUND+=("$P1")
	sleep 0.5
	swt capture -q -o "$WORK/all" --duration 1
	RC_ALL=$?
	wait_bounded "$P1"
	RC_PID=$?
	[ "$RC_PID" = 0 ] || [ "$(oom_kills)" = "$OOMS" ] || [ "$try" = 3 ] && break
	echo "note: the kernel OOM-killed the workload before the capture followed it (try $try)"
done
[ "$RC_ALL" = 0 ] || fail "concurrent system-wide capture failed"
[ "$RC_PID" = 0 ] || fail "--pid capture failed next to another capture: $(cat "$WORK/pid.err")"
check_host_restored "$WORK/state.before" "after two captures at once"
check_eq "$(meta_value "$WORK/pid/meta.txt" target)" pid "--pid: target kind"
# the kernel's OOM killer may have ended the workload early: then the
# recordings may have seen no swapping, which is no fault of theirs
IDLE_OK=0
[ "$(oom_kills)" != "$OOMS" ] && IDLE_OK=1 && echo "note: the kernel OOM-killed the workload"
check_counts "$WORK/pid" "--pid capture" "$TOL" "$IDLE_OK"
check_counts "$WORK/all" "system-wide capture" "$TOL" "$IDLE_OK"
check_event_counts "$WORK/all" "system-wide capture"
[ -e "$WORK/all/maps" ] && fail "system-wide capture: an empty maps/ left ($(ls -A "$WORK/all/maps" | head -3))"

# the followed process exits: the recording ends with it.  A workload the
# OOM killer ends before the capture could follow it is started again.
for try in 1 2 3; do
	start_workload
	OOMS=$(oom_kills)
	rm -rf "$WORK/gone"
	"$SWAPTRACE" capture -q -o "$WORK/gone" --pid "$WL" 2> "$WORK/gone.err" &
	P2=$!
	BACKGROUND+=("$P2")
	sleep 1
	kill -KILL "$WL" 2>/dev/null
	wait_bounded "$P2"
	RC=$?
	[ "$RC" = 0 ] || [ "$(oom_kills)" = "$OOMS" ] && break
	echo "note: the kernel OOM-killed the workload before the capture followed it (try $try)"
done
[ "$RC" = 0 ] || fail "--pid capture of a process that exits: $(cat "$WORK/gone.err")"
check_eq "$(meta_value "$WORK/gone/meta.txt" end)" target "--pid: recorded end when the process exits"
check_host_restored "$WORK/state.before" "after the followed process exited"
swt_ingest -q -o "$WORK/gone.db" "$WORK/gone" || fail "--pid: ingest after the process exited"

# a process whose child, started before the capture, does the swapping:
# --pid follows the children it already has (event-fork only sees new
# ones: a shell's running swapload was recorded with no fault at all)
for try in 1 2 3; do
	[ -n "${WL:-}" ] && kill -KILL "$WL" 2>/dev/null && wait "$WL" 2>/dev/null
	sh -c "echo \$\$ > '$CGROUP_DIR/cgroup.procs' && { '$SWAPLOAD' mb=64 accesses=100000000 seed=13 & wait; }" \
		> /dev/null 2>&1 &
	WL=$!
	BACKGROUND+=("$WL")
	sleep 1.5
	CHILD=$(cat "/proc/$WL/task/$WL/children" 2>/dev/null | tr -d ' ')
	OOMS=$(oom_kills)
	rm -rf "$WORK/kids"
	[ -n "$CHILD" ] && swt capture -q -o "$WORK/kids" --pid "$WL" --duration 2 2> "$WORK/kids.err"
	RC=$?
	[ -n "$CHILD" ] && { [ "$RC" = 0 ] || [ "$(oom_kills)" = "$OOMS" ]; } && break
	echo "note: the kernel OOM-killed the workload before the capture followed it (try $try)"
done
kill -KILL "$CHILD" "$WL" 2>/dev/null
[ "$RC" = 0 ] || fail "--pid capture of a process with a child: $(cat "$WORK/kids.err")"
swt_ingest -q -o "$WORK/kids.db" "$WORK/kids" || fail "--pid with a child: ingest"
[ "$(sqlite3 "$WORK/kids.db" "SELECT count(*) > 0 FROM fault WHERE pid = $CHILD")" = 1 ] ||
	fail "--pid: no fault of the child $CHILD recorded"
[ -s "$WORK/kids/maps/$CHILD-start.txt" ] || fail "--pid: no map of the child $CHILD"
check_host_restored "$WORK/state.before" "after following a process and its child"

# A cgroup NAME holding a sleeping task, and a capture (CAPTURE-ARGS, its
# stderr in OUT.err) following it in the background, past its start: sets
# FOLLOWED_CG, SLEEPER and CAPPID.
follow_sleeper_cgroup() { # name out capture-args...
	local name=$1 out=$2
	shift 2
	FOLLOWED_CG="$CG_ROOT/swt-test-$$-$name"
	mkdir "$FOLLOWED_CG" || fail "cannot make the cgroup '$name' to follow"
	EXTRA_CGROUPS+=("$FOLLOWED_CG")
	sh -c "echo \$\$ > '$FOLLOWED_CG/cgroup.procs' && exec sleep 30" &
	SLEEPER=$!
	BACKGROUND+=("$SLEEPER")
	for _ in $(seq 50); do [ -n "$(cat "$FOLLOWED_CG/cgroup.procs")" ] && break; sleep 0.1; done
	"$SWAPTRACE" capture "$@" -o "$out" --cgroup "$FOLLOWED_CG" > /dev/null 2> "$out.err" &
	CAPPID=$!
	BACKGROUND+=("$CAPPID")
	for _ in $(seq 50); do [ -d "$TRACEFS/instances/swaptrace-$CAPPID" ] && break; sleep 0.1; done
	sleep 0.5
}

# a followed cgroup that is removed ends the recording (it went on, recording
# nothing of it, until --duration or ^C)
follow_sleeper_cgroup gone "$WORK/cg-gone"
GONE_CG=$FOLLOWED_CG
kill "$SLEEPER" 2>/dev/null
wait "$SLEEPER" 2>/dev/null
for _ in $(seq 50); do rmdir "$GONE_CG" 2>/dev/null && break; sleep 0.1; done
[ -d "$GONE_CG" ] && fail "cannot remove the followed cgroup"
SWT_RUN_LIMIT=20 wait_bounded "$CAPPID"
check_eq "$?" 0 "--cgroup removed: exit status ($(cat "$WORK/cg-gone.err"))"
check_eq "$(meta_value "$WORK/cg-gone/meta.txt" end 2>/dev/null)" target "--cgroup removed: recorded end"
grep -q "(the cgroup was removed)" "$WORK/cg-gone.err" ||
	fail "--cgroup removed: the summary does not say why it ended: $(cat "$WORK/cg-gone.err")"
check_host_restored "$WORK/state.before" "after following a cgroup that was removed"

# tasks that join a followed cgroup are traced within a drain (100 ms), not
# at the next once-a-second look: four short-lived joiners, each faulting
# for 0.4 s, all have faults recorded (with the look once a second, each
# was missed more often than not); and their processes are mapped as the
# program they exec()ed after joining (mapped at the looks alone, a 0.4 s
# one was so about two times in five)
follow_sleeper_cgroup join "$WORK/cg-join" -q --duration 8
JOIN_CG=$FOLLOWED_CG
JOINERS=()
for i in 1 2 3 4; do
	sh -c "echo \$\$ > '$JOIN_CG/cgroup.procs' && exec python3 -c '
import time
end = time.time() + 0.4
while time.time() < end:
    b = bytearray(1 << 20)'" &
	JOINERS+=("$!")
	wait "$!"
	sleep 0.3
done
SWT_RUN_LIMIT=20 wait_bounded "$CAPPID"
check_eq "$?" 0 "--cgroup joiners: exit status ($(cat "$WORK/cg-join.err"))"
kill "$SLEEPER" 2>/dev/null
wait "$SLEEPER" 2>/dev/null
if swt_ingest -q -o "$WORK/cg-join.db" "$WORK/cg-join"; then
	for pid in "${JOINERS[@]}"; do
		[ "$(sqlite3 "$WORK/cg-join.db" "SELECT count(*) > 0 FROM fault WHERE pid = $pid")" = 1 ] ||
			fail "--cgroup: the faults of task $pid, which joined for 0.4 s, were not recorded"
		grep -q "^maps pid=$pid exe=[^ ]*/python3[^ /]* " "$WORK/cg-join/meta.txt" ||
			fail "--cgroup: process $pid, which joined for 0.4 s, is not mapped as python3: $(grep "^maps pid=$pid " "$WORK/cg-join/meta.txt")"
	done
else
	fail "--cgroup joiners: ingest"
fi
check_host_restored "$WORK/state.before" "after following a cgroup tasks joined"

# a followed process that exits is a zombie until its parent reaps it: the
# recording ends all the same (kill -0 still found it: recorded until ^C)
python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    time.sleep(1.5)
    os._exit(0)
print(pid, flush=True)
time.sleep(60)' > "$WORK/zombie.pid" &
ZPARENT=$!
BACKGROUND+=("$ZPARENT")
for _ in $(seq 50); do [ -s "$WORK/zombie.pid" ] && break; sleep 0.1; done
ZCHILD=$(cat "$WORK/zombie.pid")
SWT_RUN_LIMIT=30 swt capture -q -o "$WORK/zombie" --pid "$ZCHILD" 2> "$WORK/zombie.err"
check_eq "$?" 0 "--pid of a process that becomes a zombie: exit status ($(cat "$WORK/zombie.err"))"
check_eq "$(meta_value "$WORK/zombie/meta.txt" end 2>/dev/null)" target \
	"--pid of a process that becomes a zombie: recorded end"
grep -q '^State:.*Z' "/proc/$ZCHILD/status" 2>/dev/null ||
	echo "note: the followed process was no longer a zombie at the end"
# ... and a zombie is no process to follow
swt capture -q -o "$WORK/zombie2" --pid "$ZCHILD" 2> "$WORK/zombie2.err"
check_eq "$?:$(cat "$WORK/zombie2.err")" \
	"1:swaptrace: capture: process $ZCHILD: it has exited (a zombie its parent has not reaped)" \
	"--pid of a zombie"
kill "$ZPARENT" 2>/dev/null
wait "$ZPARENT" 2>/dev/null
check_host_restored "$WORK/state.before" "after following a process that became a zombie"

# ... but a process whose main thread exited (pthread_exit) while another
# runs is no zombie: followed until its last thread ends
cat > "$WORK/leader.c" <<'EOF'
#include <pthread.h>
#include <unistd.h>
static void *work(void *arg) { (void)arg; sleep(4); return NULL; }
int main(void) { pthread_t t; pthread_create(&t, NULL, work, NULL); pthread_exit(NULL); }
EOF
if cc -pthread -o "$WORK/leader" "$WORK/leader.c" 2> "$WORK/leader.cc"; then
	"$WORK/leader" &
	LEADER=$!
	BACKGROUND+=("$LEADER")
	for _ in $(seq 50); do grep -q '^State:.*Z' "/proc/$LEADER/status" 2>/dev/null && break; sleep 0.05; done
	t0=$(date +%s%N)
	SWT_RUN_LIMIT=30 swt capture -q -o "$WORK/leader-cap" --pid "$LEADER" 2> "$WORK/leader.err"
	check_eq "$?:$(cat "$WORK/leader.err")" "0:" "--pid of a process whose main thread exited"
	check_eq "$(meta_value "$WORK/leader-cap/meta.txt" end 2>/dev/null)" target \
		"--pid of a process whose main thread exited: recorded end"
	[ $(( ($(date +%s%N) - t0) / 1000000 )) -ge 2000 ] ||
		fail "--pid of a process whose main thread exited: recording ended before its other thread"
	wait "$LEADER" 2>/dev/null
else
	echo "note: the main-thread-exit case is skipped: cannot compile with cc: $(head -1 "$WORK/leader.cc")"
fi

# --pid of a thread's id (as top -H shows it) follows its process: the
# recording goes on after that thread exits, and meta.txt names the process
cat > "$WORK/worker.c" <<'EOF'
#include <pthread.h>
#include <unistd.h>
static void *work(void *arg) { (void)arg; sleep(1); return NULL; }
int main(void) { pthread_t t; pthread_create(&t, NULL, work, NULL); pthread_join(t, NULL); sleep(3); return 0; }
EOF
if cc -pthread -o "$WORK/worker" "$WORK/worker.c" 2> "$WORK/worker.cc"; then
	"$WORK/worker" &
	PROC=$!
	BACKGROUND+=("$PROC")
	TID=
	for _ in $(seq 50); do
		TID=$(ls "/proc/$PROC/task" 2>/dev/null | grep -vx "$PROC" | head -1)
		[ -n "$TID" ] && break
		sleep 0.02
	done
	t0=$(date +%s%N)
	SWT_RUN_LIMIT=30 swt capture -o "$WORK/tid-cap" --pid "$TID" > /dev/null 2> "$WORK/tid.err"
	check_eq "$?" 0 "--pid of a thread: exit status ($(cat "$WORK/tid.err"))"
	grep -qx "swaptrace: capture: $TID is a thread of process $PROC: following the process" \
		"$WORK/tid.err" || fail "--pid of a thread: not said: $(cat "$WORK/tid.err")"
	check_eq "$(grep '^target ' "$WORK/tid-cap/meta.txt")" "target pid $PROC" "--pid of a thread: target"
	grep -q "^maps pid=$PROC " "$WORK/tid-cap/meta.txt" || fail "--pid of a thread: maps not the process's"
	[ $(( ($(date +%s%N) - t0) / 1000000 )) -ge 2000 ] ||
		fail "--pid of a thread: recording ended when the thread exited, not the process"
	wait "$PROC" 2>/dev/null
	check_host_restored "$WORK/state.before" "after following a thread's process"
else
	echo "note: the thread-id case is skipped: cannot compile with cc: $(head -1 "$WORK/worker.cc")"
fi
finish
