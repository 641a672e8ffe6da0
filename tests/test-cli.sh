#!/bin/bash
# The command line: help and version, usage errors (exit 2 with a message),
# failures (exit 1 with one line), ingest without metadata (a warning, and
# every device a swap area from sector 0), --swap statements (and the
# warnings when they do not fit the trace), info's blkparse-style text, and
# help texts within 80 columns.  Runs on the bundled sample capture.
. "$(dirname "$0")/lib.sh"
need_tool sqlite3
need_tool python3

SAMPLE=$SWT_SOURCE_DIR/samples/rnd-1dev-pc0
[ -f "$SAMPLE/trace.dat" ] || skip "the sample capture is missing"
OUT=$WORK/stdout
ERR=$WORK/stderr

run() { # expected-status args...   (stdout in $OUT, stderr in $ERR)
	local want=$1 rc
	shift
	"$SWAPTRACE" "$@" >"$OUT" 2>"$ERR"
	rc=$?
	check_eq "$rc" "$want" "swaptrace $*: exit status"
}

has() { # file regex what
	grep -qE -- "$2" "$1" || fail "$3: no line matching /$2/ in: $(head -c 300 "$1")"
}

lines() { wc -l < "$1"; }

# --- help and version -------------------------------------------------------------
run 0 --help
has "$OUT" '^usage: swaptrace ' "--help"
has "$OUT" '^ +ingest +' "--help lists ingest"
has "$OUT" '^ +info +' "--help lists info"
check_eq "$(lines "$ERR")" 0 "--help: stderr"
run 0 help
has "$OUT" '^usage: swaptrace ' "help"
cp "$OUT" "$WORK/help"
run 0 help help
check_eq "$(cat "$OUT")" "$(cat "$WORK/help")" "help help is the general help"

for verb in ingest info; do
	run 0 help "$verb"
	has "$OUT" "^usage: swaptrace $verb " "help $verb"
	cp "$OUT" "$WORK/help-$verb"
	run 0 "$verb" --help
	check_eq "$(cat "$OUT")" "$(cat "$WORK/help-$verb")" "$verb --help vs help $verb"
	run 0 "$verb" -h
	check_eq "$(cat "$OUT")" "$(cat "$WORK/help-$verb")" "$verb -h vs help $verb"
done
has "$WORK/help-ingest" '--swap SPEC' "help ingest documents --swap"
has "$WORK/help-ingest" 'sector 0, with a warning' "help ingest documents the assumed layout"

# every help text fits an 80-column terminal, as does the policies' list
fits_80() { # file what
	local wide
	wide=$(awk 'length > 80 { print length ": " $0 }' "$1")
	[ -z "$wide" ] || fail "$2: lines over 80 columns:
$wide"
}
run 0 --help
fits_80 "$OUT" "--help"
verbs=$(awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }' "$OUT")
grep -qx replay <<<"$verbs" || fail "--help's commands, as parsed: '$verbs'"
for verb in $verbs; do
	run 0 "$verb" --help
	fits_80 "$OUT" "$verb --help"
done
run 0 policies
fits_80 "$OUT" "policies"

run 0 --version
has "$OUT" '^swaptrace [0-9]+\.[0-9]+\.[0-9]+$' "--version"

# --- usage errors: exit 2 and say what is wrong ---------------------------------------
run 2
has "$ERR" '^usage: swaptrace ' "no command"
run 2 frobnicate
check_eq "$(cat "$ERR")" "swaptrace: 'frobnicate' is not a swaptrace command. See 'swaptrace --help'." "unknown command"
run 2 help frobnicate
check_eq "$(cat "$ERR")" "swaptrace: help: 'frobnicate' is not a swaptrace command" "help on an unknown command"
run 2 help replay extra
check_eq "$(cat "$ERR")" "swaptrace: help: one command at a time ('extra' after 'replay')" "help with a word too many"
run 2 help help extra
check_eq "$(cat "$ERR")" "swaptrace: help: one command at a time ('extra' after 'help')" "help help with a word too many"

usage_error() { # message args...
	local msg=$1 verb=$2
	shift
	run 2 "$@"
	check_eq "$(head -n 1 "$ERR")" "swaptrace: $verb: $msg" "swaptrace $*: message"
	has "$ERR" "^usage: swaptrace $verb " "swaptrace $*: synopsis"
	check_eq "$(lines "$OUT")" 0 "swaptrace $*: stdout"
}
usage_error "no output database given (-o DB)" ingest "$SAMPLE"
usage_error "no INPUT given" ingest -o "$WORK/x.db"
usage_error "option '-o' needs a value" ingest -o
usage_error "unknown option '--frobnicate'" ingest --frobnicate -o "$WORK/x.db" "$SAMPLE"
usage_error "no DB given" info
usage_error "one DB at a time" info a.db b.db
usage_error "unknown option '-x'" info -x a.db
# a value given to a long option that takes none: it said "unknown option
# '-j'" of the valid --json, and cut the line short for --csv (no letter)
usage_error "option '--json' takes no value" replay --json=1 a.db
usage_error "option '--csv' takes no value" replay --csv=yes a.db
usage_error "option '--quiet' takes no value" ingest --quiet=1 -o "$WORK/x.db" "$SAMPLE"
run 2 ingest -o "$WORK/x.db" --swap 7:0,start=banana "$SAMPLE"
has "$ERR" "^swaptrace: ingest: bad --swap '7:0,start=banana'" "a bad --swap"
run 2 ingest -o "$WORK/x.db" --swap 7:0,start=8,start=16 "$SAMPLE"
check_eq "$(cat "$ERR")" "swaptrace: ingest: bad --swap '7:0,start=8,start=16': start= given twice" \
	"a --swap key given twice"
# ... and so is one on a metadata file's swap_device line, naming the file
# and line (the last value was kept, silently); no database is written
printf 'kernel 6.18.44-fc-v657\npage_cluster 0\nswap_device path=/dev/loop0 dev=7:0 type=partition prio=5 start=0 slots=262144 start=8\n' \
	> "$WORK/twice-meta.txt"
run 1 ingest -o "$WORK/twice.db" --meta "$WORK/twice-meta.txt" "$SAMPLE/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: '$WORK/twice-meta.txt': line 3: bad swap_device field 'start=8': start= given twice" \
	"a metadata file's swap_device key given twice"
check_eq "$(cd "$WORK" && ls -A | grep '^twice\.db')" "" "a metadata file's key given twice: no database"
# ... and so are its slots= and size_kib= that disagree (slots= won, silently)
printf 'kernel 6.18.44-fc-v657\npage_cluster 0\nswap_device path=/dev/loop0 dev=7:0 type=partition prio=5 start=0 slots=262144 size_kib=1048572\npage_size 65536\n' \
	> "$WORK/disagree-meta.txt"
run 1 ingest -o "$WORK/disagree.db" --meta "$WORK/disagree-meta.txt" "$SAMPLE/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: '$WORK/disagree-meta.txt': line 3: swap_device slots=262144 and size_kib=1048572 disagree: with 64 KiB pages, slots = size_kib / 64 + 1 (the header page)" \
	"a metadata file's swap_device slots= and size_kib= that disagree"
check_eq "$(cd "$WORK" && ls -A | grep '^disagree\.db')" "" "a metadata file's slots= and size_kib= that disagree: no database"
run 2 ingest -o "$WORK/x.db" --swap 7:0,slots=10,size=4000 "$SAMPLE"
check_eq "$(cat "$ERR")" "swaptrace: ingest: bad --swap '7:0,slots=10,size=4000': slots=10 and size=4000 disagree: with 4 KiB pages (no page_size given), slots = size / 4 + 1 (the header page)" \
	"--swap slots= and size= that disagree"
# ... with pages of the metadata file's page_size: 64 KiB pages make size / 64 + 1
printf 'kernel 6.18.44-fc-v657\npage_cluster 0\npage_size 65536\n' > "$WORK/page64-meta.txt"
run 2 ingest -o "$WORK/x.db" --meta "$WORK/page64-meta.txt" --swap 7:0,slots=10,size=4000 "$SAMPLE/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: bad --swap '7:0,slots=10,size=4000': slots=10 and size=4000 disagree: with 64 KiB pages, slots = size / 64 + 1 (the header page)" \
	"--swap slots= and size= that disagree, 64 KiB pages"
run 0 ingest -q -o "$WORK/page64.db" --meta "$WORK/page64-meta.txt" --swap 7:0,size=1048512 "$SAMPLE/trace.dat"
check_eq "$(sqlite3 "$WORK/page64.db" 'SELECT slots, size_kib FROM swap_area')" "16384|1048512" \
	"--swap size= with 64 KiB pages: slots"
run 2 ingest -o "$WORK/x.db" --name '' "$SAMPLE"
check_eq "$(cat "$ERR")" "swaptrace: ingest: bad --name '': an empty capture name" "ingest --name ''"
# an empty output path is refused up front (ingest read the whole capture
# first, report said "cannot create directory")
run 2 ingest -o '' "$SAMPLE"
check_eq "$(cat "$ERR")" "swaptrace: ingest: bad --output '': an empty path" "ingest -o ''"
run 2 report -o '' "$WORK/x.db"
check_eq "$(cat "$ERR")" "swaptrace: report: bad --output '': an empty path" "report -o ''"
run 2 capture -o '' -- true
check_eq "$(cat "$ERR")" "swaptrace: capture: bad --output '': an empty path" "capture -o ''"
# metadata with a dev line and a swap_device line for another device: two
# areas with ids apart (both took id 0: "UNIQUE constraint failed")
mkdir -p "$WORK/mixed" && cp "$SAMPLE/trace.dat" "$WORK/mixed/" &&
	printf 'page_cluster 0\ndev /dev/loop0 7:0 rotational=1\nswap_device path=/dev/loop1 dev=7:1\n' \
		> "$WORK/mixed/meta.txt" || fail "writing the mixed metadata"
run 0 ingest -q -o "$WORK/mixed.db" "$WORK/mixed"
check_eq "$(sqlite3 "$WORK/mixed.db" "SELECT group_concat(id || '=' || path, ' ') FROM (SELECT id, path FROM swap_area ORDER BY id)")" \
	"0=/dev/loop1 1=/dev/loop0" "dev and swap_device lines: areas and ids"
# an empty item in a list is a slip, not a value to skip
for args in "replay|--page-cluster|-c 1,,2" "replay|--page-cluster|-c 3," "replay|--cache-pages|-m ,100"; do
	IFS='|' read -r verb opt arg <<< "$args"
	run 2 $verb $arg "$WORK/x.db"
	check_eq "$(cat "$ERR")" "swaptrace: $verb: bad $opt '${arg#* }': an empty item in the list" \
		"swaptrace $verb $arg: message"
done
for v in 3 65537 1.5; do
	run 2 replay --max-request-kib $v "$WORK/x.db"
	check_eq "$(cat "$ERR")" "swaptrace: replay: bad --max-request-kib '$v': a whole number of KiB from 4 to 65536" \
		"replay --max-request-kib $v: the message says the range"
done
# a built-in's value it refuses is a usage error like an unknown key, before any run
for spec in "leap:bogus=1|policy 'leap' has no parameter 'bogus' (it takes: history, min_window)" \
	"leap:history=1|policy 'leap': history must be 2..256 and min_window auto or 1..history" \
	"leap:history=2,min_window=4|policy 'leap': min_window 4 is above history 2: min_window must be auto or 1..history" \
	"leap:min_window=half|policy 'leap': min_window: not a number or auto: 'half'"; do
	run 2 replay -p fixed -p "${spec%%|*}" "$WORK/x.db"
	check_eq "$(cat "$ERR")" "swaptrace: replay: ${spec#*|}" "replay -p ${spec%%|*}"
done
# numbers are their digits: strtoll's blanks and '+' were taken (-c ' +3' was page-cluster 3)
for args in "replay|-c| +3|bad --page-cluster ' +3'" "replay|-m|+52480|bad --cache-pages '+52480'" \
	"replay|--max-request-kib|+128|bad --max-request-kib '+128'" \
	"replay|--inactive-fraction| 0.5|bad --inactive-fraction ' 0.5'" \
	"replay|--inactive-fraction|0x1p-1|bad --inactive-fraction '0x1p-1'" \
	"replay|-p|leap:history=+32|policy 'leap': history: not a number: '+32'" \
	"report|-r|+1|'+1': expected run ids"; do
	IFS='|' read -r verb opt arg want <<< "$args"
	run 2 $verb "$opt" "$arg" "$WORK/x.db"
	grep -qF -- "swaptrace: $verb: $want" "$ERR" || fail "$verb $opt '$arg': not said: $(cat "$ERR")"
done
run 2 capture --duration +1 -o "$WORK/x.capture"
has "$ERR" "bad --duration '\+1'" "capture --duration +1"
run 2 report -r 1,,2 "$WORK/x.db"
check_eq "$(cat "$ERR")" "swaptrace: report: '1,,2': an empty item in the run list" "report -r 1,,2"
run 2 report -f png, "$WORK/x.db"
check_eq "$(cat "$ERR")" "swaptrace: report: 'png,': an empty item in the format list" "report -f png,"
[ -e "$WORK/x.db" ] && fail "usage errors left a database"

# --- failures: exit 1, one line ---------------------------------------------------------
# output that cannot be written (a full disk) fails the command: it exited 0
"$SWAPTRACE" ingest -q -o "$WORK/full.db" "$SAMPLE" || fail "ingest for the full-output case"
for args in "info $WORK/full.db" "info --json $WORK/full.db" "policies" "replay -n -j -p none -c 0 $WORK/full.db"; do
	# shellcheck disable=SC2086
	"$SWAPTRACE" $args > /dev/full 2> "$ERR"
	check_eq "$?:$(cat "$ERR")" "1:swaptrace: ${args%% *}: cannot write the standard output: No space left on device" \
		"swaptrace $args > /dev/full"
done
# --meta given a directory (the capture's, not its meta.txt): it said "read error"
run 1 ingest -o "$WORK/x.db" --meta "$SAMPLE" "$SAMPLE"
check_eq "$(cat "$ERR")" "swaptrace: ingest: '$SAMPLE': a directory, not a metadata file (meta.txt)" \
	"ingest --meta DIR"
[ -e "$WORK/x.db" ] && fail "ingest --meta DIR: wrote a database"
run 1 info "$WORK/no-such.db"
check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/no-such.db': No such file or directory" "info on a missing file"
for f in "$SAMPLE/meta.txt" "$SAMPLE/trace.dat"; do
	run 1 info "$f"
	check_eq "$(cat "$ERR")" "swaptrace: info: '$f': not a swaptrace database" "info on $(basename "$f")"
done
sqlite3 "$WORK/other.db" 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'
run 1 info "$WORK/other.db"
check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/other.db': not a swaptrace database" "info on another SQLite database"
# a database another process holds locked past the 5 s wait: said so, not
# "not a swaptrace database"
"$SWAPTRACE" ingest -q -o "$WORK/locked.db" "$SAMPLE" || fail "ingest for the lock case"
python3 - "$SWAPTRACE" "$WORK/locked.db" > "$WORK/locked.txt" <<'PY'
import sqlite3, subprocess, sys
c = sqlite3.connect(sys.argv[2], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
p = subprocess.run([sys.argv[1], "info", sys.argv[2]], capture_output=True, text=True)
c.execute("ROLLBACK")
print("%d:%s" % (p.returncode, p.stderr.strip()))
PY
check_eq "$(cat "$WORK/locked.txt")" "1:swaptrace: info: '$WORK/locked.db': the database is locked: another process has been writing it for more than 5 s; try again when it is done" \
	"info on a database locked by another process"
# a database cut short (a copy interrupted): damaged, said so, not "not a
# swaptrace database"
head -c 200000 "$WORK/locked.db" > "$WORK/cut.db"
run 1 info "$WORK/cut.db"
check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/cut.db': a damaged database: database disk image is malformed" \
	"info on a database cut short"
run 1 replay -n "$WORK/cut.db"
check_eq "$(cat "$ERR")" "swaptrace: replay: '$WORK/cut.db': a damaged database: database disk image is malformed" \
	"replay of a database cut short"
# a damaged page that only a later query of info's reads (its block counts
# went well): the empty vma table's (a count taken as 0), or event_count's
# and its index's (the event rows ending early): one line naming the
# database and SQLite's message, nothing on stdout, no summary with a
# wrong number in it or, with --json, half an object (exit 0 before)
for tables in "vma" "event_count"; do
	cp "$WORK/locked.db" "$WORK/latepage.db"
	zero_root_pages "$WORK/latepage.db" $tables || fail "damaging $tables"
	for args in "info" "info --json" "info --latency"; do
		# shellcheck disable=SC2086
		run 1 $args "$WORK/latepage.db"
		check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/latepage.db': query: database disk image is malformed" \
			"$args: a damaged page of $tables"
		[ -s "$OUT" ] && fail "$args: a damaged page of $tables: printed $(head -c 200 "$OUT")"
	done
done
# a slot a hand edit made text, which SQLite keeps in an INTEGER column:
# info refuses it as replay does, naming the table and row (it counted the
# rows and said replay takes the capture as it is); in a row of an area
# swap_area does not list too, which replay leaves out (it replayed the
# rest), and in a swap-entry probe, which info did not look at (three
# restated from the first demand reads, as a probed capture has them); and
# a slot below 1 (0 is the area's header), which replay alone refused
first_in=$(sqlite3 "$WORK/locked.db" 'SELECT min(id) FROM swap_in')
last_out=$(sqlite3 "$WORK/locked.db" 'SELECT max(id) FROM swap_out')
probes="INSERT INTO swap_probe (id, ts, pid, kind, area_id, slot, address)"
probes+=" SELECT id, ts, pid, 'fault', area_id, slot, address FROM swap_in ORDER BY id LIMIT 3;"
for damage in "swap_in|$((first_in + 100))|'7abc'||" "swap_out|$last_out|'x'||" \
	"swap_in|$((first_in + 100))|'7abc'| of an unlisted area|UPDATE swap_in SET area_id = 9 WHERE id = $((first_in + 100));" \
	"swap_probe|$((first_in + 1))|'7abc'||$probes" "swap_out|$last_out|0||" \
	"swap_probe|$((first_in + 1))|-5||$probes" "swap_in|$first_in|262144||" \
	"swap_out|$last_out|4294967295||" "swap_probe|$((first_in + 1))|262150||$probes"; do
	IFS='|' read -r table id value where prepare <<< "$damage"
	why=$(slot_complaint "$value")
	cp "$WORK/locked.db" "$WORK/textslot.db"
	sqlite3 "$WORK/textslot.db" "$prepare UPDATE $table SET slot = $value WHERE id = $id" ||
		fail "text slot: preparing $table row $id"
	for args in "info" "info --json" "info --latency" "replay -n -p none"; do
		# shellcheck disable=SC2086
		run 1 $args "$WORK/textslot.db"
		check_eq "$(cat "$ERR")" "swaptrace: ${args%% *}: '$WORK/textslot.db': $table row $id: slot $value $why: not a database ingest wrote" \
			"$args: slot $value in $table$where"
		[ -s "$OUT" ] && fail "$args: slot $value in $table$where: printed $(head -c 200 "$OUT")"
	done
done
# a file-size limit (ulimit -f) that SQLite's temporary files (its sorts
# of the latency tables' bios) outgrow: one line, as replay and report say
# it (SIGXFSZ killed info, status 153).  info sorts nothing of a common
# capture now (info-block.c joins and orders its bios in C), so it needs
# no temporary file and answers as without the limit; SQL's own joins and
# sorts (SWT_TEST_INFO_SQL, a capture with requeued requests) still do.
for args in "info --latency" "info --json --latency"; do
	# shellcheck disable=SC2086
	"$SWAPTRACE" $args "$WORK/locked.db" > "$WORK/unlimited.out" 2>&1 ||
		fail "$args: without a file-size limit"
	# shellcheck disable=SC2086
	# (through a pipe: the limit would stop the output written to a file)
	(ulimit -f 1 && exec "$SWAPTRACE" $args "$WORK/locked.db") 2> "$ERR" | cat > "$OUT"
	check_eq "${PIPESTATUS[0]}:$(lines "$ERR")" "0:0" \
		"$args under ulimit -f 1, C's joins: exit status, lines"
	cmp -s "$OUT" "$WORK/unlimited.out" || fail "$args under ulimit -f 1, C's joins: output differs"
	# shellcheck disable=SC2086
	(ulimit -f 1 && SWT_TEST_INFO_SQL=1 exec "$SWAPTRACE" $args "$WORK/locked.db") > /dev/null 2> "$ERR"
	check_eq "$?:$(lines "$ERR")" "1:1" "$args under ulimit -f 1, SQL's joins: exit status, lines"
	has "$ERR" "^swaptrace: info: '$WORK/locked\.db': .*: disk I/O error \(File too large\)$" \
		"$args under ulimit -f 1, SQL's joins"
done
# a write interrupted half-way (a replay killed as it stored its runs)
# leaves a hot journal: the commands that only read roll it back, as a
# writer does, and read the database as its last commit left it (they said
# "not a swaptrace database"); one that cannot write it says why
hot_journal() { # DB: a transaction that wrote to the file, and a process gone before its end
	python3 - "$1" <<'PY'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA cache_size = 1")
c.execute("BEGIN")
c.execute("DELETE FROM swap_in")
os._exit(0)
PY
	[ -s "$1-journal" ] || fail "hot journal: no journal left beside $1"
}
cp "$WORK/locked.db" "$WORK/hot.db"
hot_journal "$WORK/hot.db"
run 0 info "$WORK/hot.db"
grep -q "^  swap-in pages        75047 " "$OUT" || fail "info on a database with a hot journal: $(cat "$ERR")"
check_eq "$(ls "$WORK" | grep -c '^hot\.db')" 1 "info on a database with a hot journal: the journal rolled back"
for cmd in "info --json" "replay -n -p none" "report --no-replay -f svg -o $WORK/hot-report"; do
	hot_journal "$WORK/hot.db"
	# shellcheck disable=SC2086
	run 0 $cmd "$WORK/hot.db"
	msg=$(grep -v "warning: no replay runs stored" "$ERR")
	[ -z "$msg" ] || fail "$cmd on a database with a hot journal: $msg"
done
hot_journal "$WORK/hot.db"
if chattr +i "$WORK/hot.db" 2>/dev/null; then
	run 1 info "$WORK/hot.db"
	check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/hot.db': a write to it was interrupted, and its journal must be rolled back before it is read, which this user cannot do here: attempt to write a readonly database" \
		"info on a database with a hot journal it cannot roll back"
	chattr -i "$WORK/hot.db"
fi
mkdir "$WORK/adir"
run 1 info "$WORK/adir"
check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/adir': is a directory, not a swaptrace database" "info on a directory"
# a path of more than 4 KiB: the message keeps its start and ends with the
# cause, an ellipsis for the middle (it was cut at 4 KiB, in the path, "...")
long=$WORK
for i in $(seq 22); do long=$long/$(printf '%0200d' 0 | tr 0 d); done
run 1 info "$long.db"
check_eq "$(lines "$ERR")" 1 "info on a path of 4 KiB: one line"
case "$(cat "$ERR")" in
"swaptrace: info: '$WORK/ddd"*"ddd…ddd"*"ddd.db': File name too long") ;;
*) fail "info on a path of 4 KiB: $(head -c 100 "$ERR")...$(tail -c 100 "$ERR")" ;;
esac
run 1 report --no-replay -o "$long" "$WORK/locked.db"
case "$(cat "$ERR")" in
"swaptrace: report: '$WORK/ddd"*"ddd…ddd"*"ddd': path too long") ;;
*) fail "report -o a path of 4 KiB: $(head -c 100 "$ERR")...$(tail -c 100 "$ERR")" ;;
esac

# --- ingest without metadata: a warning, and it still ingests --------------------------
cp "$SAMPLE/trace.dat" "$WORK/trace.dat"
run 0 ingest -o "$WORK/assumed.db" "$WORK/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: warning: no swap layout given (no metadata file, no --swap): every device with I/O is taken as a swap area starting at sector 0" "ingest without metadata: warning"
has "$OUT" "^swaptrace: ingest: wrote '$WORK/assumed.db': [0-9]+ events, [0-9]+ requests, [0-9]+ swap-in and [0-9]+ swap-out pages" "ingest summary line"
check_eq "$(sqlite3 "$WORK/assumed.db" "SELECT layout_source FROM capture; SELECT dev >> 20, dev & 1048575, start_sector, assumed FROM swap_area")" \
	"assumed
7|0|0|1" "ingest without metadata: the assumed layout"
# an empty metadata file: the same layout, and the warning names the file
# (it said "no metadata file")
run 0 ingest -q -o "$WORK/empty-meta.db" --meta /dev/null "$WORK/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: warning: no swap layout given ('/dev/null' holds no swap areas, no --swap): every device with I/O is taken as a swap area starting at sector 0" \
	"ingest with an empty metadata file: warning"
check_eq "$(sqlite3 "$WORK/empty-meta.db" "SELECT layout_source FROM capture; SELECT dev >> 20, dev & 1048575, start_sector, assumed FROM swap_area")" \
	"assumed
7|0|0|1" "ingest with an empty metadata file: the assumed layout"
run 0 info --json "$WORK/assumed.db"
cp "$OUT" "$WORK/assumed.json"
check_eq "$(json_get "$WORK/assumed.json" 'd["swap_in_pages"]')" "$(meta_value "$SAMPLE/meta.txt" pswpin)" "assumed layout: swap-in pages"
# names are JSON strings, an unknown lost count is null, not 0 (info --json
# once printed a quote in a device name raw, and NULL as 0)
cp "$WORK/assumed.db" "$WORK/odd.db"
sqlite3 "$WORK/odd.db" "UPDATE device SET name = 'disk \"a\"\\b'; UPDATE capture SET lost_events = NULL"
run 0 info --json "$WORK/odd.db"
check_eq "$(json_get "$OUT" 'd["devices"][0]["dev"] + "|" + str(d["lost_events"])')" 'disk "a"\b|None' \
	"info --json: an odd device name and an unknown lost count"
run 0 info "$WORK/odd.db"
has "$OUT" "^Span: .* events, lost events unknown$" "info: an unknown lost count"
# a task names itself (prctl): an escape sequence in its name reached the
# terminal raw in info's list of processes swapped in for
sqlite3 "$WORK/odd.db" "UPDATE task SET comm = 'sw' || char(27) || '[2J' || char(7) || 'x'"
run 0 info "$WORK/odd.db"
has "$OUT" "^ +[0-9]+ sw \[2J x +[0-9]+ pages" "info: a task name with control characters"
LC_ALL=C grep -q "$(printf '\033')" "$OUT" && fail "info: an escape character reached the terminal"
# a capture without event times (a trace.dat of no events) has no span: it
# read "Span: 0.000000 s (0.000000 .. 0.000000)", times at 0 it never had
sqlite3 "$WORK/odd.db" "UPDATE capture SET first_ns = NULL, last_ns = NULL"
run 0 info "$WORK/odd.db"
has "$OUT" "^Span: none \\(no event times\\), [0-9]+ events, " "info: no event times"
# info's verdict on replay is replay's own
# (swap areas renumbered by hand, so that no swap-in names one: replay
# leaves them all out and has nothing to replay, where info said "an exact
# demand stream")
cp "$WORK/odd.db" "$WORK/renumbered.db"
sqlite3 "$WORK/renumbered.db" "UPDATE swap_area SET id = id + 5"
run 0 info "$WORK/renumbered.db"
has "$OUT" "^Replay: every swap-in names a swap area the database does not list \\(swap_area rows missing\\): nothing to replay\\.$" \
	"info: swap-ins of no listed area"
run 1 replay -n --approximate "$WORK/renumbered.db"
has "$ERR" "no swap-in faults: nothing to replay$" "replay: swap-ins of no listed area"
sqlite3 "$WORK/odd.db" "DELETE FROM swap_area"
run 0 info "$WORK/odd.db"
has "$OUT" "^Replay: no swap areas: nothing to replay\\.$" "info: no swap areas"
# every Replay: verdict is a sentence, as the readahead one was (the others
# had no full stop)
sqlite3 "$WORK/odd.db" "DELETE FROM capture"
run 0 info "$WORK/odd.db"
has "$OUT" "^Replay: no capture row: not an ingested database\\.$" "info: no capture row"

# info --json has every fact the text shows (it had the block counts, event
# counts, swap pages and lost events only: not the capture line, the span,
# the kernel's counters, OOM victims, the processes swapped in for, memory
# maps or the replay verdict): each checked against the text's own numbers
json_matches_text() { # text json: prints what differs
	python3 - "$1" "$2" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read().splitlines()
d = json.load(open(sys.argv[2]))
bad = []
def same(what, got, want):
    if got != want:
        bad.append("%s: json %r, text %r" % (what, got, want))
c = d["capture"]
m = [re.match(r"^Capture '(.*)': kernel (\S+)(?:, page-cluster (\d+))?(?:, vma_ra_enabled (\w+))?(?:, multi-gen LRU (on|off))?, (\d+) swap areas? \((\S+)\)$", l) for l in text]
m = [x for x in m if x]
if not m:
    same("capture", c, None)
else:
    name, kernel, pc, vma, lru, areas, source = m[0].groups()
    # the text's '?' is an unrecorded name or kernel
    same("capture", (c["name"], c["kernel"], c["page_cluster"], c["vma_ra_enabled"], c["multigen_lru"], c["swap_areas"], c["layout_source"]),
         (None if name == "?" else name, None if kernel == "?" else kernel, None if pc is None else int(pc),
          None if vma is None else vma == "true", None if lru is None else lru == "on", int(areas), source))
span = [l for l in text if l.startswith("Span: ")][0]
m = re.match(r"^Span: ([0-9.]+) s \(([0-9.]+) \.\. ([0-9.]+)\), (\d+) events, ", span)
if m:
    s = d["span"]
    same("span", ("%.6f" % s["seconds"], "%.6f" % (s["first_ns"] / 1e9), "%.6f" % (s["last_ns"] / 1e9)), m.groups()[:3])
    same("total_events", d["total_events"], int(m.group(4)))
else:
    same("span", d["span"], None)
    same("total_events", d["total_events"], int(re.search(r"(\d+) events", span).group(1)))
same("ended_on_error", d["ended_on_error"], "ended on an error" in span)
dev = None
for l in text:
    m = re.match(r"^Device (\S+)(?: \((.*)\))?$", l)
    if m:
        dev = [x for x in d["devices"] if x["dev"] == m.group(1)][0]
        same("path", dev["path"], m.group(2))
        continue
    m = re.match(r"^ (Reads|Read) (Queued|Dispatches|Completed|Merges|Requeued): +(\d+)(?:, +(\d+)KiB)?\t+ (?:Writes|Write) \w+: +(\d+)(?:, +(\d+)KiB)?$", l)
    if m and dev:
        kind = {"Queued": "queued", "Dispatches": "dispatched", "Completed": "completed", "Requeued": "requeued", "Merges": "merges"}[m.group(2)]
        for w, n, kib in (("read", m.group(3), m.group(4)), ("write", m.group(5), m.group(6))):
            key = w + "_merges" if kind == "merges" else w + "s_" + kind
            same(dev["dev"] + " " + key, dev[key], int(n))
            if kib is not None:
                same(dev["dev"] + " " + key + "_kib", dev[key + "_kib"], int(kib))
    m = re.match(r"^ Average read request: ([0-9.]+) KiB$", l)
    if m and dev:
        same("average read request", "%.1f" % dev["average_read_request_kib"], m.group(1))
events = {}
for l in text:
    m = re.match(r"^  (\S+) +(\S+) +(\d+)$", l)
    if m and not l.startswith("  swap-"):
        events.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3))
same("events_by_system", d["events_by_system"], events)
vm = {}
for l in text:
    m = re.match(r"^  swap-(?:in|out) pages +\d+ +(pswp\w+) (\d+)$", l)
    if m:
        vm[m.group(1)] = int(m.group(2))
    if l.startswith("  kernel:"):
        for k, v in re.findall(r"(\w+) (\d+)", l[len("  kernel:"):]):
            vm[k] = int(v)
same("vmstat", {k: v for k, v in d["vmstat"].items() if v is not None}, vm)
m = [re.match(r"^  OOM killer: (\d+) kills? on the host", l) for l in text]
m = [x for x in m if x]
same("oom kills", d["oom"]["kills"] or 0, int(m[0].group(1)) if m else 0)
victims = []
for l in text:
    m = re.match(r"^    pid (\d+) \((.*)\) at ([0-9.]+) s: (?:(\d+) of its faults|no fault)", l)
    if m:
        victims.append((int(m.group(1)), m.group(2), m.group(3), int(m.group(4) or 0)))
same("oom victims", [(v["pid"], v["comm"], "%.6f" % (v["ts_ns"] / 1e9), v["faults"]) for v in d["oom"]["victims"]][:5], victims)
procs = []
for l in text:
    m = re.match(r"^    +(\d+) (\S+) +(\d+) pages(?: \((\d+) threads\))?$", l)
    if m:
        procs.append((int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4) or 1)))
same("swapin_processes", [(p["pid"], p["comm"], p["pages"], p["threads"]) for p in d["swapin_processes"]][:5], procs)
m = [re.match(r"^  swapped in for (\d+) process", l) for l in text]
m = [x for x in m if x]
same("swapin process count", len(d["swapin_processes"]), int(m[0].group(1)) if m else 0)
m = [re.match(r"^Memory maps: (\d+) mappings of (\d+) tasks?(?:, whose (\d+) other)?", l) for l in text]
m = [x for x in m if x]
mm = d["memory_maps"]
same("memory_maps", (mm["mappings"], mm["tasks"], mm["threads"]),
     tuple(int(x or 0) for x in m[0].groups()) if m else (0, 0, 0))
verdict = [l for l in text if l.startswith("Replay: ")][0]
r = d["replay"]
want = ("no_capture" if "no capture row" in verdict else
        "nothing_to_replay" if verdict.endswith(": nothing to replay.") else
        "probes" if "swap-entry probes" in verdict else
        "exact" if "exact demand stream" in verdict else "approximate")
same("replay verdict", r["verdict"], want)
same("nothing_to_replay", r["nothing_to_replay"],
     verdict[len("Replay: "):-len(": nothing to replay.")] if want == "nothing_to_replay" else None)
if want == "approximate":
    same("fault_events", r["fault_events"], any("reconstructs the demand stream" in l for l in text))
m = [re.match(r"^  (\d+) swap-in pages were read by swapoff", l) for l in text]
m = [x for x in m if x]
if want not in ("no_capture", "nothing_to_replay"):
    same("swapoff_pages", r["swapoff_pages"], int(m[0].group(1)) if m else 0)
print("\n".join(bad))
PY
}
info_json_vs_text() { # db what
	"$SWAPTRACE" info "$1" > "$WORK/vs.txt" 2>&1 || fail "$2: info failed"
	"$SWAPTRACE" info --json "$1" > "$WORK/vs.json" 2>&1 || fail "$2: info --json failed"
	python3 -m json.tool "$WORK/vs.json" > /dev/null || fail "$2: info --json is not JSON"
	check_eq "$(json_matches_text "$WORK/vs.txt" "$WORK/vs.json" 2>&1)" "" "$2: info --json vs the text"
}
info_json_vs_text "$WORK/assumed.db" "the sample"
# the keys it had are as they were, first
check_eq "$(json_get "$WORK/vs.json" '",".join(list(d)[:5])')" "devices,events,swap_in_pages,swap_out_pages,lost_events" \
	"info --json: the keys it had"
check_eq "$(json_get "$WORK/vs.json" 'd["capture"]["name"] + "|" + str(d["span"]["first_ns"]) + "|" + str(d["span"]["last_ns"])')" \
	"$(sqlite3 "$WORK/assumed.db" "SELECT name || '|' || first_ns || '|' || last_ns FROM capture")" "info --json: capture and span"
# OOM victims (the workload's own, whose faults are in the trace, and
# another), a process of two threads, mappings and a recording that ended
# on an error: none of it was in the JSON
cp "$WORK/assumed.db" "$WORK/oom.db"
VICTIM=$(sqlite3 "$WORK/oom.db" "SELECT pid FROM swap_in WHERE pid IS NOT NULL GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
sqlite3 "$WORK/oom.db" "INSERT INTO event (source_id, ts, pid, system, name, info)
	 SELECT 1, last_ns, $VICTIM, 'oom', 'mark_victim', 'pid=$VICTIM comm=swap load total-vm=262144kB' FROM capture;
	 INSERT INTO event (source_id, ts, pid, system, name, info)
	 SELECT 1, first_ns + 1000, 4242, 'oom', 'mark_victim', 'pid=4242 comm=bystander total-vm=4096kB' FROM capture;
	 INSERT INTO vmstat (name, delta) VALUES ('oom_kill', 3);
	 INSERT INTO capture_fact (section, key, value) VALUES ('', 'oom_victims', 'followed');
	 INSERT INTO capture_fact (section, key, value) VALUES ('', 'end', 'error');
	 INSERT OR REPLACE INTO task (pid, tgid, comm) VALUES (4243, $VICTIM, 'swapload');
	 UPDATE swap_in SET pid = 4243 WHERE id IN (SELECT id FROM swap_in WHERE pid = $VICTIM LIMIT 10);
	 INSERT INTO vma (pid, snapshot, start, end) VALUES ($VICTIM, 'start', 4096, 8192),
		($VICTIM, 'start', 8192, 12288)" ||
	fail "info --json: the OOM database"
info_json_vs_text "$WORK/oom.db" "OOM victims"
check_eq "$(json_get "$WORK/vs.json" 'len(d["oom"]["victims"]), d["oom"]["kills"], d["oom"]["victims_recorded"], d["oom"]["victims"][1]["faults"]')" \
	"$(sqlite3 -separator ' ' "$WORK/oom.db" "SELECT (SELECT count(*) FROM event WHERE name = 'mark_victim'),
		(SELECT delta FROM vmstat WHERE name = 'oom_kill'),
		(SELECT value FROM capture_fact WHERE key = 'oom_victims'),
		(SELECT count(*) FROM fault WHERE pid = $VICTIM OR pid IN (SELECT pid FROM task WHERE tgid = $VICTIM))")" \
	"info --json: OOM victims against the tables"
has "$WORK/vs.txt" "^    pid $VICTIM \\(swap load\\) at " "info: the OOM victim named"
# the multi-gen LRU as the capture recorded it (lru_gen): on, off, or a
# kernel without it; the replay verdict says what it means for replay
for lru in 0x0007:on 0x0006:off absent:off; do
	cp "$WORK/assumed.db" "$WORK/lru.db"
	sqlite3 "$WORK/lru.db" "INSERT INTO capture_fact (section, key, value) VALUES ('', 'lru_gen', '${lru%%:*}')"
	info_json_vs_text "$WORK/lru.db" "lru_gen ${lru%%:*}"
	has "$WORK/vs.txt" "^Capture .*, multi-gen LRU ${lru#*:}, 1 swap area " "info: lru_gen ${lru%%:*}"
	if [ "${lru#*:}" = on ]; then
		has "$WORK/vs.txt" "^  The traced kernel ran the multi-gen LRU \\(lru_gen 0x0007\\); replay models the$" \
			"info: what the multi-gen LRU means for replay"
	elif grep -q "multi-gen LRU (lru_gen" "$WORK/vs.txt"; then
		fail "info: a multi-gen LRU note for lru_gen ${lru%%:*}"
	fi
done
check_eq "$(json_get "$WORK/vs.json" 'd["capture"]["multigen_lru"]')" False "info --json: lru_gen absent"
# swap-ins without block I/O (zero-filled pages, zswap): counted, and what
# they mean for replay said; 0 of them counted but not remarked on
cp "$WORK/assumed.db" "$WORK/unseen.db"
sqlite3 "$WORK/unseen.db" "INSERT INTO vmstat (name, delta) VALUES ('swpin_zero', 1234), ('zswpin', 0)"
info_json_vs_text "$WORK/unseen.db" "swpin_zero"
has "$WORK/vs.txt" "^  kernel:( .*,)? swpin_zero 1234, zswpin 0$" "info: swpin_zero and zswpin counted"
has "$WORK/vs.txt" "^  Swap-ins without block I/O \\(swpin_zero 1234 zero-filled pages, machine-wide\\): the block$" \
	"info: what swap-ins without block I/O mean for replay"
sqlite3 "$WORK/unseen.db" "UPDATE vmstat SET delta = 0 WHERE name = 'swpin_zero'"
"$SWAPTRACE" info "$WORK/unseen.db" > "$WORK/vs.txt" 2>&1
grep -q "Swap-ins without block I/O" "$WORK/vs.txt" && fail "info: swap-ins without block I/O remarked on at 0"
# nothing to replay, and no capture row: the verdicts, no capture or span
cp "$WORK/assumed.db" "$WORK/none.db"
sqlite3 "$WORK/none.db" "DELETE FROM swap_area"
info_json_vs_text "$WORK/none.db" "no swap areas"
check_eq "$(json_get "$WORK/vs.json" 'd["replay"]["verdict"]')" "nothing_to_replay" "info --json: nothing to replay"
sqlite3 "$WORK/none.db" "DELETE FROM capture"
info_json_vs_text "$WORK/none.db" "no capture row"
check_eq "$(json_get "$WORK/vs.json" 'd["replay"]["verdict"], d["capture"], d["span"]')" "no_capture None None" \
	"info --json: no capture row"

# the capture is named after its directory however the path is spelt ("./",
# "dir//trace.dat" once gave '.' and ''), and the same input twice is read once
(cd "$SAMPLE" && "$SWAPTRACE" ingest -q -o "$WORK/dot.db" .) || fail "ingest of ."
check_eq "$(sqlite3 "$WORK/dot.db" 'SELECT name FROM capture')" "$(basename "$SAMPLE")" "capture name of '.'"
(cd "$SAMPLE" && "$SWAPTRACE" ingest -q -o "$WORK/twice.db" trace.dat ./trace.dat) ||
	fail "ingest of the same trace.dat twice"
check_eq "$(sqlite3 "$WORK/twice.db" 'SELECT count(*) FROM source')" 1 "the same trace.dat given twice: read once"
# ... and so is a capture directory given with its own trace.dat, in either
# order (its block events "already came from" that same trace.dat)
for args in ". trace.dat" "trace.dat ."; do
	# shellcheck disable=SC2086  # two inputs
	(cd "$SAMPLE" && "$SWAPTRACE" ingest -q -o "$WORK/dir-and-file.db" $args) ||
		fail "ingest of a directory and its trace.dat ($args)"
	check_eq "$(sqlite3 "$WORK/dir-and-file.db" 'SELECT count(*) FROM source')" 1 \
		"a directory and its trace.dat ($args): read once"
done

# an error quoting a path with a newline is still one line (the path's
# newline split it in two)
mkdir -p "$WORK/we ird
dir"
printf x > "$WORK/we ird
dir/bad.blktrace.0"
run 1 ingest -q -o "$WORK/nl.db" "$WORK/we ird
dir/bad"
check_eq "$(cat "$ERR")" "swaptrace: ingest: '$WORK/we ird\\ndir/bad.blktrace.0': truncated record at offset 0" \
	"an error quoting a path with a newline: one line"

# a file written at the output path while ingest runs is not replaced by
# the database (the check ran only at the start)
rm -f "$WORK/race.db"
"$SWAPTRACE" ingest -q -o "$WORK/race.db" "$SAMPLE" 2> "$WORK/race.err" &
RACER=$!
for _ in $(seq 200); do compgen -G "$WORK/race.db.tmp-*" > /dev/null && break; sleep 0.01; done
echo notes > "$WORK/race.db"
wait "$RACER"
check_eq "$?:$(cat "$WORK/race.db"):$(cat "$WORK/race.err")" \
	"1:notes:swaptrace: ingest: '$WORK/race.db': exists and is not a swaptrace database: not replaced" \
	"a file written at the output path during ingest"
compgen -G "$WORK/race.db.tmp-*" > /dev/null && fail "a file written at the output path: the temporary database was left"

# re-ingesting over a database replaces its replay runs too: said, once
"$SWAPTRACE" ingest -q -o "$WORK/again.db" "$SAMPLE" || fail "ingest for a re-ingest"
"$SWAPTRACE" ingest -q -o "$WORK/again.db" "$SAMPLE" 2> "$WORK/again.err"
check_eq "$?:$(cat "$WORK/again.err")" "0:" "re-ingest over a database without runs: no warning"
"$SWAPTRACE" replay -p none -p fixed -c 3 "$WORK/again.db" > /dev/null || fail "replay before a re-ingest"
"$SWAPTRACE" ingest -q -o "$WORK/again.db" "$SAMPLE" 2> "$WORK/again.err"
check_eq "$?:$(cat "$WORK/again.err")" \
	"0:swaptrace: ingest: warning: replaced '$WORK/again.db', and with it the 2 replay runs stored there" \
	"re-ingest over a database with runs"

# an output name near the file system's limit (its temporary name was 11
# bytes longer, and refused: "File name too long")
long=$(printf 'n%.0s' $(seq 250)).db
run 0 ingest -q -o "$WORK/$long" "$SAMPLE/trace.dat"
[ -s "$WORK/$long" ] || fail "ingest to a 253-byte name"
check_eq "$(ls -A "$WORK" | grep -c 'tmp-')" 0 "ingest to a 253-byte name: no temporary file left"
rm -f "$WORK/$long"

# a schema version other than this build's, in either place ingest writes it
V=$(sqlite3 "$WORK/assumed.db" 'PRAGMA user_version')
cp "$WORK/assumed.db" "$WORK/v2.db"
sqlite3 "$WORK/v2.db" 'PRAGMA user_version = 2'
run 1 info "$WORK/v2.db"
check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/v2.db': database schema version 2 (PRAGMA user_version), this swaptrace reads $V; ingest again" \
	"info on a database whose user_version is not the schema's"
cp "$WORK/assumed.db" "$WORK/v2.db"
sqlite3 "$WORK/v2.db" "UPDATE swt_meta SET value = 2 WHERE key = 'schema_version'"
run 1 info "$WORK/v2.db"
check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/v2.db': database schema version 2, this swaptrace reads $V; ingest again" \
	"info on a database whose swt_meta schema version is not the schema's"

# a version 5 database (it differs by the block_event view alone) is read
# as it is, the file untouched: info's text and --json are those of the
# same database upgraded in place (info refused it, "a command that
# writes it ... upgrades it in place"); versions 3 and 4 are still refused
"$SWAPTRACE" ingest -q -o "$WORK/v5.db" "$SAMPLE" || fail "ingest for a version 5 database"
sqlite3 "$WORK/v5.db" "DROP VIEW block_event; CREATE VIEW block_event AS SELECT 1 AS version_5;
	UPDATE swt_meta SET value = '5' WHERE key = 'schema_version'; PRAGMA user_version = 5;" ||
	fail "making a version 5 database"
cp "$WORK/v5.db" "$WORK/v5-before.db"
run 0 info "$WORK/v5.db"
cp "$OUT" "$WORK/v5.txt"
run 0 info --json "$WORK/v5.db"
cp "$OUT" "$WORK/v5.json"
cmp -s "$WORK/v5.db" "$WORK/v5-before.db" || fail "info changed the version 5 database"
cp "$WORK/v5.db" "$WORK/v5-up.db"
"$SWAPTRACE" replay -p none -c 0 "$WORK/v5-up.db" > /dev/null || fail "replay upgrading a version 5 database"
check_eq "$(sqlite3 "$WORK/v5-up.db" 'PRAGMA user_version')" "$V" "a version 5 database upgraded"
run 0 info "$WORK/v5-up.db"
cmp -s "$OUT" "$WORK/v5.txt" || fail "info on a version 5 database: not the text of it upgraded: $(diff "$WORK/v5.txt" "$OUT" | head -5)"
run 0 info --json "$WORK/v5-up.db"
cmp -s "$OUT" "$WORK/v5.json" || fail "info --json on a version 5 database: not that of it upgraded"
# report opens a database writable to store the default runs, which
# upgrades a version 5 one in place: one that cannot be written (immutable
# here: root writes any file whatever its mode) is read as it is instead,
# its stored runs drawn; without runs the message says that --no-replay
# draws without them, as for a database of this version
cp "$WORK/v5-before.db" "$WORK/v5-ro.db"
cp "$WORK/v5-before.db" "$WORK/v5-ro-runs.db"
sqlite3 "$WORK/v5-ro-runs.db" "INSERT INTO run (id, created, policy, page_cluster, cache_pages, faults,
	misses, hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)
	VALUES (1, '2025-01-01T00:00:00Z', 'none', 0, 1000, 75047, 75047, 0, 75047, 0, 0, 0, 75047, 0);" ||
	fail "a run in a version 5 database"
if chattr +i "$WORK/v5-ro.db" "$WORK/v5-ro-runs.db" 2>/dev/null; then
	run 1 report -o "$WORK/v5-ro" "$WORK/v5-ro.db"
	check_eq "$(cat "$ERR")" "swaptrace: report: '$WORK/v5-ro.db': attempt to write a readonly database (the default runs are stored in it: --no-replay draws without them)" \
		"report of a version 5 database that cannot be written, without runs"
	run 0 report --no-replay -o "$WORK/v5-ro" "$WORK/v5-ro.db"
	run 0 report -o "$WORK/v5-ro-runs" "$WORK/v5-ro-runs.db"
	check_eq "$(cat "$ERR")" "" "report of a version 5 database that cannot be written, with runs: stderr"
	grep -q "from 1 replay run in" "$OUT" ||
		fail "report of a version 5 database that cannot be written, with runs: $(tail -1 "$OUT")"
	chattr -i "$WORK/v5-ro.db" "$WORK/v5-ro-runs.db"
	check_eq "$(sqlite3 "$WORK/v5-ro-runs.db" 'PRAGMA user_version')" 5 \
		"report of a version 5 database that cannot be written: not upgraded"
else
	echo "note: the read-only version 5 database case is skipped: chattr +i is not supported here"
fi
sqlite3 "$WORK/v5.db" "ALTER TABLE task DROP COLUMN tgid; UPDATE swt_meta SET value = '4' WHERE key = 'schema_version';
	PRAGMA user_version = 4;" || fail "making a version 4 database"
run 1 info "$WORK/v5.db"
check_eq "$(cat "$ERR")" "swaptrace: info: '$WORK/v5.db': database schema version 4, this swaptrace reads $V: a command that writes it (replay without --no-store; report without --run or --no-replay) upgrades it in place, or ingest again" \
	"info on a version 4 database"

# --- ingest -o through a symbolic link ------------------------------------------------
# written through, as cp and sqlite3 write: the file the link leads to is
# replaced (in its own directory) and the link stays.  The rename replaced
# the link itself with the database, the file it named left as it was.
mkdir -p "$WORK/ln/real" "$WORK/ln/dir"
cp "$WORK/locked.db" "$WORK/ln/real/cap.db"
sqlite3 "$WORK/ln/real/cap.db" "INSERT INTO swt_meta VALUES ('old', 1)"
ln -s ../real/cap.db "$WORK/ln/dir/cap.db"
ln -s cap.db "$WORK/ln/dir/chain.db"
ln -s ../real/new.db "$WORK/ln/dir/dangling.db"
ln -s loop2 "$WORK/ln/dir/loop1"
ln -s loop1 "$WORK/ln/dir/loop2"
for link in chain.db dangling.db; do
	run 0 ingest -q -o "$WORK/ln/dir/$link" "$SAMPLE"
	check_eq "$(cat "$ERR")" "" "ingest -o a symbolic link ($link): stderr"
done
check_eq "$(cd "$WORK/ln" && find . -type l -printf '%p>%l\n' | sort | tr '\n' ' ')" \
	"./dir/cap.db>../real/cap.db ./dir/chain.db>cap.db ./dir/dangling.db>../real/new.db ./dir/loop1>loop2 ./dir/loop2>loop1 " \
	"ingest -o a symbolic link: the links stay"
check_eq "$(cd "$WORK/ln" && find . -type f | sort | tr '\n' ' ')" "./real/cap.db ./real/new.db " \
	"ingest -o a symbolic link: the files written, and no other"
check_eq "$(sqlite3 "$WORK/ln/real/cap.db" "SELECT count(*) FROM swt_meta WHERE key = 'old'")" 0 \
	"ingest -o a link to a database: the database it leads to replaced"
check_eq "$(sqlite3 "$WORK/ln/real/new.db" "SELECT count(*) FROM swap_in")" 75047 \
	"ingest -o a dangling link: the database it names written"
run 1 ingest -q -o "$WORK/ln/dir/loop1" "$SAMPLE"
check_eq "$(cat "$ERR")" "swaptrace: ingest: '$WORK/ln/dir/loop1': cannot create database: Too many levels of symbolic links" \
	"ingest -o a loop of symbolic links"

# --- --swap states the layout, over the metadata file's -----------------------------
run 0 ingest -q -o "$WORK/swap.db" --swap 7:0,start=0 --meta "$SAMPLE/meta.txt" "$WORK/trace.dat"
check_eq "$(lines "$ERR")$(lines "$OUT")" 00 "ingest -q --swap: no output"
check_eq "$(sqlite3 "$WORK/swap.db" "SELECT layout_source FROM capture; SELECT dev >> 20, dev & 1048575, start_sector, assumed FROM swap_area")" \
	"cmdline
7|0|0|0" "--swap 7:0,start=0: the stated layout"
run 0 info --json "$WORK/swap.db"
# the same counts; the capture's facts are the metadata file's, not assumed
same_counts='json.dumps([d[k] for k in ("devices", "events", "swap_in_pages", "swap_out_pages", "lost_events")])'
check_eq "$(json_get "$OUT" "$same_counts")" "$(json_get "$WORK/assumed.json" "$same_counts")" \
	"--swap 7:0,start=0 vs the assumed layout"
# a partition starting at sector 800 of the traced disk: slot = (sector - 800) / 8,
# so every page moves down 100 slots and those up to the new header drop out
run 0 ingest -q -o "$WORK/shifted.db" --swap 7:0,start=800 "$WORK/trace.dat"
cp "$ERR" "$WORK/shifted.err"
check_eq "$(sqlite3 "$WORK/shifted.db" 'SELECT count(*), sum(slot) FROM swap_in')" \
	"$(sqlite3 "$WORK/swap.db" 'SELECT count(*), sum(slot - 100) FROM swap_in WHERE slot > 100')" \
	"--swap 7:0,start=800: slots"

# --- a stated layout that does not fit the trace: a warning, not a failure -----------
# (was: silent, and info showed 0 swap-in pages, or 13 of 75047).  The
# counts come from the start=0 database: pages below a slot or sector.
outside() { # table condition: "N of TOTAL" pages of swap.db's table
	sqlite3 "$WORK/swap.db" "SELECT sum($2) || ' of ' || count(*) FROM $1"
}
run 0 ingest -q -o "$WORK/elsewhere.db" --swap 8:0 "$WORK/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: warning: swap area 8:0 got no I/O; the trace's block I/O is on 7:0, where no swap area is stated" \
	"--swap 8:0 on a trace of 7:0: the warning"
check_eq "$(sqlite3 "$WORK/elsewhere.db" 'SELECT count(*) FROM swap_in')" 0 "--swap 8:0: swap-in pages"
run 0 ingest -q -o "$WORK/spare.db" --swap 7:0 --swap 8:0,path=/dev/spare "$WORK/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: warning: swap area /dev/spare (8:0) got no I/O (the trace's block I/O is on 7:0)" \
	"--swap 7:0 --swap 8:0: the warning for the idle area"
# an area whose device had I/O, none of it in pages of the stated size (a
# page size the trace's 4 KiB swap I/O does not have): it said the area got
# no I/O, and that the trace's I/O was on that very device
{ echo "page_size 16384"; cat "$SAMPLE/meta.txt"; } > "$WORK/meta16k.txt"
run 0 ingest -q -o "$WORK/p16.db" --meta "$WORK/meta16k.txt" "$WORK/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: warning: swap area /dev/loop0 (7:0) got no swap I/O: the block I/O on its device is not in pages of 16384 bytes (the capture's page size: is it right?)" \
	"page size 16 KiB for a trace of 4 KiB pages: the warning"
run 0 ingest -q -o "$WORK/few.db" --swap 7:0,slots=10 "$WORK/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: warning: $(outside swap_in 'slot >= 10') pages read and $(outside swap_out 'slot >= 10') written on 7:0 lie outside its stated swap area (sectors 0-79), so are not counted as swap: other I/O on the device, or a wrong start or size?" \
	"--swap 7:0,slots=10: the warning"
run 0 ingest -q -o "$WORK/past.db" --swap 7:0,start=100000000 "$WORK/trace.dat"
check_eq "$(cat "$ERR")" "swaptrace: ingest: warning: $(outside swap_in 1) pages read and $(outside swap_out 1) written on 7:0 lie outside its stated swap area (from sector 100000000), so are not counted as swap: other I/O on the device, or a wrong start or size?" \
	"--swap 7:0,start=100000000: the warning"
# the shifted partition above: the pages below sector 800 (slot 100 of
# swap.db is its header)
check_eq "$(cat "$WORK/shifted.err")" "swaptrace: ingest: warning: $(outside swap_in 'slot < 100') pages read and $(outside swap_out 'slot < 100') written on 7:0 lie outside its stated swap area (from sector 800), so are not counted as swap: other I/O on the device, or a wrong start or size?" \
	"--swap 7:0,start=800: the warning"

# --- SWT_TIMING: when the stages ended, on stderr ----------------------------------------
# (the command line reports them; the library prints nothing)
SWT_TIMING=1 run 0 ingest -q -o "$WORK/timed.db" --swap 7:0,start=0 --meta "$SAMPLE/meta.txt" "$WORK/trace.dat"
check_eq "$(sed -E 's/[0-9]+\.[0-9]{3} s$/T s/' "$ERR")" "swaptrace: ingest: decoded in T s
swaptrace: ingest: rows written at T s
swaptrace: ingest: facts and indexes at T s" "SWT_TIMING: the stages' times"

# --- info's text: blkparse's lines --------------------------------------------------------
run 0 info "$WORK/swap.db"
# blkparse's layout: reads on the left, writes on the right of each line
for pair in 'Reads Queued:|Writes Queued:' 'Read Dispatches:|Write Dispatches:' \
	    'Reads Completed:|Writes Completed:' 'Read Merges:|Write Merges:'; do
	has "$OUT" "^ ${pair%|*} +[0-9]+, +[0-9]+KiB	 ${pair#*|} +[0-9]+, +[0-9]+KiB\$" \
		"info text: $pair"
done
has "$OUT" '^Device 7:0' "info text: device header"
has "$OUT" '^  block +block_bio_queue +[0-9]+$' "info text: event counts"
has "$OUT" '^  swap-in pages +[0-9]+ +pswpin [0-9]+$' "info text: swap-in pages next to pswpin"
# the numbers are the JSON's
check_eq "$(awk '$1 == "Reads" && $2 == "Queued:" { sub(",", "", $3); print $3 }' "$OUT")" \
	"$(json_get "$WORK/assumed.json" 'd["devices"][0]["reads_queued"]')" "info text: reads queued"
check_eq "$(awk '$5 == "Write" && $6 == "Dispatches:" { sub(",", "", $7); print $7 }' "$OUT")" \
	"$(json_get "$WORK/assumed.json" 'd["devices"][0]["writes_dispatched"]')" "info text: writes dispatched"
finish
