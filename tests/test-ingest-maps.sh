#!/bin/bash
# The memory maps a capture records of its target (meta.txt "maps" lines,
# maps/PID-start.txt and maps/PID-end.txt) are ingested into table vma, and
# VMA readahead is replayed inside them: a fault falls in its task's
# mapping of the last copy of the maps, else of the first, else its VMA is
# guessed from fault addresses.  Built on the bundled sample with maps
# written for its task (the shared captures predate maps), so the VMAs are
# known: the workload's buffer, which only the last copy holds, one narrow
# mapping of the first copy, and a part of the buffer in neither.  A
# missing maps file is a warning; a damaged one an error naming its line.
# A thread's faults take its process's maps (meta.txt "threads" lines).
. "$(dirname "$0")/lib.sh"

SAMPLE="$SWT_SOURCE_DIR/samples/rnd-1dev-pc0"
PLAIN="$WORK/plain.db"
"$SWAPTRACE" ingest -q -o "$PLAIN" "$SAMPLE" || { fail "ingest the sample"; finish; }
pid=$(sqlite3 "$PLAIN" "SELECT pid FROM swap_in WHERE demand = 1 GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
# the buffer: the pages of the task's densest 256 MiB of faults
read -r lo hi <<< "$(sqlite3 -separator ' ' "$PLAIN" "SELECT min(address), max(address) + 4096 FROM swap_in
	WHERE pid = $pid AND address >> 28 = (SELECT address >> 28 FROM swap_in WHERE pid = $pid
	GROUP BY address >> 28 ORDER BY count(*) DESC LIMIT 1)")"
[ -n "$lo" ] || { fail "no fault addresses in the sample"; finish; }

make_capture() { # dir: the sample with maps for $pid
	mkdir -p "$1/maps"
	cp "$SAMPLE/trace.dat" "$1/"
	sed "1a maps pid=$pid exe=/usr/local/bin/swap load start=maps/$pid-start.txt end=maps/$pid-end.txt" \
		"$SAMPLE/meta.txt" > "$1/meta.txt"
	# first copy: one mapping of 16 pages inside what becomes the buffer
	printf '%x-%x rw-p 00000000 00:00 0 \n' $((lo + 4096 * 64)) $((lo + 4096 * 80)) > "$1/maps/$pid-start.txt"
	printf '%x-%x r-xp 00001000 08:01 1234                       /usr/local/bin/swap load\n' \
		$((0x400000)) $((0x401000)) >> "$1/maps/$pid-start.txt"
	# last copy: the buffer less its first 1088 pages (there only the first
	# copy's 16 pages hold faults; the rest fall in no mapping)
	{
		printf '%x-%x r-xp 00001000 08:01 1234                       /usr/local/bin/swap load\n' \
			$((0x400000)) $((0x401000))
		printf '%x-%x rw-p 00000000 00:00 0\n' $((lo + 4096 * 64 + 4096 * 1024)) "$hi"
		printf '%x-%x rw-p 00000000 00:00 0                          [stack]\n' \
			$((0x7ffd00000000)) $((0x7ffd00021000))
	} > "$1/maps/$pid-end.txt"
}

CAP="$WORK/cap"
make_capture "$CAP"
DB="$WORK/maps.db"
"$SWAPTRACE" ingest -q -o "$DB" "$CAP" 2> "$WORK/err.txt" || fail "ingest with maps: $(cat "$WORK/err.txt")"
check_eq "$(wc -c < "$WORK/err.txt")" 0 "ingest with maps: nothing on stderr"
check_eq "$(sqlite3 "$DB" "SELECT group_concat(snapshot || ':' || perms || ':' || coalesce(path, '-'), ' ') FROM
	(SELECT * FROM vma WHERE pid = $pid ORDER BY snapshot DESC, start)")" \
	"start:r-xp:/usr/local/bin/swap load start:rw-p:- end:r-xp:/usr/local/bin/swap load end:rw-p:- end:rw-p:[stack]" \
	"vma rows: snapshot, permissions and path"
"$SWAPTRACE" info "$DB" > "$WORK/info.txt" || fail "info with maps"
grep -qx "Memory maps: 5 mappings of 1 task (table vma; VMA replay takes its bounds from them)" "$WORK/info.txt" ||
	fail "info does not count the maps: $(grep -i maps "$WORK/info.txt")"
check_eq "$(sqlite3 "$DB" "SELECT start = $((lo + 4096 * 64 + 4096 * 1024)) AND end = $hi FROM vma
	WHERE snapshot = 'end' AND perms = 'rw-p' AND path IS NULL")" 1 "the buffer's bounds"

# where each fault falls, counted independently of the replay
in_end=$(sqlite3 "$DB" "SELECT count(*) FROM swap_in s WHERE demand = 1 AND address IS NOT NULL AND EXISTS
	(SELECT 1 FROM vma v WHERE v.pid = s.pid AND v.snapshot = 'end' AND s.address >= v.start AND s.address < v.end)")
in_start=$(sqlite3 "$DB" "SELECT count(*) FROM swap_in s WHERE demand = 1 AND address IS NOT NULL AND NOT EXISTS
	(SELECT 1 FROM vma v WHERE v.pid = s.pid AND v.snapshot = 'end' AND s.address >= v.start AND s.address < v.end)
	AND EXISTS (SELECT 1 FROM vma v WHERE v.pid = s.pid AND v.snapshot = 'start' AND s.address >= v.start AND s.address < v.end)")
with_address=$(sqlite3 "$DB" "SELECT count(*) FROM swap_in WHERE demand = 1 AND address IS NOT NULL")
[ "$in_end" -gt 1000 ] && [ "$in_start" -gt 0 ] && [ $((with_address - in_end - in_start)) -gt 0 ] ||
	fail "the maps do not split the faults three ways: $in_end, $in_start, $with_address"
"$SWAPTRACE" replay --no-store -p vma -c 3 "$DB" > "$WORK/maps.txt" || fail "replay with maps"
check_eq "$(head -1 "$WORK/maps.txt")" \
	"# VMA bounds: $((in_end + in_start)) faults in the capture's memory maps, $((with_address - in_end - in_start)) guessed from fault addresses" \
	"replay says where the VMA bounds came from"
# the bounds matter: VMA readahead reads differently than with guessed ones
"$SWAPTRACE" replay --no-store -p vma -c 3 "$PLAIN" > "$WORK/plain.txt" || fail "replay without maps"
grep -q "^# VMA bounds" "$WORK/plain.txt" && fail "a capture without maps claims VMA bounds from maps"
[ "$(grep '^vma ' "$WORK/maps.txt")" != "$(grep '^vma ' "$WORK/plain.txt")" ] ||
	fail "VMA bounds from the maps changed nothing"
# ... and the replay stays exact across its paths
SWT_TEST_NO_FAST_PATH=1 "$SWAPTRACE" replay --no-store --json -p vma -p auto -c 3 "$DB" > "$WORK/slow.json" &&
	"$SWAPTRACE" replay --no-store --json -p vma -p auto -c 3 "$DB" > "$WORK/fast.json" ||
	fail "replay --json with maps"
cmp -s "$WORK/slow.json" "$WORK/fast.json" || fail "fast and general paths differ with maps"

# the same maps filed under a process of which the faulting task is a
# thread: task.tgid says so, and the replay is the same as above (its
# faults' bounds were all guessed: the maps were keyed by the thread id)
proc=$((pid + 1000000))
make_thread_capture() { # dir
	make_capture "$1"
	mv "$1/maps/$pid-start.txt" "$1/maps/$proc-start.txt"
	mv "$1/maps/$pid-end.txt" "$1/maps/$proc-end.txt"
	sed -i "s|^maps pid=$pid .*|maps pid=$proc exe=/usr/local/bin/swap load start=maps/$proc-start.txt end=maps/$proc-end.txt\nthreads pid=$proc tids=$((pid - 1)),$pid|" \
		"$1/meta.txt"
}
CAPT="$WORK/capt"
make_thread_capture "$CAPT"
"$SWAPTRACE" ingest -q -o "$WORK/thread.db" "$CAPT" 2> "$WORK/err.txt" ||
	fail "ingest with a threads line: $(cat "$WORK/err.txt")"
check_eq "$(sqlite3 "$WORK/thread.db" "SELECT group_concat(pid || ':' || tgid || ':' || (comm IS NOT NULL), ' ')
	FROM (SELECT * FROM task WHERE tgid IS NOT NULL ORDER BY pid)")" \
	"$((pid - 1)):$proc:0 $pid:$proc:1 $proc:$proc:0" "threads: task rows (the trace's name kept)"
"$SWAPTRACE" replay --no-store -p vma -c 3 "$WORK/thread.db" > "$WORK/thread.txt" || fail "replay with threads"
"$SWAPTRACE" info "$WORK/thread.db" | grep -qx "Memory maps: 5 mappings of 1 task, whose 2 other threads share them (table vma; VMA replay takes its bounds from them)" ||
	fail "info does not count the threads: $("$SWAPTRACE" info "$WORK/thread.db" | grep -i maps)"
# ... and one thread in the singular ("whose 1 other thread share them")
cp "$WORK/thread.db" "$WORK/one-thread.db"
sqlite3 "$WORK/one-thread.db" "UPDATE task SET tgid = pid WHERE pid = $((pid - 1))"
"$SWAPTRACE" info "$WORK/one-thread.db" | grep -qx "Memory maps: 5 mappings of 1 task, whose 1 other thread shares them (table vma; VMA replay takes its bounds from them)" ||
	fail "info of one thread: $("$SWAPTRACE" info "$WORK/one-thread.db" | grep -i maps)"
# info's who swapped in counts the thread's pages for its process, named
# after the thread (the process has no name in the trace)
comm=$(sqlite3 "$WORK/thread.db" "SELECT comm FROM task WHERE pid = $pid")
n=$(sqlite3 "$WORK/thread.db" "SELECT count(*) FROM swap_in WHERE pid = $pid")
all=$(sqlite3 "$WORK/thread.db" "SELECT count(DISTINCT pid) FROM swap_in WHERE pid IS NOT NULL AND pid != $pid")
"$SWAPTRACE" info "$WORK/thread.db" > "$WORK/thread-info.txt"
grep -qE "^ +$proc $comm +$n pages\$" "$WORK/thread-info.txt" ||
	fail "info: the process's swap-ins: $(grep -A6 'swapped in for' "$WORK/thread-info.txt")"
grep -q "^  swapped in for $((all + 1)) process" "$WORK/thread-info.txt" ||
	fail "info: processes that swapped in: $(grep 'swapped in for' "$WORK/thread-info.txt")"
check_eq "$(cat "$WORK/thread.txt")" "$(cat "$WORK/maps.txt")" "a thread's replay with its process's maps"
# damaged threads lines: one line naming meta.txt, no database
for bad in "tids=" "tids=1,,2" "tids=1,x" "tids=-3" "tids=1 2" "tids= 6" "tids=+6" "tids=6," "pids=1" ""; do
	rm -rf "$CAPT"
	make_thread_capture "$CAPT"
	sed -i "s/^threads pid=$proc .*/threads pid=$proc${bad:+ $bad}/" "$CAPT/meta.txt"
	"$SWAPTRACE" ingest -q -o "$WORK/bad.db" "$CAPT" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"1:swaptrace: ingest: '$CAPT/meta.txt': line 3: bad threads line: expected pid=N tids=T1,T2,..." \
		"threads line '$bad'"
	[ -e "$WORK/bad.db" ] && fail "a database was left behind for threads line '$bad'"
done

# a missing maps file: a warning, the VMAs of its copy guessed
CAP2="$WORK/cap2"
make_capture "$CAP2"
rm "$CAP2/maps/$pid-end.txt"
"$SWAPTRACE" ingest -q -o "$WORK/missing.db" "$CAP2" 2> "$WORK/err.txt" || fail "ingest with a maps file missing"
check_eq "$(cat "$WORK/err.txt")" \
	"swaptrace: ingest: warning: '$CAP2/maps/$pid-end.txt' is missing: VMA bounds of pid $pid are inferred from its faults" \
	"warning for a missing maps file"
check_eq "$(sqlite3 "$WORK/missing.db" "SELECT count(*) FROM vma WHERE snapshot = 'end'")" 0 "no rows from a missing file"

# a damaged maps file: one line naming file and line, no database
# (a number is its digits only: strtoull took blanks, signs and "0x", an
# offset of -1 stored as 2^63 - 1; and the permissions are the kernel's)
for bad in "zz-10 rw-p 0 00:00 0" "2000-1000 rw-p 00000000 00:00 0" "1000-2000 rw-p" "1000-2000 rwxp 0 00:00 x" \
	" 1000-2000 rw-p 0 00:00 0" "+1000-2000 rw-p 0 00:00 0" "0x1000-0x2000 rw-p 0 00:00 0" "1000- 2000 rw-p 0 00:00 0" \
	"1000-2000 rw-p -1 00:00 0" "1000-2000 rw-p 0x10 00:00 0" "1000-2000 zzzz 0 00:00 0" "1000-2000 rw-p 0 -1:0 0" \
	"1000-2000 rw-p 0 00:00 -1" "1000-2000 rw-p 0 00:00 +1"; do
	CAP3="$WORK/cap3"
	rm -rf "$CAP3"
	make_capture "$CAP3"
	printf '%s\n' "$bad" >> "$CAP3/maps/$pid-start.txt"
	"$SWAPTRACE" ingest -q -o "$WORK/bad.db" "$CAP3" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?" 1 "exit status for maps line '$bad'"
	check_eq "$(cat "$WORK/err.txt")" \
		"swaptrace: ingest: '$CAP3/maps/$pid-start.txt': line 3: not a /proc/PID/maps line" \
		"error for maps line '$bad'"
	[ -e "$WORK/bad.db" ] && fail "a database was left behind for maps line '$bad'"
done
# a maps file that is not a file: one line naming it, no database (a
# FIFO hung ingest, a directory was a bare read error; a symlink to
# /dev/zero, one endless line read into memory, is outside the capture, below)
for kind in fifo dir; do
	CAP3="$WORK/cap3"
	rm -rf "$CAP3"
	make_capture "$CAP3"
	rm "$CAP3/maps/$pid-end.txt"
	case $kind in
	fifo) mkfifo "$CAP3/maps/$pid-end.txt";;
	dir) mkdir "$CAP3/maps/$pid-end.txt";;
	esac
	timeout 60 "$SWAPTRACE" ingest -q -o "$WORK/bad.db" "$CAP3" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"1:swaptrace: ingest: '$CAP3/maps/$pid-end.txt': not a regular file" "maps file that is a $kind"
	[ -e "$WORK/bad.db" ] && fail "a database was left behind for a maps file that is a $kind"
done
# a damaged maps line in meta.txt: one line naming meta.txt and its line
# (it quoted the line, where other meta.txt errors give its number), no database
CAP4="$WORK/cap4"
for bad in "pid=x$pid " "pid=$pid exe=/x end=maps/$pid-end.txt" "pid=$pid exe=/x start= end=maps/$pid-end.txt"; do
	rm -rf "$CAP4"
	make_capture "$CAP4"
	sed -i "s|^maps pid=$pid .*|maps $bad|" "$CAP4/meta.txt"
	"$SWAPTRACE" ingest -q -o "$WORK/bad.db" "$CAP4" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"1:swaptrace: ingest: '$CAP4/meta.txt': line 2: bad maps line: expected pid=N exe=PATH start=FILE end=FILE" \
		"maps line 'maps $bad'"
	[ -e "$WORK/bad.db" ] && fail "a database was left behind for maps line 'maps $bad'"
done
# a maps file outside the capture directory (an absolute path, a ".."):
# ingest read any file on the host as a maps snapshot; one line naming
# meta.txt's line, no database
printf '1000-2000 rw-p 00000000 00:00 0\n' > "$WORK/outside.txt"
for file in "$WORK/outside.txt" "../outside.txt" "maps/../../outside.txt"; do
	rm -rf "$CAP4" "$WORK/bad.db"
	make_capture "$CAP4"
	sed -i "s|start=maps/$pid-start.txt|start=$file|" "$CAP4/meta.txt"
	"$SWAPTRACE" ingest -q -o "$WORK/bad.db" "$CAP4" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"1:swaptrace: ingest: '$CAP4/meta.txt': line 2: maps file '$file' is not inside the capture directory (a path below it without '..', as maps/N-start.txt)" \
		"maps file '$file'"
	[ -e "$WORK/bad.db" ] && fail "a database was left behind for maps file '$file'"
done
# ... or a symlink inside it that leads out of it
for target in "$WORK/outside.txt" /dev/zero; do
	rm -rf "$CAP4" "$WORK/bad.db"
	make_capture "$CAP4"
	ln -sf "$target" "$CAP4/maps/$pid-start.txt"
	"$SWAPTRACE" ingest -q -o "$WORK/bad.db" "$CAP4" > /dev/null 2> "$WORK/err.txt"
	check_eq "$?:$(cat "$WORK/err.txt")" \
		"1:swaptrace: ingest: '$CAP4/meta.txt': line 2: maps file 'maps/$pid-start.txt' is not inside the capture directory (a symlink to '$(realpath "$target")')" \
		"maps file symlinked to '$target'"
	[ -e "$WORK/bad.db" ] && fail "a database was left behind for a maps file symlinked to '$target'"
done
# a symlink that stays inside is read
rm -rf "$CAP4"
make_capture "$CAP4"
mv "$CAP4/maps/$pid-start.txt" "$CAP4/start-copy.txt"
ln -s ../start-copy.txt "$CAP4/maps/$pid-start.txt"
"$SWAPTRACE" ingest -q -o "$WORK/inside.db" "$CAP4" 2> "$WORK/err.txt" ||
	fail "a maps file symlinked inside the capture: $(cat "$WORK/err.txt")"
check_eq "$(sqlite3 "$WORK/inside.db" "SELECT count(*) FROM vma WHERE snapshot = 'start'")" 2 \
	"the rows of a maps file symlinked inside the capture"
finish
