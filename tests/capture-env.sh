# The capture tests' environment (sourced after lib.sh): a loop-device swap
# with direct I/O, a memory cgroup the workload swaps in, a snapshot of
# every tracing setting a capture could touch, and cleanup of all of it on
# any exit.  Needs root, tracefs, loop devices and the memory controller;
# skips (77) saying which one is missing.

TRACEFS=/sys/kernel/tracing
SWAPLOAD="$SWT_BUILD_DIR/samples/swapload"
LOOPS=()
CGROUP_DIR=
CG_LIMIT_FILE=
MOUNTS=()
BACKGROUND=()
EXTRA_CGROUPS=()
PAGE_CLUSTER_BEFORE=$(cat /proc/sys/vm/page-cluster 2>/dev/null)
. "$(dirname "${BASH_SOURCE[0]}")/memcg-stats.sh"

capture_cleanup() {
	local p l m d
	for p in "${BACKGROUND[@]}"; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for d in "${EXTRA_CGROUPS[@]}"; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	# what a capture killed by the watchdog could not put back (the test has
	# already failed on it): its instances, and a blk tracer nobody holds
	for d in "$TRACEFS"/instances/swaptrace-*; do
		[ -d "$d" ] || continue
		p=${d##*/swaptrace-}
		p=${p%%-*}
		kill -0 "$p" 2>/dev/null || rmdir "$d"
	done
	if [ "$(cat "$TRACEFS/current_tracer" 2>/dev/null)" = blk ] &&
	   flock -n /run/swaptrace-blktrace.lock true 2>/dev/null; then
		for d in /sys/block/*/trace/enable; do
			[ "$(cat "$d")" = 1 ] && echo 0 > "$d"
		done
		echo nop > "$TRACEFS/current_tracer"
		echo 0 > "$TRACEFS/options/bin"
	fi
	if [ -n "$CGROUP_DIR" ] && [ -d "$CGROUP_DIR" ]; then
		for p in $(cat "$CGROUP_DIR/cgroup.procs" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[ -z "$(cat "$CGROUP_DIR/cgroup.procs" 2>/dev/null)" ] && break
			sleep 0.2
		done
		rmdir "$CGROUP_DIR" 2>/dev/null || echo "warning: cannot remove cgroup $CGROUP_DIR" >&2
	fi
	for l in "${LOOPS[@]}"; do
		swapoff "$l" 2>/dev/null
		losetup -d "$l" 2>/dev/null
	done
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null
	done
	if [ -n "$PAGE_CLUSTER_BEFORE" ] &&
	   [ "$(cat /proc/sys/vm/page-cluster)" != "$PAGE_CLUSTER_BEFORE" ]; then
		echo "$PAGE_CLUSTER_BEFORE" > /proc/sys/vm/page-cluster
	fi
	lib_cleanup
}
trap capture_cleanup EXIT
# a test stopped by ctest's timeout or ^C still cleans up
trap 'exit 130' INT
trap 'exit 143' TERM

# swaptrace under a watchdog: a run that hangs is reported with where it
# hangs, then stopped with its children (TERM, then KILL), so the test
# fails and cleans up instead of the whole suite timing out.
SWT_RUN_LIMIT=${SWT_RUN_LIMIT:-150}

wait_bounded() { # pid: its exit status, or 124 after the watchdog stopped it
	local pid=$1 ticks=0 c
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$ticks" -ge $((SWT_RUN_LIMIT * 10)) ]; then
			echo "swaptrace (pid $pid) still runs after ${SWT_RUN_LIMIT} s:" \
			     "$(grep '^State' "/proc/$pid/status" 2>/dev/null)" \
			     "wchan $(cat "/proc/$pid/wchan" 2>/dev/null)" >&2
			for c in $(pgrep -P "$pid"); do
				echo "  child $c: $(grep '^State' "/proc/$c/status" 2>/dev/null)" \
				     "wchan $(cat "/proc/$c/wchan" 2>/dev/null)" >&2
				kill -KILL "$c" 2>/dev/null
			done
			kill -TERM "$pid" 2>/dev/null
			sleep 5
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		sleep 0.1
		ticks=$((ticks + 1))
	done
	wait "$pid"
}

swt() { # swaptrace args...
	"$SWAPTRACE" "$@" &
	wait_bounded $!
}

# swaptrace ingest under the watchdog: a hang fails the test.  (Ingest once
# could deadlock in sanitizer builds by forking its trace.dat decoder while
# the database writer thread ran; it now stops that thread first.)
swt_ingest() { # ingest args...
	SWT_RUN_LIMIT=60 swt ingest "$@"
}

require_capture_env() {
	[ "$(id -u)" -eq 0 ] || skip "capture tests need root"
	grep -qw tracefs /proc/filesystems || skip "this kernel has no tracefs"
	need_tool losetup
	need_tool mkswap
	need_tool swapon
	need_tool trace-cmd
	[ -x "$SWAPLOAD" ] || skip "'$SWAPLOAD' is not built"
	if [ ! -e /dev/loop-control ]; then
		modprobe loop 2>/dev/null
		[ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control)"
	fi
	if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		CG_ROOT=/sys/fs/cgroup/memory
		CG_LIMIT_FILE=memory.limit_in_bytes
	elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		CG_ROOT=/sys/fs/cgroup
		CG_LIMIT_FILE=memory.max
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
			skip "cgroup v2 memory controller not enabled for children"
	else
		skip "no memory cgroup controller (v1 or v2)"
	fi
	# a fresh boot may not have it mounted: mounted here, unmounted at cleanup
	if ! mountpoint -q "$TRACEFS"; then
		mount -t tracefs nodev "$TRACEFS" 2>/dev/null ||
			skip "tracefs is not mounted at $TRACEFS and cannot be mounted"
		MOUNTS+=("$TRACEFS")
	fi
}

# A loop-device swap area of MB megabytes at priority PRIO, in $LOOP.
# (Not in a subshell: cleanup must know every device.)
add_loop_swap() { # mb prio
	local img="$WORK/swap${#LOOPS[@]}.img"
	truncate -s "${1}M" "$img" || return 1
	LOOP=$(losetup -f --show --direct-io=on "$img") || skip "losetup failed (no free loop device?)"
	LOOPS+=("$LOOP")
	mkswap "$LOOP" >/dev/null || return 1
	swapon -p "$2" "$LOOP" || return 1
}

# The memory cgroup the workload runs in, limited to MB megabytes, with its
# statistics kept fresh (memcg-stats.sh).
make_cgroup() { # mb
	CGROUP_DIR="$CG_ROOT/swt-test-$$-$TEST_NAME"
	mkdir "$CGROUP_DIR" || skip "cannot create a memory cgroup under $CG_ROOT"
	echo $(($1 << 20)) > "$CGROUP_DIR/$CG_LIMIT_FILE"
	keep_memcg_stats_fresh "$CGROUP_DIR" &
	BACKGROUND+=("$!")
}

# How often the kernel's OOM killer has struck in the test cgroup.
oom_kills() {
	awk '$1 == "oom_kill" { print $2; exit }' "$CGROUP_DIR/memory.oom_control" \
		"$CGROUP_DIR/memory.events" 2>/dev/null
}

# Capture a workload command (CAPTURE-ARGS end with "-- COMMAND...") into DIR,
# stdout and stderr in $WORK/out.txt and err.txt; returns swaptrace's status.
# At this overcommit the kernel's memory-cgroup reclaim now and then gives up
# and OOM-kills the workload: not the capture's doing, so that run is
# discarded and tried again (five tries in all; keep_memcg_stats_fresh made
# this rare).
capture_workload() { # dir capture-args...
	local dir=$1 try rc before
	shift
	for try in 1 2 3 4 5; do
		before=$(oom_kills)
		swt capture -o "$dir" "$@" > "$WORK/out.txt" 2> "$WORK/err.txt"
		rc=$?
		if [ "$rc" -eq 137 ] && [ "$(oom_kills)" != "$before" ]; then
			echo "note: the kernel OOM-killed the workload (try $try); running it again"
			rm -rf "$dir" "$dir.db" "$dir.json"
			continue
		fi
		return "$rc"
	done
	return "$rc"
}

# A shell command line that joins the cgroup and runs swapload with ARGS.
workload() { # swapload args...
	echo "echo \$\$ > '$CGROUP_DIR/cgroup.procs' && exec '$SWAPLOAD' $*"
}

# The expanded size the kernel shows for an unexpanded buffer "N (expanded: M)".
expanded_kb() { # M
	local data
	data=$(sed -n 's/.*field: char data;.*size:\([0-9]*\);.*/\1/p' "$TRACEFS/events/header_page")
	echo $(( ($1 * 1024 + data - 1) / data * data / 1024 ))
}

normalise_size() {
	local v=$1 m
	case "$v" in
	*"(expanded: "*)
		m=${v#*(expanded: }
		m=${m%%)*}
		expanded_kb "$m"
		;;
	*) echo "$v" ;;
	esac
}

# Everything a capture may change, as text: diff two of these.
host_state() {
	local f d b top cpu_kb
	echo "instances: $(ls "$TRACEFS/instances" | tr '\n' ' ')"
	for f in current_tracer tracing_on trace_clock buffer_percent set_event set_event_pid \
		 dynamic_events tracing_cpumask; do
		echo "$f: $(tr '\n' ' ' 2>/dev/null < "$TRACEFS/$f")"
	done
	# an unexpanded top-level buffer ends expanded once a tracer used it
	# (--blktrace), which nothing can undo.  Its CPUs' files read their boot
	# size alone ("7"), without the "(expanded: M)" the top level shows:
	# they count as the expanded size too.
	top=$(cat "$TRACEFS/buffer_size_kb")
	echo "buffer_size_kb: $(normalise_size "$top")"
	for d in "$TRACEFS"/per_cpu/cpu*; do
		case "$top" in
		*"(expanded: "*) cpu_kb=$(normalise_size "$top") ;;
		*) cpu_kb=$(cat "$d/buffer_size_kb") ;;
		esac
		echo "$(basename "$d") buffer_size_kb: $cpu_kb"
	done
	(cd "$TRACEFS/options" && grep -H . ./* 2>/dev/null)
	(cd "$TRACEFS/events" && grep -H . ./*/*/enable 2>/dev/null | grep -v ':0$')
	(cd "$TRACEFS/events" && grep -H . ./*/*/filter 2>/dev/null | grep -v ':none$')
	(cd "$TRACEFS/events" && grep -H . ./*/*/trigger 2>/dev/null | grep -v ':#')
	for b in /sys/block/*; do
		[ -e "$b/trace/enable" ] && echo "$(basename "$b") trace: $(cat "$b/trace/enable")"
	done
	echo "page-cluster: $(cat /proc/sys/vm/page-cluster)"
	# the swap areas: a running workload changes only the Used column
	awk '{ print $1, $2, $3, $5 }' /proc/swaps
}

check_host_restored() { # before-file what
	host_state > "$WORK/state.after"
	if ! diff -u "$1" "$WORK/state.after" >&2; then
		fail "$2: tracing settings, page-cluster or /proc/swaps changed (diff above)"
	fi
}

# The vmstat delta a capture recorded for NAME.
meta_delta() { # meta.txt name
	awk -v k="$2" '/^# / { s = $0; next } s == "# vmstat delta" && $1 == k { print $2; exit }' "$1"
}

# Ingest a capture and check swap pages against its vmstat deltas and no
# losses.  TOLERANCE 0 means exact; IDLE_OK=1 accepts a recording in which
# nothing swapped (the workload died meanwhile).
check_counts() { # capture-dir what [tolerance [idle_ok]]
	local dir=$1 what=$2 tol=${3:-0} idle_ok=${4:-0} json in out din dout
	if ! swt_ingest -q -o "$dir.db" "$dir"; then
		fail "$what: ingest failed"
		return 1
	fi
	"$SWAPTRACE" info --json "$dir.db" > "$dir.json" || fail "$what: info failed"
	json="$dir.json"
	in=$(json_get "$json" 'd["swap_in_pages"]')
	out=$(json_get "$json" 'd["swap_out_pages"]')
	din=$(meta_delta "$dir/meta.txt" pswpin)
	dout=$(meta_delta "$dir/meta.txt" pswpout)
	if [ "$tol" = 0 ]; then
		check_eq "$in" "$din" "$what: swap-in pages vs the recorded pswpin delta"
		check_eq "$out" "$dout" "$what: swap-out pages vs the recorded pswpout delta"
	else
		[ $(( in > din ? in - din : din - in )) -le "$tol" ] ||
			fail "$what: swap-in pages $in vs pswpin delta $din (more than $tol apart)"
		[ $(( out > dout ? out - dout : dout - out )) -le "$tol" ] ||
			fail "$what: swap-out pages $out vs pswpout delta $dout (more than $tol apart)"
	fi
	[ "$din" -gt 0 ] || [ "$idle_ok" = 1 ] ||
		fail "$what: the workload did not swap in (pswpin delta '$din')"
	check_eq "$(json_get "$json" 'd["lost_events"]')" 0 "$what: lost events in the database"
	check_eq "$(awk '/^# lost events/ { s = 1; next } /^# / { s = 0 } s { n += $2 } END { print n + 0 }' "$dir/meta.txt")" 0 \
		"$what: lost events in meta.txt"
	echo "$what: $in swap-in and $out swap-out pages; pswpin $din, pswpout $dout"
}

# Event counts by name as trace-cmd report prints them, and as ingest stored them.
check_event_counts() { # capture-dir what
	local expected actual
	expected=$(trace-cmd report -i "$1/trace.dat" 2>/dev/null | awk '
		{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
			e = $(i + 1); sub(/:$/, "", e); n[e]++; break } }
		END { for (e in n) print e, n[e] }' | sort)
	actual=$(json_get "$1.json" '"\n".join("%s %d" % (k, v) for k, v in sorted(d["events"].items()))')
	check_eq "$actual" "$expected" "$2: event counts vs trace-cmd report"
}

# Files private to root: 0600 files, 0700 directories.
check_private() { # dir what
	local bad
	bad=$(find "$1" \( -type f ! -perm 600 \) -o \( -type d ! -perm 700 \) 2>/dev/null)
	[ -z "$bad" ] || fail "$2: not private: $bad"
}
