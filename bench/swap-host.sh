# Sourced by the benches that make this host swap for real
# (capture-overhead.sh, fidelity-live.sh): a Release build of swaptrace and
# swapload, swap devices (loop with direct I/O, or zram), a memory cgroup
# for the workload, and undoing all of it.  The caller sets BENCH (its name,
# for messages) and installs its own traps, calling swap_host_teardown; the
# tests have their own, stricter, copy of this in tests/capture-env.sh.

SWAP_HOST_DEVS=()	# swap devices made here: swapped off and removed by teardown
SWAP_HOST_ZRAM=()	# the zram ones among them, by number
CG=			# the memory cgroup, once made
SWAP_HOST_KEEPER=	# the pid keeping its statistics fresh
. tests/memcg-stats.sh

# SWAPTRACE and SWAPLOAD, built in build-bench/ (Release) unless both are given.
swap_host_build() {
	[ -n "${SWAPTRACE:-}" ] && [ -n "${SWAPLOAD:-}" ] && return 0
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSWT_BUILD_TESTS=OFF >/dev/null &&
		cmake --build build-bench -j "$(nproc)" >/dev/null || return 1
	SWAPTRACE=${SWAPTRACE:-$PWD/build-bench/cli/swaptrace}
	SWAPLOAD=${SWAPLOAD:-$PWD/build-bench/samples/swapload}
}

# swap_host_loop FILE MB [ssd]: a loop device with direct I/O on a new FILE
# of MB megabytes, swapped on at priority 5, in SWAP_HOST_DEV.  With "ssd"
# it is marked non-rotational before swapon, so the kernel takes VMA
# readahead on it.
swap_host_loop() {
	local d
	truncate -s "${2}M" "$1" || return 1
	d=$(losetup -f --show --direct-io=on "$1") || return 1
	SWAP_HOST_DEVS+=("$d")
	SWAP_HOST_DEV=$d
	if [ "${3:-}" = ssd ]; then
		echo 0 > "/sys/block/${d#/dev/}/queue/rotational" || return 1
	fi
	mkswap "$d" >/dev/null && swapon -p 5 "$d"
}

# swap_host_zram MB: a zram device of MB megabytes swapped on at priority 5,
# in SWAP_HOST_DEV.
swap_host_zram() {
	local z
	z=$(cat /sys/class/zram-control/hot_add 2>/dev/null) || return 1
	SWAP_HOST_ZRAM+=("$z")
	SWAP_HOST_DEVS+=("/dev/zram$z")
	SWAP_HOST_DEV=/dev/zram$z
	echo "${1}M" > "/sys/block/zram$z/disksize" &&
		mkswap "$SWAP_HOST_DEV" >/dev/null && swapon -p 5 "$SWAP_HOST_DEV"
}

# swap_host_cgroup MB: a memory cgroup (v1 or v2) limited to MB megabytes, in
# CG, its statistics kept fresh as the tests keep theirs (memcg-stats.sh:
# without it reclaim now and then gives up and OOM-kills the workload).
swap_host_cgroup() {
	if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		CG=/sys/fs/cgroup/memory/swt-$BENCH-$$
		mkdir "$CG" && echo $(($1 << 20)) > "$CG/memory.limit_in_bytes" || return 1
	else
		CG=/sys/fs/cgroup/swt-$BENCH-$$
		mkdir "$CG" && echo $(($1 << 20)) > "$CG/memory.max" || return 1
	fi
	keep_memcg_stats_fresh "$CG" &
	SWAP_HOST_KEEPER=$!
}

# The shell command line that joins the cgroup and runs the rest (words of a command).
swap_host_in_cgroup() {
	echo "echo \$\$ > '$CG/cgroup.procs' && exec $*"
}

# How often the kernel's OOM killer has struck in the cgroup.
swap_host_oom_kills() {
	awk '$1 == "oom_kill" { print $2; exit }' "$CG/memory.oom_control" "$CG/memory.events" 2>/dev/null
}

# Undo the above: the cgroup's tasks killed and the cgroup removed, every
# device swapped off and removed.  Safe to call twice.
swap_host_teardown() {
	local d p z
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			[ -z "$(cat "$CG/cgroup.procs" 2>/dev/null)" ] && break
			sleep 0.2
		done
		rmdir "$CG" 2>/dev/null || echo "$BENCH: cannot remove cgroup $CG" >&2
	fi
	if [ -n "$SWAP_HOST_KEEPER" ]; then
		kill "$SWAP_HOST_KEEPER" 2>/dev/null
		wait "$SWAP_HOST_KEEPER" 2>/dev/null
	fi
	SWAP_HOST_KEEPER=
	CG=
	for d in "${SWAP_HOST_DEVS[@]}"; do
		swapoff "$d" 2>/dev/null
		case $d in
		/dev/loop*) losetup -d "$d" 2>/dev/null ;;
		esac
	done
	for z in "${SWAP_HOST_ZRAM[@]}"; do
		echo "$z" > /sys/class/zram-control/hot_remove 2>/dev/null ||
			echo "$BENCH: cannot remove zram$z" >&2
	done
	SWAP_HOST_DEVS=()
	SWAP_HOST_ZRAM=()
}
