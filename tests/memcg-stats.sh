# Sourced by the capture tests (capture-env.sh) and the benches that swap
# for real (bench/swap-host.sh): keeping a memory cgroup's statistics fresh
# while a workload swaps in it.

# Reads the cgroup's memory.stat every 20 ms while the cgroup exists.
# Memory-cgroup reclaim ages the active anon list only when the cgroup's
# statistics say its inactive list is short, and the kernel refreshes those
# statistics lazily (every 2 s, or when a reader asks).  A random reader
# whose swapped-in pages all go straight to the active list (refaults)
# empties the inactive list between two refreshes; reclaim then finds
# nothing to scan, 16 times in a row, and the OOM killer ends the workload
# (the vmscan tracepoints show those rounds scanning no list at all).  On
# this VM that killed 12 % of 64 MB workloads in a 51 MB cgroup (7 of 60),
# and one CI run had five kills in a row; with the reads, 0 of 60.  Reading
# memory.stat makes the kernel refresh them.  (No fork per read: the
# builtin read, and read -t on a pipe nobody writes to as the sleep.)
keep_memcg_stats_fresh() { # dir
	local line idle
	exec {idle}<> <(:)
	while [ -d "$1" ]; do
		while read -r line; do :; done < "$1/memory.stat" 2>/dev/null
		read -r -t 0.02 -u "$idle" line
	done
}
