#!/bin/bash
# Captures that end early: the workload killed half-way (SIGKILL), and
# swaptrace itself sent SIGINT (passed on to the command, recording until
# it exits), then SIGINT twice (stop at once), and swaptrace SIGKILLed (the
# next capture cleans up after it).  The exit status is the
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

# capture_killed DIR [--blktrace]: a capture of `sleep 60` SIGKILLed once its
# sleep runs (and, with --blktrace, its tracer is set); CAPPID is its pid
capture_killed() {
	local sleeper opt=${2:-}
	"$SWAPTRACE" capture -q ${opt:+"$opt"} -o "$1" -- sleep 60 > /dev/null 2>&1 &
	CAPPID=$!
	BACKGROUND+=("$CAPPID")
	for _ in $(seq 100); do
		[ -d "$TRACEFS/instances/swaptrace-$CAPPID" ] && pgrep -x -P "$CAPPID" sleep > /dev/null &&
			{ [ -z "$opt" ] || [ "$(cat "$TRACEFS/current_tracer")" = blk ]; } && break
		sleep 0.1
	done
	sleeper=$(pgrep -x -P "$CAPPID" sleep)
	kill -KILL "$CAPPID"
	wait "$CAPPID" 2>/dev/null
	[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null
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

# 2. SIGINT to swaptrace: passed on, recorded until the command exits.  The
# workload lives near its cgroup's limit: the kernel may OOM-kill it before
# the signal comes (the count is taken before the capture starts, as the
# kill can come any time), and then it is tried again, three times at most.
for try in 1 2 3; do
	OOMS=$(oom_kills)
	"$SWAPTRACE" capture -o "$WORK/sigint" -- sh -c "$LONG" > /dev/null 2> "$WORK/sigint.err" &
	CAPPID=$!
	BACKGROUND+=("$CAPPID")
	wait_swapping || fail "sigint: the workload never swapped"
	sleep 1
	kill -INT "$CAPPID"
	wait_bounded "$CAPPID"
	RC=$?
	[ "$RC" = 137 ] && [ "$(oom_kills)" != "$OOMS" ] && [ "$try" -lt 3 ] || break
	echo "note: the kernel OOM-killed the workload before SIGINT reached it; again"
	rm -rf "$WORK/sigint"
done
check_eq "$RC" 130 "sigint: exit status (128 + SIGINT)"
grep -q "signal 2 passed on to the command" "$WORK/sigint.err" || fail "sigint: no note about the signal"
check_eq "$(meta_value "$WORK/sigint/meta.txt" end)" signal "sigint: recorded end"
check_host_restored "$WORK/state.before" "after SIGINT"
check_counts "$WORK/sigint" "SIGINT to swaptrace"

# 2b. under nohup a hangup stops neither the capture nor the command (it
# once did both: swaptrace caught SIGHUP and the command got it back as
# default)
nohup "$SWAPTRACE" capture -q -o "$WORK/nohup" -- sh -c "sleep 2; echo survived > '$WORK/survived'" \
	> /dev/null 2>&1 &
CAPPID=$!
BACKGROUND+=("$CAPPID")
sleep 1
kill -HUP "$CAPPID"
wait_bounded "$CAPPID"
check_eq "$?:$(cat "$WORK/survived" 2>/dev/null)" "0:survived" "nohup: SIGHUP ignored by swaptrace and the command"
check_host_restored "$WORK/state.before" "after SIGHUP under nohup"

# 2c. a stop signal reaches what the command started, as Ctrl-C reaches a
# terminal's whole job: sleep here, which the shell waits for (it was left
# running, and a workload there kept swapping after swaptrace exited)
"$SWAPTRACE" capture -q -o "$WORK/job" -- sh -c "sleep 37.25; true" > /dev/null 2>&1 &
CAPPID=$!
BACKGROUND+=("$CAPPID")
for _ in $(seq 50); do pgrep -f "^sleep 37.25" > /dev/null && break; sleep 0.1; done
pgrep -f "^sleep 37.25" > /dev/null || fail "job: the command's sleep never started"
kill -TERM "$CAPPID"
wait_bounded "$CAPPID"
check_eq "$?" 143 "job: exit status (128 + SIGTERM)"
sleep 0.2
pgrep -f "^sleep 37.25" > /dev/null && { pkill -f "^sleep 37.25"; fail "job: the command's child outlived the capture"; }
check_host_restored "$WORK/state.before" "after SIGTERM to a command with a child"

# 2b. one SIGINT reaches a command with threads once: set_event_pid lists
# each thread, and kill() to a thread reaches its whole process, so it got
# one SIGINT per thread (a second Ctrl-C is "quit now" to many programs)
"$SWAPTRACE" capture -q -o "$WORK/threads" -- python3 -c '
import signal, sys, threading, time
got = 0
def on_int(sig, frame):
    global got
    got += 1
signal.signal(signal.SIGINT, on_int)
for _ in range(4):
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
open(sys.argv[1], "w").write("ready")
while not got:
    time.sleep(0.02)
time.sleep(1)
open(sys.argv[1], "w").write(str(got))
' "$WORK/threads.count" > /dev/null 2> "$WORK/threads.err" &
CAPPID=$!
BACKGROUND+=("$CAPPID")
for _ in $(seq 100); do [ "$(cat "$WORK/threads.count" 2>/dev/null)" = ready ] && break; sleep 0.1; done
sleep 0.3
kill -INT "$CAPPID"
wait_bounded "$CAPPID"
check_eq "$?:$(cat "$WORK/threads.count")" "0:1" "a command with threads: exit status, SIGINTs from one"
check_host_restored "$WORK/state.before" "after SIGINT to a command with threads"

# 2c. Ctrl-C at a terminal: the line discipline signals the whole
# foreground process group (si_code SI_KERNEL), swaptrace and its command
# alike, so swaptrace must not pass it on again -- the command counts one
# SIGINT, not two.  A pty stands in for the terminal; swaptrace leads its
# session in the foreground, as a shell would run it.
python3 - "$WORK/tty.count" "$WORK/tty.out" "$SWAPTRACE" capture -o "$WORK/tty" -- python3 -c '
import signal, sys, time
got = 0
def on_int(sig, frame):
    global got
    got += 1
signal.signal(signal.SIGINT, on_int)
open(sys.argv[1], "w").write("ready")
while not got:
    time.sleep(0.02)
time.sleep(1)
open(sys.argv[1], "w").write(str(got))
' "$WORK/tty.count" <<'PY' > "$WORK/tty.status"
import os, pty, select, sys, time
count, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(cmd[0], cmd)
log = open(out, "wb")
def drain(timeout):
    """Copy what the terminal shows; False once the session has closed it."""
    r, _, _ = select.select([fd], [], [], timeout)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            return False
        if not data:
            return False
        log.write(data)
    return True
deadline = time.time() + 30
while time.time() < deadline:
    try:
        if open(count).read() == "ready":
            break
    except OSError:
        pass
    if not drain(0.1):
        break
time.sleep(0.3)
os.write(fd, b"\x03")
deadline = time.time() + 60
while time.time() < deadline and drain(0.2):
    pass
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
PY
check_eq "$(cat "$WORK/tty.status"):$(cat "$WORK/tty.count" 2>/dev/null)" "0:1" \
	"Ctrl-C at a terminal: exit status, SIGINTs the command got"
grep -q "signal 2 passed on to the command" "$WORK/tty.out" ||
	fail "Ctrl-C at a terminal: no note about the signal: $(tr -d '\r' < "$WORK/tty.out" | tail -3)"
check_eq "$(meta_value "$WORK/tty/meta.txt" end)" signal "Ctrl-C at a terminal: recorded end"
check_host_restored "$WORK/state.before" "after Ctrl-C at a terminal"

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

# 3b. after recording stopped (--duration), stop signals go to the tasks
# the command had then that still run -- not to a process that got the pid
# of one that exited since (it was SIGKILLed by the second SIGINT)
if [ -w /proc/sys/kernel/ns_last_pid ]; then
	"$SWAPTRACE" capture -q -o "$WORK/reused" --duration 1 -- \
		sh -c "trap '' INT; sleep 2.5 & echo \$! > '$WORK/reused.kid'; sleep 39.75" \
		> /dev/null 2>&1 &
	CAPPID=$!
	BACKGROUND+=("$CAPPID")
	for _ in $(seq 50); do [ -s "$WORK/reused.kid" ] && break; sleep 0.1; done
	KID=$(cat "$WORK/reused.kid")
	for _ in $(seq 60); do [ -e "/proc/$KID" ] || break; sleep 0.1; done
	[ -e "/proc/$KID" ] && fail "reused pid: the command's first child never exited"
	VICTIM=
	for try in 1 2 3 4 5; do
		echo $((KID - 1)) > /proc/sys/kernel/ns_last_pid
		python3 -c 'import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
time.sleep(60)' &
		V=$!
		BACKGROUND+=("$V")
		[ "$V" = "$KID" ] && { VICTIM=$V; break; }
		kill "$V" 2>/dev/null
		wait "$V" 2>/dev/null
	done
	if [ -n "$VICTIM" ]; then
		sleep 0.3
		kill -INT "$CAPPID"
		sleep 0.3
		kill -INT "$CAPPID"
		wait_bounded "$CAPPID"
		check_eq "$?" 137 "reused pid: exit status (the command was killed)"
		kill -0 "$VICTIM" 2>/dev/null || fail "reused pid: a process that took the pid of the command's exited child was killed"
		kill "$VICTIM" 2>/dev/null
		wait "$VICTIM" 2>/dev/null
	else
		echo "note: the reused-pid case is skipped: another process took the pid five times"
		kill -INT "$CAPPID"; sleep 0.3; kill -INT "$CAPPID"
		wait_bounded "$CAPPID"
	fi
	pgrep -f "^sleep 39.75" > /dev/null && { pkill -f "^sleep 39.75"; fail "reused pid: the command outlived the capture"; }
	check_host_restored "$WORK/state.before" "after stop signals once recording had stopped"
else
	echo "note: the reused-pid case is skipped: /proc/sys/kernel/ns_last_pid is not writable"
fi

# 3c. ... and to what the command started after recording stopped, which no
# instance followed (a second SIGINT killed the shell, and its sleep lived on)
"$SWAPTRACE" capture -q -o "$WORK/late" --duration 1 -- sh -c "trap '' INT; sleep 1.5; sleep 38.25" \
	> /dev/null 2>&1 &
CAPPID=$!
BACKGROUND+=("$CAPPID")
for _ in $(seq 60); do pgrep -f "^sleep 38.25" > /dev/null && break; sleep 0.1; done
pgrep -f "^sleep 38.25" > /dev/null || fail "late child: the command's second sleep never started"
kill -INT "$CAPPID"
sleep 0.3
kill -INT "$CAPPID"
wait_bounded "$CAPPID"
check_eq "$?" 137 "late child: exit status (the command was killed)"
sleep 0.2
pgrep -f "^sleep 38.25" > /dev/null && { pkill -f "^sleep 38.25";
	fail "late child: what the command started after recording stopped outlived the capture"; }
check_host_restored "$WORK/state.before" "after stop signals to a child started late"

# 4. swaptrace itself SIGKILLed (the OOM killer, kill -9): it restores
# nothing, so its instances would go on recording and its blk tracer would
# hold the top-level buffer.  The next capture replays the crash journal
# the killed one left in /run/swaptrace and says so; afterwards the host is
# as it was before either ran.
capture_killed "$WORK/sigkill" --blktrace
[ -d "$TRACEFS/instances/swaptrace-$CAPPID" ] || fail "sigkill: no instance was left to clean up"
check_eq "$(cat "$TRACEFS/current_tracer")" blk "sigkill: tracer left by the killed capture"
[ -f "/run/swaptrace/capture-$CAPPID.undo" ] || fail "sigkill: no crash journal was left"
swt capture -o "$WORK/after-kill" --duration 0.5 > /dev/null 2> "$WORK/after-kill.err"
check_eq "$?" 0 "sigkill: the next capture's exit status"
grep -q "capture was killed before it could clean up (/run/swaptrace/capture-$CAPPID.undo): restored [1-9][0-9]* setting(s) and removed 1 tracefs instance(s)\$" \
	"$WORK/after-kill.err" || fail "sigkill: no note about the cleanup: $(cat "$WORK/after-kill.err")"
[ -e "/run/swaptrace/capture-$CAPPID.undo" ] && fail "sigkill: the crash journal is still there"
check_host_restored "$WORK/state.before" "after a capture was SIGKILLed and the next one ran"
# what the killed capture left is no capture: ingest says so (its blk/ was
# read as a complete block-only capture, exit 0)
"$SWAPTRACE" ingest -q -o "$WORK/sigkill.db" "$WORK/sigkill" > /dev/null 2> "$WORK/sigkill-ingest.err"
check_eq "$?:$(cat "$WORK/sigkill-ingest.err")" "1:swaptrace: ingest: '$WORK/sigkill': an unfinished swaptrace capture (raw/, but no trace.dat): it was stopped before it could finish, and what it holds is not the whole recording" \
	"sigkill: ingest of the killed capture's directory"
[ -e "$WORK/sigkill.db" ] && fail "sigkill: ingest of the killed capture left a database"

# 5. SIGKILLed again, and then someone starts their own blk trace (another
# disk, the tracer the killed capture had set, their own buffer size)
# before the next capture runs: the crash journal must not undo their
# settings, only those still as the killed capture left them.
other=$(for b in /sys/block/*; do
	case ${b##*/} in loop*|ram*|zram*) ;; *) [ -e "$b/trace/enable" ] && echo "${b##*/}" ;; esac
done | head -1)
if [ -z "$other" ]; then
	echo "note: no block device besides loop devices: the foreign blk trace case is skipped"
else
	buf_before=$(cat "$TRACEFS/buffer_size_kb")
	capture_killed "$WORK/sigkill2" --blktrace
	# the admin's own trace, after cleaning up the instance by hand
	rmdir "$TRACEFS/instances/swaptrace-$CAPPID"* 2>/dev/null
	echo 3000 > "$TRACEFS/buffer_size_kb"
	echo 1 > "/sys/block/$other/trace/enable"
	swt capture -o "$WORK/after-kill2" --duration 0.5 > /dev/null 2> "$WORK/after-kill2.err"
	check_eq "$?" 0 "foreign blk trace: the next capture's exit status"
	check_eq "$(cat "$TRACEFS/current_tracer"):$(cat "$TRACEFS/buffer_size_kb"):$(cat "/sys/block/$other/trace/enable")" \
		"blk:3000:1" "foreign blk trace: the tracer, buffer size and disk someone set after the kill"
	grep -q "left the [1-9][0-9]* top-level tracing setting(s) of /run/swaptrace/capture-$CAPPID.undo as they are: someone's blk trace runs" \
		"$WORK/after-kill2.err" ||
		fail "foreign blk trace: no note about the settings left alone: $(cat "$WORK/after-kill2.err")"
	[ -f "/run/swaptrace/capture-$CAPPID.undo" ] ||
		fail "foreign blk trace: the journal of the settings left for later is gone"
	# the admin stops their trace; the next capture restores what the
	# killed one left, but for the buffer size the admin set meanwhile
	echo 0 > "/sys/block/$other/trace/enable"
	echo nop > "$TRACEFS/current_tracer"
	echo 2900 > "$TRACEFS/buffer_size_kb"
	swt capture -o "$WORK/after-kill3" --duration 0.5 > /dev/null 2> "$WORK/after-kill3.err"
	check_eq "$?" 0 "foreign blk trace ended: the next capture's exit status"
	grep -q "capture was killed before it could clean up (/run/swaptrace/capture-$CAPPID.undo): restored [1-9][0-9]* setting(s)" \
		"$WORK/after-kill3.err" ||
		fail "foreign blk trace ended: no note about the restore: $(cat "$WORK/after-kill3.err")"
	[ -e "/run/swaptrace/capture-$CAPPID.undo" ] &&
		fail "foreign blk trace ended: the crash journal is still there"
	check_eq "$(cat "$TRACEFS/buffer_size_kb")" 2900 "foreign blk trace ended: the admin's buffer size"
	case $buf_before in
	*"(expanded: "*) m=${buf_before#*(expanded: }; echo "${m%%)*}" > "$TRACEFS/buffer_size_kb" ;;
	*) echo "$buf_before" > "$TRACEFS/buffer_size_kb" ;;
	esac
	check_host_restored "$WORK/state.before" "after the foreign blk trace case"
fi

# 5b. what a capture cannot put back stays in its journal: its instance,
# held open by a reader outside swaptrace, cannot be removed (EBUSY); the
# next capture removes it (the journal was deleted: the instance stayed,
# recording, for good).  Like a setting left changed, it fails the capture
# (it exited 0 with a warning, so a script took the host for clean).
"$SWAPTRACE" capture -q -o "$WORK/held" --duration 1.5 > /dev/null 2> "$WORK/held.err" &
HELD=$!
BACKGROUND+=("$HELD")
# held once its events are on, not as soon as it exists: a reader before
# then makes the capture's own buffer_size_kb write fail (EBUSY)
for _ in $(seq 50); do
	[ "$(cat "$TRACEFS/instances/swaptrace-$HELD/events/enable" 2>/dev/null || echo 0)" != 0 ] && break
	sleep 0.1
done
if exec 7< "$TRACEFS/instances/swaptrace-$HELD/trace"; then
	wait_bounded "$HELD"
	check_eq "$?" 1 "held instance: the capture's exit status"
	grep -q "^swaptrace: capture: cannot remove tracefs instance '$TRACEFS/instances/swaptrace-$HELD': Device or resource busy; the next capture removes it\$" \
		"$WORK/held.err" || fail "held instance: not said as the capture's error: $(cat "$WORK/held.err")"
	[ -s "$WORK/held/trace.dat" ] && [ -s "$WORK/held/meta.txt" ] ||
		fail "held instance: what was recorded was not written"
	[ -e "/run/swaptrace/capture-$HELD.undo" ] || fail "held instance: the journal of what was left is gone"
	exec 7<&-
	swt capture -q -o "$WORK/after-held" --duration 0.5 > /dev/null 2> "$WORK/after-held.err"
	check_eq "$?" 0 "held instance: the next capture's exit status"
	grep -q "a swaptrace capture could not put everything back (/run/swaptrace/capture-$HELD.undo): restored 0 setting(s) and removed 1 tracefs instance(s)" \
		"$WORK/after-held.err" || fail "held instance: the next capture's note: $(cat "$WORK/after-held.err")"
	[ -d "$TRACEFS/instances/swaptrace-$HELD" ] && fail "held instance: still there after the next capture"
	[ -e "/run/swaptrace/capture-$HELD.undo" ] && fail "held instance: its journal outlived the retry"
	check_host_restored "$WORK/state.before" "after an instance held open"
else
	fail "held instance: cannot open its trace file"
fi

# 6. tracefs not mounted: the capture mounts it; SIGKILLed, the mount is in
# its journal, and the next capture unmounts it (its own mount too).  Only
# where this test mounted tracefs itself: nobody else is using it; and
# where debugfs's tracefs is not mounted either (captures use that one).
DEBUGFS=/sys/kernel/debug
# (only mountinfo is read: a look at the path would trigger debugfs's automount)
mounted_at() { grep -q "^[^ ]* [^ ]* [^ ]* [^ ]* $1 " /proc/self/mountinfo; }
if mounted_at "$DEBUGFS/tracing"; then
	echo "note: the unmounted-tracefs cases are skipped: tracefs is mounted at $DEBUGFS/tracing"
elif [[ " ${MOUNTS[*]} " == *" $TRACEFS "* ]] && umount "$TRACEFS" 2>/dev/null; then
	capture_killed "$WORK/sigkill3"
	mountpoint -q "$TRACEFS" || fail "unmounted tracefs: the killed capture did not mount it"
	grep -q "^mount $TRACEFS\$" "/run/swaptrace/capture-$CAPPID.undo" ||
		fail "unmounted tracefs: the mount is not in the crash journal"
	swt capture -o "$WORK/after-kill4" --duration 0.5 > /dev/null 2> "$WORK/after-kill4.err"
	check_eq "$?" 0 "unmounted tracefs: the next capture's exit status"
	grep -q "left tracefs mounted at '$TRACEFS' (mounted by /run/swaptrace/capture-$CAPPID.undo): captures use it now, and the last one to end unmounts it" \
		"$WORK/after-kill4.err" ||
		fail "unmounted tracefs: no note about the mount: $(cat "$WORK/after-kill4.err")"
	mountpoint -q "$TRACEFS" && fail "unmounted tracefs: still mounted after the next capture"
	# two captures side by side: the first mounts tracefs and ends first; the
	# second goes on with it, and the last one out unmounts it (the first
	# unmounted it, or failed to, busy, and it stayed mounted for good)
	"$SWAPTRACE" capture -q -o "$WORK/share-a" --duration 1.5 > /dev/null 2> "$WORK/share-a.err" &
	SHARE_A=$!
	BACKGROUND+=("$SHARE_A")
	for _ in $(seq 50); do [ -d "$TRACEFS/instances/swaptrace-$SHARE_A" ] && break; sleep 0.1; done
	"$SWAPTRACE" capture -q -o "$WORK/share-b" --duration 3 > /dev/null 2> "$WORK/share-b.err" &
	SHARE_B=$!
	BACKGROUND+=("$SHARE_B")
	wait_bounded "$SHARE_A"
	check_eq "$?:$(cat "$WORK/share-a.err")" "0:" "shared tracefs: the capture that mounted it"
	mountpoint -q "$TRACEFS" || fail "shared tracefs: unmounted while another capture used it"
	wait_bounded "$SHARE_B"
	check_eq "$?:$(cat "$WORK/share-b.err")" "0:" "shared tracefs: the capture that went on with it"
	mountpoint -q "$TRACEFS" && { umount "$TRACEFS";
		fail "shared tracefs: left mounted after the last capture using it"; }
	[ -e /run/swaptrace/tracefs.mounted ] && fail "shared tracefs: its mark outlived the mount"
	mount -t tracefs nodev "$TRACEFS" || fail "cannot mount tracefs again"
	for d in share-a share-b; do
		trace-cmd report -i "$WORK/$d/trace.dat" > /dev/null 2>&1 || fail "shared tracefs: $d unreadable"
	done
	# a capture's mount in use outside swaptrace (a shell sits in it) is
	# left mounted, and said; mounted again later by someone else, the next
	# capture leaves it alone (the stale mark unmounted the admin's tracefs)
	if umount "$TRACEFS"; then
		"$SWAPTRACE" capture -q -o "$WORK/busy" --duration 1.5 > /dev/null 2> "$WORK/busy.err" &
		BUSY=$!
		BACKGROUND+=("$BUSY")
		for _ in $(seq 50); do [ -d "$TRACEFS/instances/swaptrace-$BUSY" ] && break; sleep 0.1; done
		(cd "$TRACEFS" && exec sleep 3) &
		SITTER=$!
		BACKGROUND+=("$SITTER")
		wait_bounded "$BUSY"
		check_eq "$?" 0 "busy tracefs: exit status"
		grep -q "left tracefs mounted at '$TRACEFS', which a capture mounted: Device or resource busy" \
			"$WORK/busy.err" || fail "busy tracefs: not said: $(cat "$WORK/busy.err")"
		wait "$SITTER" 2>/dev/null
		mountpoint -q "$TRACEFS" || fail "busy tracefs: unmounted while in use"
		umount "$TRACEFS" && mount -t tracefs nodev "$TRACEFS" || fail "cannot mount tracefs as an admin would"
		swt capture -q -o "$WORK/after-busy" --duration 0.5 > /dev/null 2> "$WORK/after-busy.err"
		check_eq "$?" 0 "busy tracefs: the next capture's exit status"
		mountpoint -q "$TRACEFS" || { mount -t tracefs nodev "$TRACEFS";
			fail "busy tracefs: the next capture unmounted a tracefs someone else mounted"; }
		[ -e /run/swaptrace/tracefs.mounted ] && fail "busy tracefs: the stale mark was kept"
	else
		fail "cannot unmount tracefs for the busy case"
	fi
	# a capture SIGKILLed while another ran beside it: the other, ending
	# last, replays the killed one's journal as it ends (its instances were
	# left recording every page fault until some later capture came), then
	# unmounts the tracefs the killed one mounted
	umount "$TRACEFS" || fail "dead beside: cannot unmount tracefs"
	"$SWAPTRACE" capture -q -o "$WORK/dead" -- sleep 60 > /dev/null 2>&1 &
	DEAD=$!
	BACKGROUND+=("$DEAD")
	for _ in $(seq 50); do [ -d "$TRACEFS/instances/swaptrace-$DEAD" ] && break; sleep 0.1; done
	"$SWAPTRACE" capture -q -o "$WORK/beside" --duration 1 > /dev/null 2> "$WORK/beside.err" &
	BESIDE=$!
	BACKGROUND+=("$BESIDE")
	sleep 0.5
	kill -KILL "$DEAD"
	wait "$DEAD" 2>/dev/null
	pkill -x -P "$DEAD" sleep 2>/dev/null
	wait_bounded "$BESIDE"
	check_eq "$?" 0 "dead beside: the capture ending last, exit status"
	grep -q "was killed before it could clean up (/run/swaptrace/capture-$DEAD.undo): .*removed [1-9][0-9]* tracefs instance" \
		"$WORK/beside.err" || fail "dead beside: the killed capture's journal not replayed at the end: $(cat "$WORK/beside.err")"
	[ -e "/run/swaptrace/capture-$DEAD.undo" ] && fail "dead beside: the killed capture's journal outlived the capture beside it"
	mountpoint -q "$TRACEFS" && fail "dead beside: the capture ending last left tracefs mounted"
	mount -t tracefs nodev "$TRACEFS" || fail "cannot mount tracefs again"
	ls -d "$TRACEFS/instances/swaptrace-$DEAD"* 2>/dev/null &&
		fail "dead beside: the killed capture's instances are still there: $(cat "$WORK/beside.err")"
	# debugfs mounted, tracefs not: looking for tracefs at
	# /sys/kernel/debug/tracing triggered debugfs's automount of it there, a
	# mount that no capture made or removed, left for good
	MADE_DEBUGFS=0
	if ! mounted_at "$DEBUGFS" && mount -t debugfs nodev "$DEBUGFS" 2>/dev/null; then
		MADE_DEBUGFS=1
	fi
	if mounted_at "$DEBUGFS" && umount "$TRACEFS"; then
		swt capture -q -o "$WORK/debugfs" --duration 0.5 > /dev/null 2> "$WORK/debugfs.err"
		check_eq "$?:$(cat "$WORK/debugfs.err")" "0:" "debugfs mounted: the capture"
		if mounted_at "$DEBUGFS/tracing"; then
			umount "$DEBUGFS/tracing"
			fail "debugfs mounted: the capture left tracefs mounted at $DEBUGFS/tracing"
		fi
		mountpoint -q "$TRACEFS" && fail "debugfs mounted: the capture left tracefs mounted at $TRACEFS"
		mountpoint -q "$TRACEFS" || mount -t tracefs nodev "$TRACEFS" || fail "cannot mount tracefs again"
	else
		echo "note: the debugfs case is skipped: debugfs cannot be mounted"
	fi
	[ "$MADE_DEBUGFS" = 1 ] && umount "$DEBUGFS"
	# tracefs unmounted under a --blktrace capture (umount -l: the files it
	# holds open still work): the top-level settings cannot be written back.
	# Their files were taken for those of a removed disk, with nothing left
	# to restore: the blk tracer stayed set, unsaid, and the capture exited
	# 0.  It fails now, naming what it could not restore, and its journal
	# keeps it for the next capture.
	"$SWAPTRACE" capture -q --blktrace -o "$WORK/lazy" > /dev/null 2> "$WORK/lazy.err" &
	LAZY=$!
	BACKGROUND+=("$LAZY")
	for _ in $(seq 100); do [ "$(cat "$TRACEFS/current_tracer")" = blk ] && break; sleep 0.1; done
	umount -l "$TRACEFS" || fail "lazy unmount: cannot unmount tracefs"
	kill -INT "$LAZY"
	wait_bounded "$LAZY"
	check_eq "$?" 1 "lazy unmount: the capture's exit status"
	grep -q "cannot restore '$TRACEFS/current_tracer' to 'nop': it is gone (tracefs unmounted while recording?); the next capture restores it" \
		"$WORK/lazy.err" || fail "lazy unmount: the tracer left set is not said: $(cat "$WORK/lazy.err")"
	mount -t tracefs nodev "$TRACEFS" || fail "cannot mount tracefs again"
	grep -q "^set $TRACEFS/current_tracer	nop	blk\$" "/run/swaptrace/capture-$LAZY.undo" ||
		fail "lazy unmount: the tracer is not in the journal kept for the next capture"
	swt capture -q -o "$WORK/after-lazy" --duration 0.5 > /dev/null 2> "$WORK/after-lazy.err"
	check_eq "$?" 0 "lazy unmount: the next capture's exit status"
	[ -e "/run/swaptrace/capture-$LAZY.undo" ] && fail "lazy unmount: the journal outlived the next capture"
	check_host_restored "$WORK/state.before" "after the unmounted tracefs case"
fi
finish
