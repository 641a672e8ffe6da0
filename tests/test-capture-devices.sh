#!/bin/bash
# Swap areas other than a whole loop device: a disk partition (block events
# name the whole disk, at sectors offset by the partition's start), a swap
# file (its slots mapped through FIEMAP extents onto the filesystem's disk,
# which also carries other I/O) and zram (a synchronous device: no
# readahead, bio-based).  The
# swap pages ingest derives through the recorded layout equal the pswpin and
# pswpout deltas, so the layout in meta.txt is right.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/capture-env.sh"
require_capture_env
make_cgroup 51
ZRAM=
SWAPFILE=
DISK=

devices_cleanup() {
	[ -n "$DISK" ] && swapoff "${DISK}p1" 2>/dev/null
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

# A partition that does not start at sector 0 of a loop disk, written as an
# MBR by hand (no partitioning tool needed), with a second partition after
# it whose I/O the capture must not count.
PART_START=2048
PART_SECTORS=409600
truncate -s 300M "$WORK/disk.img" && python3 - "$WORK/disk.img" $PART_START $PART_SECTORS <<'PY'
import struct, sys
path, start, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "r+b") as f:
    for i, (first, count, kind) in enumerate(((start, size, 0x82), (start + size, 102400, 0x83))):
        f.seek(446 + 16 * i)  # CHS fields unused: 0xfe 0xff 0xff
        f.write(struct.pack("<B3sB3sII", 0, b"\xfe\xff\xff", kind, b"\xfe\xff\xff", first, count))
    f.seek(510)
    f.write(b"\x55\xaa")
PY
DISK=$(losetup -f --show -P --direct-io=on "$WORK/disk.img") || skip "losetup failed (no free loop device?)"
LOOPS+=("$DISK")
for _ in 1 2 3 4 5 6 7 8 9 10; do
	[ -e "/sys/class/block/${DISK#/dev/}p1/start" ] && break
	sleep 0.2
done
# without udev the partition's node may be missing; partx adds it
[ -b "${DISK}p1" ] || partx -a "$DISK" 2> /dev/null
if [ -b "${DISK}p1" ] && [ -e "/sys/class/block/${DISK#/dev/}p1/start" ]; then
	ran=1
	mkswap "${DISK}p1" > /dev/null && swapon -p 5 "${DISK}p1" || fail "cannot set up partition swap"
	host_state > "$WORK/state.part"
	disk_dev=$(cat "/sys/block/${DISK#/dev/}/dev")
	for mode in tracepoints blktrace; do
		args=()
		[ "$mode" = blktrace ] && args=(--blktrace)
		[ "$mode" = blktrace ] && ! grep -qw blk "$TRACEFS/available_tracers" && continue
		# other I/O on the same disk, outside the swap partition, while the capture runs
		capture_workload "$WORK/part-$mode" "${args[@]}" -- sh -c \
			"dd if=${DISK}p2 of=/dev/null bs=64k count=200 iflag=direct status=none; $(workload mb=64 accesses=20000 seed=31)"
		check_eq "$?" 0 "partition ($mode): exit status"
		check_host_restored "$WORK/state.part" "after a partition capture ($mode)"
		grep -q "^swap_device path=${DISK}p1 dev=$disk_dev type=partition .* start=$PART_START " \
			"$WORK/part-$mode/meta.txt" ||
			fail "partition ($mode): swap_device line: $(grep '^swap_device' "$WORK/part-$mode/meta.txt")"
		check_counts "$WORK/part-$mode" "partition capture ($mode)"
		# every swap read lies inside the partition, at slot (sector - start) / 8 from slot 1 up
		check_eq "$(sqlite3 "$WORK/part-$mode.db" "SELECT count(*) FROM swap_in WHERE slot < 1 OR slot >= $((PART_SECTORS / 8))")" 0 \
			"partition ($mode): swap-in slots inside the partition"
		# and each read's first slot is its bio's disk sector less the partition's start
		check_eq "$(sqlite3 "$WORK/part-$mode.db" "SELECT DISTINCT b.sector - 8 * min(s.slot) FROM swap_in s JOIN bio b ON b.id = s.bio_id GROUP BY b.id")" \
			"$PART_START" "partition ($mode): slot = (sector - partition start) / 8"
	done
	swapoff "${DISK}p1"
else
	echo "note: this kernel shows no partitions of loop devices; partition case skipped"
fi

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
	# bio-based: no requests, so its only completions are block_bio_complete
	# (not recorded, every swap I/O on zram looked as if it never completed)
	zdev=$(cat "/sys/block/zram$ZRAM/dev")
	for rw in reads writes; do
		check_eq "$(json_get "$WORK/zram.json" "[x['${rw}_completed'] for x in d['devices'] if x['dev'] == '$zdev'][0]")" \
			"$(json_get "$WORK/zram.json" "[x['${rw}_queued'] for x in d['devices'] if x['dev'] == '$zdev'][0]")" \
			"zram: $rw completed vs queued"
	done
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
