#!/bin/bash
# The sample workload's access patterns, as a capture sees them: with
# align=page every random read is one page, so consecutive swap faults are
# almost never on neighbouring pages; with align=byte each read starts
# inside a page and spans the next one too, so many consecutive faults are
# (the shared captures' random workload faulted that way: about a quarter
# of them).  Bad arguments are a usage error.  A buffer swapped out and
# written to a pipe swaps in through the kernel's faults, which are recorded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/capture-env.sh"

for bad in write=101 align=word align= mode=zigzag mb=0 speed=3; do
	"$SWAPLOAD" "$bad" > /dev/null 2> "$WORK/usage.err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "swapload $bad: exit $rc, expected 2"
	grep -q "usage: swapload\|out of range" "$WORK/usage.err" || fail "swapload $bad: no usage line"
done
grep -qF "[align=page|byte]" "$WORK/usage.err" || fail "the usage line does not name align="

require_capture_env
add_loop_swap 512 5 || fail "cannot set up loop swap"
make_cgroup 51

# share of consecutive demand swap-ins whose pages are virtual neighbours
neighbours() { # db
	sqlite3 "$1" "WITH f AS (SELECT row_number() OVER (ORDER BY ts, id) AS k, address / 4096 AS vp
	                         FROM swap_in WHERE demand = 1 AND address IS NOT NULL)
	              SELECT printf('%d %d', sum(abs(b.vp - a.vp) = 1), count(*)) FROM f a JOIN f b ON b.k = a.k + 1"
}

echo 0 > /proc/sys/vm/page-cluster	# every swap read is a demand read; restored on exit
for align in page byte; do
	capture_workload "$WORK/$align" -q -- sh -c "$(workload mb=64 accesses=20000 seed=5 align=$align)" ||
		{ cat "$WORK/err.txt" >&2; fail "capture with align=$align failed"; continue; }
	grep -q "^mode=rnd mb=64 accesses=20000 " "$WORK/out.txt" || fail "align=$align: no summary line"
	# the cgroup the workload joined right after it started, with its limit
	# (it was sampled once a second: swaptrace's own cgroup for short runs,
	# or the root when the sample found the command exited but not reaped)
	check_eq "$(meta_value "$WORK/$align/meta.txt" memcg) $(meta_value "$WORK/$align/meta.txt" mem_limit_bytes)" \
		"$CGROUP_DIR $((51 << 20))" "align=$align: the workload's memory cgroup and limit"
	swt_ingest -q -o "$WORK/$align.db" "$WORK/$align" || { fail "ingest align=$align"; continue; }
	read -r adjacent total < <(neighbours "$WORK/$align.db")
	echo "align=$align: $adjacent of $total consecutive swap faults on neighbouring pages"
	[ "${total:-0}" -ge 2000 ] || { fail "align=$align: only ${total:-0} swap faults"; continue; }
	if [ "$align" = page ]; then
		[ "$adjacent" -le $((total / 100)) ] || fail "align=page: $adjacent of $total neighbours"
	else
		[ "$adjacent" -ge $((total / 20)) ] || fail "align=byte: only $adjacent of $total neighbours"
	fi
done

# Pages swapped in by a write fault lose their slot (mm/memory.c), which
# replay models (write-frees.c): the kernel's own trace must show it -- such
# a slot is written before it is read again, where a page swapped in by a
# read keeps its slot and is read back from it -- and replay must find the
# frees.  write=50: half the pieces are stored to, stores first.
if capture_workload "$WORK/write" -q -- sh -c "$(workload mb=64 accesses=20000 seed=7 write=50)" &&
   swt_ingest -q -o "$WORK/write.db" "$WORK/write"; then
	grep -q " write=50\$" "$WORK/out.txt" || fail "write=50: the summary line does not say it"
	# per swap-in on its fault's own page: did that fault write, and is the slot read
	# again before any write to it?
	read -r wrote wrote_reread kept kept_reread < <(sqlite3 "$WORK/write.db" "
		WITH s AS (SELECT s.id, s.ts, s.area_id, s.slot, f.error_code & 2 AS w
		             FROM swap_in s JOIN fault f ON f.id = s.fault_id
		            WHERE s.address = f.address & ~4095),
		     r AS (SELECT s.w, EXISTS (SELECT 1 FROM swap_in n WHERE n.area_id = s.area_id
		                  AND n.slot = s.slot AND n.ts > s.ts AND n.ts < coalesce((SELECT min(o.ts)
		                  FROM swap_out o WHERE o.area_id = s.area_id AND o.slot = s.slot
		                  AND o.ts > s.ts), 9e18)) AS again FROM s)
		SELECT printf('%d %d %d %d', sum(w > 0), sum(w > 0 AND again), sum(w = 0), sum(w = 0 AND again))
		  FROM r")
	echo "write=50: $wrote swap-ins by write faults, $wrote_reread of them read again from their slot;" \
	     "$kept by read faults, $kept_reread read again"
	[ "${wrote:-0}" -ge 2000 ] && [ "${kept:-0}" -ge 2000 ] ||
		fail "write=50: too few swap-ins (${wrote:-0} by writes, ${kept:-0} by reads)"
	# a slot a write freed is never read back; kept slots are, often (a clean page evicted again)
	check_eq "${wrote_reread:-x}" 0 "write=50: slots of pages swapped in by a write, read again"
	[ "${kept_reread:-0}" -ge $((kept / 20)) ] ||
		fail "write=50: only ${kept_reread:-0} of $kept kept slots read again: the check above proves nothing"
	frees=$(swt replay --no-store -p none -c 0 "$WORK/write.db" 2> /dev/null |
		sed -n 's/^# \([0-9]*\) swap slots\{0,1\} freed by write faults .*/\1/p')
	echo "write=50: replay frees ${frees:-no} slots"
	# every write swap-in, and the few write-protect faults after a read one
	[ "${frees:-0}" -ge "$wrote" ] && [ "${frees:-0}" -le $((wrote + wrote / 20)) ] ||
		fail "write=50: replay freed ${frees:-no} slots for $wrote swap-ins by write faults"
else
	cat "$WORK/err.txt" >&2
	fail "capture of the writing workload failed"
fi

# A buffer swapped out and then written to a pipe: the kernel faults it in
# (copy_from_user), and only page_fault_kernel says where.  Without it the
# swap-ins were tied to the task's last user fault, at another address.
cat > "$WORK/pipe-writer.py" <<'PY'
import os, random
buf = bytearray(64 << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
mv, pages = memoryview(buf), len(buf) // 4096
r, w = os.pipe()
if os.fork() == 0:
    os.close(w)
    while os.read(r, 1 << 16):
        pass
    os._exit(0)
os.close(r)
rng = random.Random(5)
for _ in range(20000):
    p = rng.randrange(pages)
    os.write(w, mv[p * 4096:(p + 1) * 4096])
os.close(w)
os.wait()
PY
if capture_workload "$WORK/pipe" -q -- sh -c "echo \$\$ > '$CGROUP_DIR/cgroup.procs' && exec python3 '$WORK/pipe-writer.py'" &&
   swt_ingest -q -o "$WORK/pipe.db" "$WORK/pipe"; then
	# swap-ins whose fault was the kernel's (x86 error code bit 2 clear), on their page, within 1 ms
	read -r kernel total < <(sqlite3 "$WORK/pipe.db" "SELECT printf('%d %d',
		sum(f.error_code & 4 = 0 AND s.address = f.address & ~4095 AND s.ts - f.ts < 1000000), count(*))
		FROM swap_in s LEFT JOIN fault f ON f.id = s.fault_id")
	echo "pipe writer: $kernel of $total swap-ins tied to the kernel's fault on their page"
	[ "${total:-0}" -ge 2000 ] || fail "pipe writer: only ${total:-0} swap-ins"
	# the rest are the interpreter's own pages, faulted back in user mode (a sixth of them here)
	[ "${kernel:-0}" -ge $((total * 2 / 3)) ] || fail "pipe writer: only ${kernel:-0} of $total swap-ins tied to a kernel fault"
	sqlite3 "$WORK/pipe.db" "SELECT count(*) FROM event WHERE name = 'page_fault_kernel'" |
		grep -qx 0 || fail "pipe writer: kernel faults on kernel addresses recorded"
else
	cat "$WORK/err.txt" >&2
	fail "capture of the pipe writer failed"
fi

# Swap over half full frees a slot at every swap-in, whatever the fault
# (should_try_to_free_swap: vm_swap_full), which replay models from how full
# the capture's swap was (write-frees.c): the kernel's own trace must show
# it -- a slot a read fault swapped in from is written before it is read
# again -- and replay must free nearly every swap-in's slot.  96 MiB of
# pages in the 51 MiB cgroup put about 45 MiB on a 64 MiB device.  Only
# this device may be on: vm_swap_full counts every swap area's slots.
swapoff "$LOOP"
if [ "$(swapon --show=NAME --noheadings | wc -l)" -ne 0 ]; then
	echo "note: other swap areas are on: the over-half-full check needs its device alone, skipped"
elif ! add_loop_swap 64 5; then
	fail "cannot set up the 64 MiB loop swap"
elif capture_workload "$WORK/full" -q -- sh -c "$(workload mb=96 accesses=20000 seed=9)" &&
     swt_ingest -q -o "$WORK/full.db" "$WORK/full"; then
	# swap-ins by read faults on their page, and how many read their slot again before a write to it
	read -r reads reread < <(sqlite3 "$WORK/full.db" "
		WITH s AS (SELECT s.ts, s.area_id, s.slot FROM swap_in s JOIN fault f ON f.id = s.fault_id
		            WHERE s.address = f.address & ~4095 AND f.error_code & 2 = 0)
		SELECT printf('%d %d', count(*), coalesce(sum(EXISTS (SELECT 1 FROM swap_in n
		       WHERE n.area_id = s.area_id AND n.slot = s.slot AND n.ts > s.ts
		         AND n.ts < coalesce((SELECT min(o.ts) FROM swap_out o WHERE o.area_id = s.area_id
		                              AND o.slot = s.slot AND o.ts > s.ts), 9e18))), 0)) FROM s")
	echo "swap over half full: $reads swap-ins by read faults, $reread of them read again from their slot"
	[ "${reads:-0}" -ge 2000 ] || fail "swap over half full: only ${reads:-0} swap-ins by read faults"
	# (the first swap-ins may come before swap is half full)
	[ "${reread:-1}" -le $((reads / 100)) ] ||
		fail "swap over half full: $reread of $reads slots read again: the kernel kept them"
	faults=$(sqlite3 "$WORK/full.db" "SELECT count(*) FROM swap_in WHERE demand = 1")
	freed=$(swt replay --no-store -p none -c 0 "$WORK/full.db" 2> /dev/null |
		sed -n 's/^# \([0-9]*\) swap slots\{0,1\} freed at swap-in while swap was over half full.*/\1/p')
	echo "swap over half full: replay frees ${freed:-no} slots at the $faults swap-ins"
	[ "${freed:-0}" -ge $((faults * 9 / 10)) ] && [ "${freed:-0}" -le "$faults" ] ||
		fail "swap over half full: replay freed ${freed:-no} slots at $faults swap-ins"
else
	cat "$WORK/err.txt" >&2
	fail "capture of the workload on a small swap failed"
fi
finish
