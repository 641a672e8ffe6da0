#!/bin/bash
# Bad input: every case below must make `swaptrace ingest` exit with status 1
# and print exactly one line on stderr naming the file (and the byte offset
# where it is knowable), leave no database and no temporary file in the
# output directory, and leave a database already at the output path as it
# was.  The damaged files are real captures damaged on purpose; offsets in
# the expected messages come from tests/tracefile.py, which reads the
# formats independently of swaptrace.
. "$(dirname "$0")/lib.sh"
need_tool xz
need_tool trace-cmd
need_tool python3
need_tool sqlite3
find_captures

CAP=$CAPTURES/rnd-1dev-pc0
[ -f "$CAP/trace.dat" ] && [ -d "$CAP/blk" ] || skip "capture rnd-1dev-pc0 not found"
TF() { python3 "$SWT_SOURCE_DIR/tests/tracefile.py" "$@"; }
# a path as an extended regular expression matching only itself
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'; }
IN=$WORK/in
mkdir -p "$IN"
KEEP=$WORK/keep.db

# expect_fail NAME REGEX [ENV=VALUE...] -- INGEST-ARGS...
# Runs `swaptrace ingest -q -o DIR/cap.db INGEST-ARGS` twice: into an empty
# directory (nothing may be left in it) and over an existing database (it
# must be unchanged, with nothing beside it).  REGEX must match the whole
# single line on stderr.
expect_fail() {
	local name=$1 regex=$2 env=() out rc mode
	shift 2
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	for mode in new existing; do
		out=$WORK/out-$name-$mode
		rm -rf "$out" && mkdir "$out"
		[ "$mode" = existing ] && cp "$KEEP" "$out/cap.db"
		env "${env[@]}" "$SWAPTRACE" ingest -q -o "$out/cap.db" "$@" \
			>/dev/null 2>"$WORK/stderr"
		rc=$?
		check_stderr "$name ($mode output)" "$rc" 1 "^swaptrace: ingest: $regex\$"
		if [ "$mode" = new ]; then
			check_eq "$(ls -A "$out")" "" "$name: files left in the output directory"
		else
			cmp -s "$KEEP" "$out/cap.db" || fail "$name: the existing database was changed"
			check_eq "$(ls -A "$out")" "cap.db" "$name: files beside the existing database"
		fi
	done
}

check_stderr() { # what status expected-status regex   (reads $WORK/stderr)
	check_eq "$2" "$3" "$1: exit status"
	check_eq "$(wc -l < "$WORK/stderr")" 1 "$1: lines on stderr"
	grep -qE -- "$4" "$WORK/stderr" ||
		fail "$1: stderr '$(head -c 400 "$WORK/stderr")' does not match /$4/"
}

# --- the good inputs everything below is damaged from --------------------------
BLK=$(blk_input "$(basename "$CAP")")
# the first 4000 records of CPU 0's file: small, and a real trace
cut=$(TF blk-record "$BLK.blktrace.0" 4000)
head -c "$cut" "$BLK.blktrace.0" > "$IN/good.blktrace.0"
TD=$IN/trace.dat
cp "$CAP/trace.dat" "$TD" && chmod u+w "$TD"
TD_SIZE=$(stat -c %s "$TD")
# the existing database the failing runs must not touch; it also shows the
# undamaged inputs ingest
if ! "$SWAPTRACE" ingest -q -o "$KEEP" --swap 7:0 "$IN/good.blktrace.0"; then
	fail "the undamaged blktrace prefix does not ingest"
	finish
fi

damaged() { # NAME: a fresh copy of the good blktrace prefix
	cp "$IN/good.blktrace.0" "$IN/$1" && echo "$IN/$1"
}

damaged_td() { # NAME [SOURCE]: a fresh writable copy of a trace.dat
	cp "${2:-$TD}" "$IN/$1" && chmod u+w "$IN/$1" && echo "$IN/$1"
}

# CASE EVENT OLD NEW COMPLAINT: a copy whose format of block:EVENT has OLD
# edited into NEW (in the compressed event formats section, rewritten at the
# end of the file), refused as td-format-CASE with COMPLAINT (a regex), named
# where the format is in the decompressed section
format_damaged() {
	local f sect at

	f=$(damaged_td "$1.dat")
	read -r sect at <<< "$(TF td-section-edit "$f" 18 "$3" "$4" "name: $2\n")"
	expect_fail "td-format-$1" \
		"'$(re "$f")': the format of event block:$2 at offset $at of the decompressed event formats section at offset $sect $5: the format is damaged" \
		-- --swap 7:0 "$f"
}

# --- blktrace files --------------------------------------------------------------
r=$(TF blk-record "$IN/good.blktrace.0" 2500)
f=$IN/cut.blktrace.0
head -c $((r + 20)) "$IN/good.blktrace.0" > "$f"
expect_fail blk-truncated "'$(re "$f")': truncated record at offset $r" -- "$f"

r=$(TF blk-pdu-record "$IN/good.blktrace.0")
f=$IN/cut-pdu.blktrace.0
head -c $((r + 48 + 3)) "$IN/good.blktrace.0" > "$f"
expect_fail blk-truncated-pdu "'$(re "$f")': truncated record at offset $r \(PDU of 8 bytes\)" -- "$f"

# a set of per-CPU files whose second file is cut: the message names that file
mkdir -p "$IN/set"
cp "$IN/good.blktrace.0" "$IN/set/swap.blktrace.0"
r=$(TF blk-record "$BLK.blktrace.1" 1500)
head -c $((r + 7)) "$BLK.blktrace.1" > "$IN/set/swap.blktrace.1"
expect_fail blk-set-truncated "'$(re "$IN/set/swap.blktrace.1")': truncated record at offset $r" \
	-- "$IN/set/swap"

# a set with a CPU's file missing in the middle: NAME stopped at the gap and
# left the files past it out without a word (284 429 events of 573 990)
mkdir -p "$IN/gap"
cp "$IN/good.blktrace.0" "$IN/gap/swap.blktrace.0"
cp "$IN/good.blktrace.0" "$IN/gap/swap.blktrace.2"
expect_fail blk-set-gap "'$(re "$IN/gap/swap").blktrace.1' is missing but '$(re "$IN/gap/swap").blktrace.2' is there: a CPU's file of the set was lost or renamed; give the files one by one to read the others" \
	-- "$IN/gap/swap"

f=$(damaged magic-first)
TF patch "$f" 0 deadbeef
expect_fail blk-magic-first \
	"'$(re "$f")': not a trace.dat or blktrace file \(unrecognised magic at offset 0\)" -- "$f"
# a compressed file, as the shared captures ship their blktrace files:
# the message says how to unpack it
xz -c "$IN/good.blktrace.0" > "$IN/packed.blktrace.0.xz"
expect_fail blk-xz \
	"'$(re "$IN/packed.blktrace.0.xz")': not a trace.dat or blktrace file \(unrecognised magic at offset 0\): xz-compressed, decompress it first \(xz -dk\)" \
	-- "$IN/packed.blktrace.0.xz"

r=$(TF blk-record "$IN/good.blktrace.0" 1234)
f=$(damaged magic-later)
TF patch "$f" "$r" deadbeef
expect_fail blk-magic-later "'$(re "$f")': bad record magic 0xefbeadde at offset $r" -- "$f"

f=$(damaged version)
TF patch "$f" "$r" 09
expect_fail blk-version "'$(re "$f")': unsupported blktrace record version 9 at offset $r" -- "$f"

f=$(damaged version-first)
TF patch "$f" 0 06
expect_fail blk-version-first "'$(re "$f")': unsupported blktrace record version 6 at offset 0" -- "$f"

# action: low 16 bits (the basic action) of the little-endian u32 at +28
f=$(damaged action)
TF patch "$f" $((r + 28)) ff00
expect_fail blk-action "'$(re "$f")': unknown blktrace action 0x[0-9a-f]*00ff at offset $r" -- "$f"

# --- trace.dat: structure ---------------------------------------------------------
f=$IN/half.dat
head -c $((TD_SIZE / 2)) "$TD" > "$f"
expect_fail td-truncated \
	"'$(re "$f")': .* at offset [0-9]+ \([0-9]+ bytes\) runs past the end of the file \($((TD_SIZE / 2)) bytes\)" \
	-- "$f"

opt=$(TF td-options-field "$TD")
f=$(damaged_td options-past-end.dat)
TF patch64 "$f" "$opt" $((TD_SIZE + 4096))
expect_fail td-options-past-end \
	"'$(re "$f")': options section header at offset $((TD_SIZE + 4096)) \(16 bytes\) runs past the end of the file \($TD_SIZE bytes\)" \
	-- "$f"

f=$(damaged_td options-bogus.dat)
TF patch64 "$f" "$opt" 4096
expect_fail td-options-bogus "'$(re "$f")': section at offset 4096 should be options \(id 0\), has id [0-9]+" \
	-- "$f"

# the event formats section (option 18) pointing past the end, and at the
# header section (option 16's)
o18=$(TF td-option "$TD" 18)
f=$(damaged_td section-past-end.dat)
TF patch64 "$f" "$o18" $((TD_SIZE + 10))
expect_fail td-section-past-end \
	"'$(re "$f")': section at offset $((TD_SIZE + 10)) \(16 bytes\) runs past the end of the file \($TD_SIZE bytes\)" \
	-- "$f"

o16=$(TF td-option "$TD" 16)
header_sect=$(od -An -t u8 -j "$o16" -N 8 "$TD" | tr -d ' ')
f=$(damaged_td section-bogus.dat)
TF patch64 "$f" "$o18" "$header_sect"
expect_fail td-section-bogus \
	"'$(re "$f")': section at offset $header_sect has section id 16, expected 18" -- "$f"

# the header section's header_page text, which libtraceevent gives up on
# without a word, libtracecmd then reading every page with the commit
# count's size it was left with (exit 0 through swaptrace's own reader,
# which reads them as the file header says, and not through
# libtracecmd's); and its name, with which libtracecmd could not open the
# file ("damaged headers or sections", no offset).  Compressed, as
# captures are: rewritten at the end of the file (tracefile.py, with the
# zstd command).
if command -v zstd >/dev/null 2>&1; then
	f=$(damaged_td header-page-commit.dat)
	read -r sect at <<< "$(TF td-section-edit "$f" 16 '\tfield: local_t commit;\toffset:8;\tsize:8;' \
		'\tfield: local_t commit;\toffset:8;\tsize:3;')"
	expect_fail td-header-page-commit \
		"'$(re "$f")': header_page: the line at offset $at of the decompressed header section at offset $sect gives the commit count 3 bytes at offset 8, not 4 or 8 \(a long\) at 8" \
		-- "$f"
	f=$(damaged_td header-page-name.dat)
	read -r sect at <<< "$(TF td-section-edit "$f" 16 'header_page' 'header_pagX')"
	expect_fail td-header-page-name \
		"'$(re "$f")': expected 'header_page' at offset 0 of the decompressed header section at offset $sect" \
		-- "$f"
else
	echo "note: no zstd command: the compressed header section's cases are not run"
fi

# recorded with -C counter: TRACECLOCK (option 4) names "counter" in
# brackets.  Its timestamps are event counts, not nanoseconds.
o4=$(TF td-option "$TD" 4)
f=$(damaged_td counter-clock.dat)
printf 'local global [counter]' | dd of="$f" bs=1 seek="$o4" conv=notrunc status=none
expect_fail td-counter-clock \
	"'$(re "$f")': trace clock 'counter' at offset $((o4 + 14)) does not count nanoseconds \(record with -C local, global, mono or boot\)" \
	-- "$f"

# recorded on x86-tsc (cycles, not nanoseconds): refused as counter is ...
f=$(damaged_td tsc-clock.dat)
printf 'local global [x86-tsc]' | dd of="$f" bs=1 seek="$o4" conv=notrunc status=none
expect_fail td-tsc-clock \
	"'$(re "$f")': trace clock 'x86-tsc' at offset $((o4 + 14)) does not count nanoseconds \(record with -C local, global, mono or boot\)" \
	-- "$f"
# ... unless the file has trace-cmd's TSC2NSEC option (record --tsc2nsec:
# u32 multiplier, u32 shift, u64 offset), with which libtracecmd converts
# every timestamp to nanoseconds, and trace-cmd report shows them so.  Here
# the UNAME option (5) becomes a TSC2NSEC that doubles them (2048 >> 10):
# ingest takes the file, each fault at twice its time, at the time
# trace-cmd report gives.
o5=$(TF td-option "$TD" 5)
TF patch "$f" $((o5 - 6)) 0e00
TF patch "$f" "$o5" 000800000a0000000000000000000000
if "$SWAPTRACE" ingest -q -o "$WORK/tsc.db" --swap 7:0 "$f" 2>"$WORK/stderr" &&
	"$SWAPTRACE" ingest -q -o "$WORK/undoubled.db" --swap 7:0 "$TD" 2>>"$WORK/stderr"; then
	check_eq "$(sqlite3 "$WORK/tsc.db" "ATTACH '$WORK/undoubled.db' AS o;
		SELECT (SELECT count(*) FROM fault) = (SELECT count(*) FROM o.fault),
		       count(*) FROM fault t JOIN o.fault u USING (id) WHERE t.ts = 2 * u.ts")" \
		"1|$(sqlite3 "$WORK/undoubled.db" "SELECT count(*) FROM fault")" \
		"td-tsc2nsec: faults at twice their times"
	first=$(trace-cmd report -i "$f" 2>/dev/null | awk '/ page_fault_user: / { print $4; exit }')
	check_eq "$(sqlite3 "$WORK/tsc.db" "SELECT printf('%d.%06d:', ts / 1000000000, ts / 1000 % 1000000)
		FROM fault ORDER BY ts, id LIMIT 1")" "$first" "td-tsc2nsec: the first fault's time against trace-cmd report"
else
	fail "td-tsc2nsec: ingest refused it: $(head -c 400 "$WORK/stderr")"
fi

# the swt buffer's CPU 1 data said to lie past the end of the file: its
# chunks, after the 4-byte chunk count, run past it
e=$(TF td-cpu-entry "$TD" swt 1)
f=$(damaged_td cpu-past-end.dat)
TF patch64 "$f" $((e + 4)) $((TD_SIZE - 100))
expect_fail td-cpu-data-past-end \
	"'$(re "$f")': compressed CPU data at offset $((TD_SIZE - 96)) \([0-9]+ bytes\) runs past the end of the file \($TD_SIZE bytes\)" \
	-- "$f"

# the chunk count of swt's CPU 0 zeroed: the chunks left unread held its
# events, which went without a word (exit 0, a CPU's events gone)
read -r cpu0 cpu0size <<< "$(TF td-cpu "$TD" swt 0)"
f=$(damaged_td chunk-count.dat)
TF patch "$f" "$cpu0" 00000000
expect_fail td-chunk-count \
	"'$(re "$f")': buffer 'swt' CPU 0: its 0 chunks end at offset $((cpu0 + 4)), $cpu0size bytes before the end of its data \($cpu0size bytes at offset $cpu0\)" \
	-- "$f"
# ... or its size zeroed in the BUFFER option: no data declared where the
# next CPU's data starts 2 MB later
e=$(TF td-cpu-entry "$TD" swt 0)
f=$(damaged_td cpu-size-zero.dat)
TF patch64 "$f" $((e + 12)) 0
expect_fail td-cpu-size-zero \
	"'$(re "$f")': buffer 'swt' CPU 0 declares no data at offset $cpu0, but the next CPU's data starts [0-9]+ bytes later: its size is damaged" \
	-- "$f"

# swt's CPU 1 entry naming CPU 2 of a 2-CPU file (CPUCOUNT): its events
# were ingested as CPU 2's (exit 0); or naming CPU 0 again: libtracecmd
# could not open the file ("damaged headers or sections", no offset)
e=$(TF td-cpu-entry "$TD" swt 1)
f=$(damaged_td cpu-past-count.dat)
TF patch "$f" "$e" 02000000
expect_fail td-buffer-cpu-past-count \
	"'$(re "$f")': BUFFER option at offset $(TF td-option "$TD" 3 1) \(buffer 'swt'\): its entry at offset $e names CPU 2, past the file's 2 CPUs \(CPUCOUNT option at offset $(TF td-option "$TD" 8)\)" \
	-- "$f"
f=$(damaged_td cpu-twice.dat)
TF patch "$f" "$e" 00000000
expect_fail td-buffer-cpu-twice \
	"'$(re "$f")': BUFFER option at offset $(TF td-option "$TD" 3 1) \(buffer 'swt'\): its entry at offset $e names CPU 0, as its entry at offset $(TF td-cpu-entry "$TD" swt 0) does" \
	-- "$f"

# the link from the second options section to the third (the DONE option's
# next-section offset) zeroed: the third, holding swt's BUFFER option, was
# never read, and with it every event (exit 0, an empty database).  The
# first section's CPUSTATs (swt's CPU 0 the fourth) still name the buffer.
f=$(damaged_td options-chain-cut.dat)
TF patch64 "$f" "$(TF td-options-next "$TD" 1)" 0
expect_fail td-options-chain-cut \
	"'$(re "$f")': the CPUSTAT option at offset $(TF td-option "$TD" 2 3) declares [0-9]+ events read from buffer 'swt' CPU 0, but no BUFFER option says where they are: the file's options are damaged" \
	-- "$f"

# the third options section's DONE option linking back to the first: the
# options sections form a loop (said without an offset)
f=$(damaged_td options-loop.dat)
TF patch64 "$f" "$(TF td-options-next "$TD" 2)" "$(od -An -t u8 -j "$opt" -N 8 "$TD" | tr -d ' ')"
expect_fail td-options-loop \
	"'$(re "$f")': the DONE option at offset $(TF td-options-next "$TD" 2) links back to the options section at offset $(od -An -t u8 -j "$opt" -N 8 "$TD" | tr -d ' '): the options sections form a loop" \
	-- "$f"

# --- trace.dat: event data --------------------------------------------------------
# a zstd frame's magic destroyed (chunk 1 of CPU 0): swaptrace's own chunk
# reader names the chunk and its offset.  libtracecmd (the reader used when
# the file is not one the chunk reader takes) stops there without an error,
# and what it decoded falls short of what the file declares.
read -r cpu0 _ <<< "$(TF td-cpu "$TD" swt 0)"
c=$(TF td-chunk "$TD" swt 0 1)
f=$(damaged_td zstd-magic.dat)
TF patch "$f" $((c + 8)) deadbeef
expect_fail td-zstd-magic \
	"'$(re "$f")': buffer 'swt' CPU 0: chunk 1 at offset $c does not decompress to its [0-9]+ bytes \(zstd: [^)]+\)" \
	-- "$f"
expect_fail td-zstd-stops \
	"'$(re "$f")': buffer 'swt' CPU 0: decoding stopped after [0-9]+ events, before the end of its data \(offset $cpu0, [0-9]+ bytes, compressed\): the file is damaged" \
	SWT_TRACEDAT_READER=libtracecmd -- "$f"

# one byte changed inside a zstd frame (byte 2040 of chunk 0's): the frame
# still decompresses, into a page holding an event that runs past its end
# (whose fields were once read from beyond the page)
c=$(TF td-chunk "$TD" swt 0 0)
f=$(damaged_td zstd-inside.dat)
TF patch "$f" $((c + 8 + 2040)) 56
expect_fail td-zstd-garbled \
	"'$(re "$f")': buffer 'swt' CPU 0: the record at offset [0-9]+ of the decompressed data runs past the end of its page \(damaged compressed data\)" \
	-- "$f"

# compressed data holding fewer events than the file's statistics declare
# (the statistics' count of swt's CPU 0, the third CPUSTAT, one more): data
# that decompresses into fewer events is damaged
IFS=: read -r at text <<< "$(grep -boa 'read events: [0-9]*' "$TD" | sed -n 3p)"
last=$((at + ${#text} - 1))
f=$(damaged_td stats-more.dat)
TF patch "$f" "$last" "$(printf '%x' $(( ( ${text: -1} + 1) % 10 + 48 )))"
expect_fail td-stats-count \
	"'$(re "$f")': buffer 'swt' CPU 0: [0-9]+ events decoded where the file's statistics declare [0-9]+: the compressed data at offset $cpu0 \([0-9]+ bytes\) is damaged" \
	-- "$f"

# block_rq_issue's format with its rwbs field moved past the others, or
# grown over the next: every record looked too short for it ("holds 68
# bytes, fewer than the 104 of its event") or the fields overlapped, and
# either was told as "damaged compressed data" -- it is the format, named
# where it is in the decompressed event formats section (rewritten at the
# end of the file, with the zstd command)
if command -v zstd >/dev/null 2>&1; then
	format_damaged rwbs-moved block_rq_issue 'rwbs[10];\toffset:34;' 'rwbs[10];\toffset:94;' \
		"lists its field 'rwbs' \(offset 94\) before its field 'comm' \(offset 44\)"
	format_damaged rwbs-grown block_rq_issue 'rwbs[10];\toffset:34;\tsize:10;' \
		'rwbs[10];\toffset:34;\tsize:99;' \
		"puts its field 'comm' over its field 'rwbs'"
	# ... its rwbs renamed: its events were kept as other events, and every
	# request went without an issue time (exit 0); block_rq_complete's
	# nr_sector renamed: every request without a completion (exit 0)
	format_damaged rwbs-renamed block_rq_issue 'char rwbs[10];' 'char rwbz[10];' \
		"has no field 'rwbs', which ingest reads"
	format_damaged nr-sector-renamed block_rq_complete 'int nr_sector;' 'int nr_sectoX;' \
		"has no field 'nr_sector', which ingest reads"
	# ... block_rq_complete's rwbs 4 bytes early, over the ioprio before it
	# (refused since fields are held to their order, as the others are)
	format_damaged rwbs-early block_rq_complete 'rwbs[10];\toffset:34;' 'rwbs[10];\toffset:30;' \
		"puts its field 'rwbs' over its field 'ioprio'"
	# ... its rwbs an array of ints: read as a string all the same (exit 0)
	format_damaged rwbs-ints block_rq_issue 'char rwbs[10];' 'int  rwbs[10];' \
		"gives its field 'rwbs' the type 'int\[10\]' of 10 bytes, not a char array"
else
	echo "note: no zstd command: the compressed event format cases are not run"
fi

# an uncompressed version-6 copy with garbage in a data page: 'AAAA' reads
# as a 4-byte event whose type id is 0x4141
V6=$IN/v6.dat
trace-cmd convert -i "$TD" -o "$V6" --file-version 6 >/dev/null 2>&1 || fail "trace-cmd convert to v6"
read -r v6cpu0 _ <<< "$(TF td-cpu "$V6" swt 0)"
page=$((v6cpu0 + 10 * 4096))
f=$(damaged_td v6-garbage.dat "$V6")
TF patch "$f" $((page + 16)) "$(printf '41%.0s' $(seq 64))"
expect_fail td-v6-garbage \
	"'$(re "$f")': buffer 'swt' CPU 0: the record at offset $((page + 16)) has unknown event id 16705" \
	-- "$f"
rm -f "$f"

# the same copy's header_page (uncompressed, at the start): a time stamp
# of 1 byte stopped the decoder before any event, naming nothing; a commit
# count of 4 bytes read every page's events from 4 bytes too early (a
# record "of 4 bytes, fewer than the 32 of its event")
at=$(grep -m1 -boa $'\tfield: u64 timestamp;' "$V6" | head -1 | cut -d: -f1)
f=$(damaged_td v6-header-page-time.dat "$V6")
TF patch "$f" $((at + 38)) 31
expect_fail td-v6-header-page-time \
	"'$(re "$f")': header_page: the line at offset $at gives the time stamp 1 bytes at offset 0, not 8 at 0" \
	-- "$f"
rm -f "$f"
at=$(grep -m1 -boa $'\tfield: local_t commit;' "$V6" | head -1 | cut -d: -f1)
data=$(grep -m1 -boa $'\tfield: char data;' "$V6" | head -1 | cut -d: -f1)
f=$(damaged_td v6-header-page-commit.dat "$V6")
TF patch "$f" $((at + 39)) 34
expect_fail td-v6-header-page-commit \
	"'$(re "$f")': header_page: the line at offset $data puts the data at offset 16, not right after the 4-byte commit count \(at 12\)" \
	-- "$f"
rm -f "$f"

# an event format's size: past the end of the file (v6, where the formats
# have no section of their own), named as the size it is, where it is, not
# as the format text after it; and, compressed, block_rq_issue's text a
# byte shorter than its size, which then reads the next format's size a
# byte late -- format text taken for a size, and the decoder died before
# its first event, naming nothing (under ASan).  The bad size is where
# block_rq_issue's text ends by its size in the v6 copy, which holds the
# same formats uncompressed.
at=$(grep -m1 -boa 'name: block_rq_issue' "$V6" | cut -d: -f1)
issue_size=$(od -An -t u8 -j $((at - 8)) -N 8 "$V6" | tr -d ' ')
v6_size=$(stat -c %s "$V6")
f=$(damaged_td v6-format-size.dat "$V6")
TF patch64 "$f" $((at - 8)) $((v6_size * 2))
expect_fail td-v6-format-size \
	"'$(re "$f")': the size of format [0-9]+ of the [0-9]+ of system 'block' at offset $((at - 8)) declares $((v6_size * 2)) bytes, past the end of the file \($v6_size bytes\): the size, or the format before it, is damaged" \
	-- "$f"
rm -f "$f"
if command -v zstd >/dev/null 2>&1; then
	f=$(damaged_td format-text-short.dat)
	read -r sect at <<< "$(TF td-section-edit "$f" 18 'name: block_rq_issue\n' 'name: block_rq_issu\n')"
	expect_fail td-format-text-short \
		"'$(re "$f")': the size of format [0-9]+ of the [0-9]+ of system 'block' at offset $((at + issue_size)) of the decompressed event formats section at offset $sect declares [0-9]+ bytes, past the end of the section \([0-9]+ bytes, decompressed\): the size, or the format before it, is damaged" \
		-- "$f"
	rm -f "$f"
fi

# the same copy with its CPU 0 size zeroed in the flyrecord table
e=$(TF td-cpu-entry "$V6" swt 0)
f=$(damaged_td v6-size-zero.dat "$V6")
TF patch64 "$f" $((e + 8)) 0
expect_fail td-v6-cpu-size-zero \
	"'$(re "$f")': buffer 'swt' CPU 0 declares no data at offset $v6cpu0, but the next CPU's data starts [0-9]+ bytes later: its size is damaged" \
	-- "$f"
rm -f "$f"

# the same copy with its first page's time stamp at 2^63 ns: its events'
# times were stored negative (exit 0, a span ending before it began)
f=$(damaged_td v6-page-time.dat "$V6")
TF patch64 "$f" "$v6cpu0" 9223372036854775808
expect_fail td-v6-page-time \
	"'$(re "$f")': buffer 'swt' CPU 0: the record at offset [0-9]+ has time 92233720368547[0-9]+ ns, past 2\^63 - 1 \(292 years\)" \
	-- --swap 7:0 "$f"
rm -f "$f"

# a smaller commit size in the first page's header of the same copy: fewer
# events, every page still reached.  Uncompressed data is only checked
# against the file's statistics, which a size-capped recording also fails,
# so this is a warning naming both counts, not an error.
f=$(damaged_td v6-commit.dat "$V6")
TF patch "$f" $((v6cpu0 + 9)) 01
"$SWAPTRACE" ingest -q -o "$WORK/v6-commit.db" --swap 7:0 "$f" >/dev/null 2>"$WORK/stderr"
check_stderr "td-v6-short-page (a warning)" $? 0 \
	"^swaptrace: ingest: warning: '$(re "$f")': buffer 'swt' CPU 0: [0-9]+ events decoded where the file's statistics declare [0-9]+ .*damaged data\)\$"
# ... and the events the statistics declare but the file lacks are lost ones
read -r decoded declared <<< "$(sed -n 's/.* \([0-9]*\) events decoded where the file.s statistics declare \([0-9]*\) .*/\1 \2/p' "$WORK/stderr")"
check_eq "$(sqlite3 "$WORK/v6-commit.db" 'SELECT sum(lost_events) FROM source')" "$((declared - decoded))" \
	"td-v6-short-page: lost events"
rm -f "$f" "$WORK/v6-commit.db"

# libtracecmd crashing in the decoder child (test seam: it raises SIGSEGV
# after N events) is an error, not a crash of swaptrace, and names the last
# record decoded: in the decompressed data, or a file offset (the v6 copy,
# read by libtracecmd itself), the same record either way
expect_fail td-decoder-crash \
	"'$(re "$TD")': libtracecmd crashed \(signal 11\) after the record at offset 36204 of the decompressed data of buffer 'swt' CPU 0 \(event 1000\): the file is damaged" \
	SWT_TEST_DECODER_CRASH=1000 -- "$TD"
expect_fail td-v6-decoder-crash \
	"'$(re "$V6")': libtracecmd crashed \(signal 11\) after the record at offset $((v6cpu0 + 36204)) of buffer 'swt' CPU 0 \(event 1000\): the file is damaged" \
	SWT_TEST_DECODER_CRASH=1000 -- --swap 7:0 "$V6"

# --- meta.txt ---------------------------------------------------------------------
# a swap file's extent at slots near 2^62, on an area of no stated size:
# the replay once sized its slot tables by them (a multiplication that
# wrapped, and a write out of bounds); the line is refused at ingest
d=$IN/far-extent
mkdir -p "$d"
ln -sf "$TD" "$d/trace.dat"
cat > "$d/meta.txt" <<'EOF2'
kernel 6.18.44-fc-v657
page_size 4096
page_cluster 0
swap_device path=/dev/loop0 dev=7:0 type=partition prio=5
extent area=0 first_slot=0 nr_slots=20000 start_sector=0
extent area=0 first_slot=4611686018427387904 nr_slots=300000 start_sector=160000
EOF2
expect_fail meta-far-extent \
	"'$(re "$d/meta.txt")': line 6: extent slots 4611686018427387904-4611686018427687903: beyond what the replay handles \(2\^32\)" \
	-- "$d"

# --- not traces, and the command line -------------------------------------------
f=$IN/notes.txt
cp "$CAP/meta.txt" "$f"
expect_fail not-a-trace \
	"'$(re "$f")': not a trace.dat or blktrace file \(unrecognised magic at offset 0\)" -- "$f"

f=$IN/empty.dat
: > "$f"
expect_fail empty-file "'$(re "$f")': empty file" -- "$f"

f=$IN/no-such-trace
expect_fail missing-input "'$(re "$f")': no such file, and no '$(re "$f").blktrace.0'" -- "$f"

# the same device's block events twice: trace.dat and its capture's blk files
expect_fail same-device-twice \
	"'$(re "$BLK")': block events for device 7:0 also come from '$(re "$TD")' \(a database holds one trace of a device's I/O\); ingest one of them if both trace the same I/O, else each into its own database" \
	-- "$TD" "$BLK"
# a per-CPU file given again beside its set: read once already, which the
# message says (never "ingest one of them": a set's files are one trace)
expect_fail same-set-twice \
	"'$(re "$BLK.blktrace.1")': block events for device 7:0 already come from '$(re "$BLK")', of the same blktrace set: give each of its per-CPU files once" \
	-- "$(dirname "$BLK")" "$BLK.blktrace.1"

# --- an output that is not a database to replace -----------------------------------
# The database is renamed over the output path at the end: a file this
# ingest reads (the same file under any name: compared by device and
# inode), or any file that is not a swaptrace database, is refused before
# anything is written, and stays as it was.  (Both were replaced, exit 0.)
# expect_kept NAME REGEX FILE INGEST-ARGS...: ingest -q -o FILE fails so
expect_kept() {
	local name=$1 regex=$2 file=$3
	shift 3
	[ -p "$file" ] || cp "$file" "$WORK/kept.orig"
	"$SWAPTRACE" ingest -q -o "$file" "$@" >/dev/null 2>"$WORK/stderr"
	check_stderr "$name" $? 1 "^swaptrace: ingest: $regex\$"
	if [ -f "$WORK/kept.orig" ]; then
		cmp -s "$WORK/kept.orig" "$file" || fail "$name: '$file' was changed"
	else
		[ -p "$file" ] || fail "$name: '$file' is no longer a FIFO"
	fi
	compgen -G "$file.tmp-*" >/dev/null && fail "$name: a temporary database was left"
	rm -f "$WORK/kept.orig"
}
out=$WORK/own
mkdir -p "$out/cap"
cp "$IN/good.blktrace.0" "$out/same.blktrace.0"
expect_kept output-is-input \
	"'$(re "$out/same.blktrace.0")': the output is a file this ingest reads \(input '$(re "$out/same.blktrace.0")'\); the database would replace it" \
	"$out/same.blktrace.0" --swap 7:0 "$out/same.blktrace.0"
expect_kept output-in-blktrace-set \
	"'$(re "$out/same.blktrace.0")': the output is a file this ingest reads \(input '$(re "$out/same")'\); the database would replace it" \
	"$out/same.blktrace.0" --swap 7:0 "$out/same"
# a capture directory's trace.dat under another name (a hard link)
ln "$TD" "$out/cap/trace.dat"
cp "$CAP/meta.txt" "$out/cap/meta.txt"
ln "$TD" "$out/link.dat"
expect_kept output-in-input-dir \
	"'$(re "$out/link.dat")': the output is a file this ingest reads \(input '$(re "$out/cap")'\); the database would replace it" \
	"$out/link.dat" "$out/cap"
expect_kept output-is-meta \
	"'$(re "$out/cap/meta.txt")': the output is a file this ingest reads \(input '$(re "$out/cap")'\); the database would replace it" \
	"$out/cap/meta.txt" "$out/cap"
echo notes > "$out/notes.txt"
expect_kept output-not-a-database \
	"'$(re "$out/notes.txt")': exists and is not a swaptrace database: not replaced" \
	"$out/notes.txt" "$IN/good.blktrace.0"
sqlite3 "$out/other.db" 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
expect_kept output-other-sqlite \
	"'$(re "$out/other.db")': exists and is not a swaptrace database: not replaced" \
	"$out/other.db" "$IN/good.blktrace.0"
mkfifo "$out/fifo"
expect_kept output-fifo \
	"'$(re "$out/fifo")': exists and is not a regular file: not replaced by a database" \
	"$out/fifo" "$IN/good.blktrace.0"
# replaced: a swaptrace database, of another schema version too (its
# message says "ingest again"), and an empty file (mktemp's)
cp "$KEEP" "$out/db.db"
cp "$KEEP" "$out/old.db"
sqlite3 "$out/old.db" "PRAGMA user_version = 2; UPDATE swt_meta SET value = 2 WHERE key = 'schema_version'"
: > "$out/empty.db"
for f in "$out/db.db" "$out/old.db" "$out/empty.db"; do
	"$SWAPTRACE" ingest -q -o "$f" --swap 7:0 "$IN/good.blktrace.0" 2>"$WORK/stderr" ||
		fail "replacing '$f': $(cat "$WORK/stderr")"
	check_eq "$(sqlite3 "$f" 'PRAGMA user_version')" "$(sqlite3 "$KEEP" 'PRAGMA user_version')" \
		"replacing '$f': the new database's schema version"
done

# replaced: a database in WAL mode whose -wal still holds rows (its writer
# gone without a checkpoint): those files go with it, or SQLite applies the
# old rows to the new database at its next open (its table 'junk' showed)
cp "$KEEP" "$out/wal.db"
python3 - "$out/wal.db" <<'PY' || fail "setting up a WAL-mode database"
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("CREATE TABLE junk(x)")
c.executemany("INSERT INTO junk VALUES (?)", [(i,) for i in range(1000)])
c.commit()
os._exit(0 if os.path.getsize(sys.argv[1] + "-wal") > 0 else 1)
PY
"$SWAPTRACE" ingest -q -o "$out/wal.db" --swap 7:0 "$IN/good.blktrace.0" 2>"$WORK/stderr" ||
	fail "replacing a WAL-mode database: $(cat "$WORK/stderr")"
check_eq "$(sqlite3 "$out/wal.db" "SELECT count(*) FROM sqlite_master WHERE name = 'junk'")$(ls "$out" | grep -c 'wal\.db-')" \
	"00" "replacing a WAL-mode database: none of its rows or files are left"

# not replaced: a database in WAL mode (checkpointed, no -wal beside it)
# under an ingest that fails.  A read-only look at such a database makes
# its -wal and -shm files and cannot remove them: the failed ingest left
# two new files.  The name holds what a URI would read otherwise.
walname='wal ?#%25.db'
cp "$KEEP" "$out/$walname"
sqlite3 "$out/$walname" "PRAGMA journal_mode=WAL" > /dev/null || fail "setting up '$walname'"
before=$(cd "$out" && ls | sort | md5sum)
"$SWAPTRACE" ingest -q -o "$out/$walname" --swap 7:0 "$IN/cut.blktrace.0" >/dev/null 2>&1 &&
	fail "a failed ingest over '$walname': it succeeded"
check_eq "$(cd "$out" && ls | sort | md5sum)" "$before" \
	"a failed ingest over a WAL-mode database: its directory as it was"
"$SWAPTRACE" ingest -q -o "$out/$walname" --swap 7:0 "$IN/good.blktrace.0" 2>"$WORK/stderr" ||
	fail "replacing '$walname': $(cat "$WORK/stderr")"

# --- unwritable output ------------------------------------------------------------
# (a single run each: the output itself is what is wrong)
out=$WORK/no-such-dir/cap.db
"$SWAPTRACE" ingest -q -o "$out" "$IN/good.blktrace.0" >/dev/null 2>"$WORK/stderr"
check_stderr "missing output directory" $? 1 \
	"^swaptrace: ingest: '$(re "$out")': cannot create database: No such file or directory\$"
[ -e "$WORK/no-such-dir" ] && fail "missing output directory: it was created"

# a working directory removed under it: no such file, not a path "4100
# bytes long" (its length is unknown, not PATH_MAX)
mkdir -p "$WORK/removed-cwd"
(cd "$WORK/removed-cwd" && rmdir "$WORK/removed-cwd" &&
	exec "$SWAPTRACE" ingest -q -o cap.db "$IN/good.blktrace.0") >/dev/null 2>"$WORK/stderr"
check_stderr "removed working directory" $? 1 \
	"^swaptrace: ingest: 'cap.db': cannot create database: No such file or directory\$"

mkdir -p "$WORK/out-is-dir"
"$SWAPTRACE" ingest -q -o "$WORK/out-is-dir" "$IN/good.blktrace.0" >/dev/null 2>"$WORK/stderr"
check_stderr "output is a directory" $? 1 \
	"^swaptrace: ingest: '$(re "$WORK/out-is-dir")': cannot create database: Is a directory\$"
check_eq "$(ls -A "$WORK/out-is-dir")" "" "output is a directory: files left in it"
check_eq "$(ls -A "$WORK" | grep -c 'tmp-')" 0 "output is a directory: temporary files beside it"

# a path longer than SQLite opens (504 bytes, absolute, with its "-journal")
# is said to be, not "unable to open database file"; one it opens is used,
# up to 504 bytes (494 to 504 failed: the temporary file's name was 11
# bytes longer), the temporary file there named shorter
for len in 505 560; do
	out=$(long_path $len cap.db)
	"$SWAPTRACE" ingest -q -o "$out" "$IN/good.blktrace.0" >/dev/null 2>"$WORK/stderr"
	check_stderr "output path of $len bytes, too long for SQLite" $? 1 \
		"^swaptrace: ingest: '$(re "$out")': cannot create database: the path is $len bytes long as an absolute path, and SQLite opens up to 504: use a shorter one\$"
	check_eq "$(ls -A "$(dirname "$out")")" "" "output path of $len bytes, too long for SQLite: files left"
done
for len in 493 494 500 504; do
	out=$(long_path $len cap.db)
	"$SWAPTRACE" ingest -q -o "$out" "$IN/good.blktrace.0" > /dev/null 2>"$WORK/stderr" ||
		fail "ingest to a path of $len bytes: $(cat "$WORK/stderr")"
	check_eq "$(ls -A "$(dirname "$out")")" "cap.db" "ingest to a path of $len bytes: the files there"
	"$SWAPTRACE" info "$out" > /dev/null || fail "info of a path of $len bytes"
	[ "$len" = 504 ] || rm "$out"
done
# ... also ending in a name too short for mkstemp's six characters
for name in f ab.db; do
	short=$(long_path 504 $name)
	"$SWAPTRACE" ingest -q -o "$short" "$IN/good.blktrace.0" > /dev/null 2>"$WORK/stderr" ||
		fail "ingest to a path of 504 bytes ending in '$name': $(cat "$WORK/stderr")"
	check_eq "$(ls -A "$(dirname "$short")")" "$name" "ingest to a path of 504 bytes ending in '$name': the files there"
	"$SWAPTRACE" ingest -q -o "$short" "$IN/good.blktrace.0" > /dev/null 2>"$WORK/stderr" ||
		fail "ingest again to a path of 504 bytes ending in '$name': $(cat "$WORK/stderr")"
	check_eq "$(ls -A "$(dirname "$short")")" "$name" "ingest again to '$name': the files there"
	rm -rf "$(dirname "$short")"
done
long=$(long_path 505 cap.db)
mv "$out" "$long"
(cd "$(dirname "$long")" && "$SWAPTRACE" info cap.db) >/dev/null 2>"$WORK/stderr"
check_stderr "info of a relative path too long for SQLite as an absolute one" $? 1 \
	"^swaptrace: info: 'cap.db': open: the path is 505 bytes long as an absolute path, and SQLite opens up to 504: use a shorter one\$"

# a read-only directory: root writes anywhere, so as root a read-only
# tmpfs in a private mount namespace stands in for it
ro=$WORK/read-only
mkdir -p "$ro"
if [ "$(id -u)" -eq 0 ]; then
	unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"' sh "$ro" \
		"$SWAPTRACE" ingest -q -o "$ro/cap.db" "$IN/good.blktrace.0" >/dev/null 2>"$WORK/stderr"
else
	chmod a-w "$ro"
	"$SWAPTRACE" ingest -q -o "$ro/cap.db" "$IN/good.blktrace.0" >/dev/null 2>"$WORK/stderr"
fi
check_stderr "read-only output directory" $? 1 \
	"^swaptrace: ingest: '$(re "$ro/cap.db")': cannot create database: (Read-only file system|Permission denied)\$"
chmod u+w "$ro"

# interrupted: a signal while the input is still being read (a FIFO nobody
# writes to holds ingest there) kills ingest by that signal and leaves no
# temporary database; an existing database stays as it was.  Job control
# (set -m) so the background ingest does not start with SIGINT ignored.
set -m
for sig in INT TERM HUP; do
	out=$WORK/out-signal-$sig
	rm -rf "$out" && mkdir "$out"
	cp "$KEEP" "$out/cap.db"
	rm -f "$IN/stalled.blktrace.0" && mkfifo "$IN/stalled.blktrace.0"
	"$SWAPTRACE" ingest -q -o "$out/cap.db" "$IN/stalled.blktrace.0" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 200); do
		compgen -G "$out/cap.db.tmp-*" >/dev/null && break
		sleep 0.05
	done
	compgen -G "$out/cap.db.tmp-*" >/dev/null || fail "SIG$sig: no temporary database appeared"
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	check_eq "$rc" "$((128 + $(kill -l "$sig")))" "SIG$sig: exit status (killed by the signal)"
	cmp -s "$KEEP" "$out/cap.db" || fail "SIG$sig: the existing database was changed"
	check_eq "$(ls -A "$out")" "cap.db" "SIG$sig: files beside the existing database"
done
set +m

# a capture killed while it assembled trace.dat from raw/ (meta.txt already
# written, block files whole): its block files alone are not the recording;
# one out of room kept trace.dat.head and printed how to finish it
mkdir -p "$IN/killed/raw" "$IN/killed/blk"
cp "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/meta.txt" "$IN/killed/"
cp "$IN/good.blktrace.0" "$IN/killed/blk/swap.blktrace.0"
head -c 8192 /dev/zero > "$IN/killed/raw/swaptrace.cpu0"
expect_fail killed-writing-tracedat "'$(re "$IN/killed")': an unfinished swaptrace capture \(raw/, but no trace\.dat\): it was stopped before it could finish, and what it holds is not the whole recording" \
	-- "$IN/killed"
head -c 4096 /dev/zero > "$IN/killed/trace.dat.head"
expect_fail tracedat-not-assembled "'$(re "$IN/killed")': a swaptrace capture whose trace\.dat was not assembled \(raw/ and trace\.dat\.head, but no trace\.dat\): finish it with the command capture printed \(cat trace\.dat\.head raw/\.\.\. > trace\.dat\), then ingest it" \
	-- "$IN/killed"
# a capture whose trace.dat is there by name but cannot be read (a
# dangling link, a directory): its recording is lost, not a capture of
# block files alone (the block files were ingested, exit 0)
mkdir -p "$IN/dangling/blk" "$IN/dir-tracedat/blk" "$IN/dir-tracedat/trace.dat"
cp "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0/meta.txt" "$IN/dangling/"
cp "$IN/good.blktrace.0" "$IN/dangling/blk/swap.blktrace.0"
cp "$IN/good.blktrace.0" "$IN/dir-tracedat/blk/swap.blktrace.0"
ln -s "$IN/nosuch" "$IN/dangling/trace.dat"
expect_fail tracedat-dangling "'$(re "$IN/dangling/trace.dat")': No such file or directory" -- "$IN/dangling"
expect_fail tracedat-directory "'$(re "$IN/dir-tracedat/trace.dat")': not a regular file" -- "$IN/dir-tracedat"
# one stopped before its buffers gave a page: an empty raw/ and nothing else
mkdir -p "$IN/killed-early/raw"
expect_fail killed-before-any-page "'$(re "$IN/killed-early")': an unfinished swaptrace capture \(raw/ holds no ring-buffer pages, and there is no trace\.dat\): it was stopped before it recorded anything" \
	-- "$IN/killed-early"

# a disk that fills up while rows are written (root only: a small tmpfs in
# a private mount namespace); what is left on it is listed from inside
if [ "$(id -u)" -eq 0 ]; then
	full=$WORK/full
	mkdir -p "$full"
	unshare -m sh -c 'mount -t tmpfs -o size=2m tmpfs "$1" || exit 99
		"$2" ingest -q -o "$1/cap.db" "$3" >/dev/null 2>"$4"
		rc=$?; ls -A "$1" > "$5"; exit $rc' sh "$full" "$SWAPTRACE" "$TD" "$WORK/stderr" \
		"$WORK/left"
	rc=$?
	if [ "$rc" -eq 99 ]; then
		echo "note: cannot mount a tmpfs here; the full-disk case is not run"
	else
		check_stderr "disk full" "$rc" 1 \
			"^swaptrace: ingest: '$(re "$full/cap.db")': .*database or disk is full\$"
		check_eq "$(cat "$WORK/left")" "" "disk full: files left on the disk"
	fi
fi

# a file-size limit (ulimit -f, 2 MiB) the database outgrows, which anyone
# can set: the write fails as on a full disk, into an empty directory and
# over an existing database (SIGXFSZ killed ingest, status 153, and left
# its temporary database of 2 MiB)
for mode in new existing; do
	out=$WORK/out-fsize-$mode
	rm -rf "$out" && mkdir "$out"
	[ "$mode" = existing ] && cp "$KEEP" "$out/cap.db"
	(ulimit -f 2048 && exec "$SWAPTRACE" ingest -q -o "$out/cap.db" "$TD") >/dev/null 2>"$WORK/stderr"
	check_stderr "file-size limit ($mode output)" $? 1 \
		"^swaptrace: ingest: '$(re "$out/cap.db")': .*: disk I/O error \(File too large\)\$"
	if [ "$mode" = new ]; then
		check_eq "$(ls -A "$out")" "" "file-size limit: files left in the output directory"
	else
		cmp -s "$KEEP" "$out/cap.db" || fail "file-size limit: the existing database was changed"
		check_eq "$(ls -A "$out")" "cap.db" "file-size limit: files beside the existing database"
	fi
done
finish
