#!/bin/bash
# Swap areas other than a whole loop device: a swap file (its slots mapped
# through FIEMAP extents onto the filesystem's disk, which also carries
# other I/O) and zram (a synchronous device: no readahead, bio-based).  The
# swap pages ingest derives through the recorded layout equal the pswpin and
# pswpout deltas, so the layout in meta.txt is right.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/capture-env.sh"
require_capture_env
make_cgroup 51
ZRAM=
SWAPFILE=

devices_cleanup() {
	[ -n "$SWAPFILE" ] && swapoff "$SWAPFILE" 2>/dev/null
	if [ -n "$ZRAM" ]; then
		swapoff "/dev/zram$ZRAM" 2>/dev/null
		echo "$ZRAM" > /sys/class/zram-control/hot_remove
	fi
	capture_cleanup
}
trap devices_cleanup EXIT
host_state > "$WORK/state.before"
ran=0

# a swap file on the build tree's filesystem
SWAPFILE="$WORK/swapfile"
dd if=/dev/zero of="$SWAPFILE" bs=1M count=128 status=none && chmod 600 "$SWAPFILE" &&
	mkswap "$SWAPFILE" > /dev/null
if swapon -p 5 "$SWAPFILE" 2>/dev/null; then
	ran=1
	host_state > "$WORK/state.file"
	capture_workload "$WORK/file" -- sh -c "$(workload mb=64 accesses=20000 seed=23)"
	check_eq "$?" 0 "swap file: exit status"
	check_host_restored "$WORK/state.file" "after a swap-file capture"
	dev=$(stat -c %d "$SWAPFILE")
	grep -q "^swap_device path=$SWAPFILE dev=[0-9]*:[0-9]* type=file " "$WORK/file/meta.txt" ||
		fail "swap file: no swap_device line"
	# the file's place among the swap_device lines names its extents
	area=$(awk -v p="path=$SWAPFILE" '$1 == "swap_device" { if ($2 == p) { print n + 0; exit } n++ }' "$WORK/file/meta.txt")
	grep -q "^extent area=$area first_slot=0 " "$WORK/file/meta.txt" || fail "swap file: no extents"
	# the extents cover every slot
	check_eq "$(awk -v a="area=$area" '$1 == "extent" && $2 == a { split($4, x, "="); n += x[2] } END { print n }' "$WORK/file/meta.txt")" \
		"$(sed -n "s|^swap_device path=$SWAPFILE .* slots=\([0-9]*\) .*|\1|p" "$WORK/file/meta.txt")" \
		"swap file: slots in extents"
	check_counts "$WORK/file" "swap-file capture"
	swapoff "$SWAPFILE"
	SWAPFILE=
else
	echo "note: this filesystem takes no swap files; swap-file case skipped"
	SWAPFILE=
fi

# zram: synchronous, so no readahead and only queue/complete at the block layer
if [ -w /sys/class/zram-control/hot_add ]; then
	ran=1
	ZRAM=$(cat /sys/class/zram-control/hot_add)
	echo 256M > "/sys/block/zram$ZRAM/disksize" && mkswap "/dev/zram$ZRAM" > /dev/null &&
		swapon -p 5 "/dev/zram$ZRAM" || fail "cannot set up zram swap"
	host_state > "$WORK/state.zram"
	capture_workload "$WORK/zram" -- sh -c "$(workload mb=64 accesses=20000 seed=29)"
	check_eq "$?" 0 "zram: exit status"
	check_host_restored "$WORK/state.zram" "after a zram capture"
	grep -q "^swap_device path=/dev/zram$ZRAM dev=[0-9]*:$ZRAM type=partition .* sync=1 " "$WORK/zram/meta.txt" ||
		fail "zram: not recorded as a synchronous device"
	check_counts "$WORK/zram" "zram capture"
	# with zram the only swap area, no fault goes through readahead
	if [ "$(grep -c '^swap_device ' "$WORK/zram/meta.txt")" = 1 ]; then
		check_eq "$(meta_delta "$WORK/zram/meta.txt" swap_ra)" 0 "zram: no readahead"
	fi
	swapoff "/dev/zram$ZRAM"
	echo "$ZRAM" > /sys/class/zram-control/hot_remove
	ZRAM=
else
	echo "note: no zram-control; zram case skipped"
fi
[ "$ran" = 1 ] || skip "neither swap files nor zram are available"
check_host_restored "$WORK/state.before" "after all device cases"
finish
