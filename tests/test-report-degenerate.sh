#!/bin/bash
# swaptrace report on databases with little or odd data: no replay runs, no
# swap-ins, one event, all events at one instant, no swap at all, a run with
# zero faults and nothing but totals, two devices, no swap-area rows, runs
# at one page-cluster only, more policies than colours, lines that overlap,
# swap-ins that swapoff read and nothing else.  Every chart must be
# drawn (a valid SVG, a non-blank PNG) and say what is missing, in its
# metadata and in the picture, rather than crash or draw a broken axis.
. "$(dirname "$0")/lib.sh"
need_tool sqlite3
need_tool python3
PNG_CHECK="$SWT_TOOLS_DIR/png-check"
CHECK="python3 $SWT_SOURCE_DIR/tests/report-check.py"
RUNS="python3 $SWT_SOURCE_DIR/tests/report-runs.py"
NO_RUNS="no replay runs stored — run swaptrace replay"
ALL6='"charts": ["policy", "sweep", "request-sizes", "timeline", "heatmap", "ra-window"]'
# the default set's runs at other memory sizes add the memory chart
ALL7='"charts": ["policy", "sweep", "request-sizes", "timeline", "heatmap", "ra-window", "memory"]'
# runs at one page-cluster: no sweep chart
ONE_PC='"charts": ["policy", "request-sizes", "timeline", "heatmap", "ra-window"]'
MEMORY_MARK="memory of the other charts: 205 MiB (the cgroup limit)"

"$SWAPTRACE" ingest -q -o "$WORK/sample.db" "$SWT_SOURCE_DIR/samples/rnd-1dev-pc0" ||
	{ fail "ingest of the sample failed"; finish; }

# variant NAME SQL: a copy of the sample database changed by SQL
variant() {
	cp "$WORK/sample.db" "$WORK/$1.db"
	sqlite3 "$WORK/$1.db" "$2" >/dev/null || fail "$1: preparing the database"
}

# report NAME EXPECT-JSON [OPTIONS...]: draw and check
report() {
	local name=$1 expect=$2 err
	shift 2
	echo "$expect" > "$WORK/$name.expect.json"
	if ! "$SWAPTRACE" report -o "$WORK/$name" "$@" "$WORK/$name.db" >"$WORK/$name.out" \
		2>"$WORK/$name.err"; then
		fail "$name: report failed: $(cat "$WORK/$name.err")"
		return
	fi
	err=$(grep -v -e '^swaptrace: report: warning: no replay runs stored' \
		-e '^swaptrace: report: warning: .*nothing to replay' "$WORK/$name.err")
	[ -z "$err" ] || fail "$name: unexpected output on stderr: $err"
	$CHECK "$WORK/$name" "$PNG_CHECK" "$WORK/$name.expect.json" || fail "$name: charts"
}

# --- no replay runs and --no-replay: the run charts say so, the capture
# charts are drawn ---
variant norun "VACUUM"
report norun "{$ALL6, \"runs\": 0,
 \"policy\": {\"messages\": [\"$NO_RUNS\"], \"messages_exactly\": true, \"series_exactly\": true},
 \"sweep\": {\"messages\": [\"$NO_RUNS\"], \"messages_exactly\": true},
 \"ra-window\": {\"messages\": [\"$NO_RUNS\"], \"messages_exactly\": true},
 \"request-sizes\": {\"messages\": [\"$NO_RUNS\"], \"messages_exactly\": true,
                   \"series\": {\"traced\": 1}, \"series_exactly\": true},
 \"timeline\": {\"messages\": [\"no hit/miss shading: $NO_RUNS\"], \"messages_exactly\": true,
              \"series\": {\"swap-in pages/s\": -1, \"swap-out pages/s\": -1}, \"series_exactly\": true},
 \"heatmap\": {\"panels\": 2, \"messages_exactly\": true}}" --no-replay
grep -q "warning: no replay runs stored" "$WORK/norun.err" || fail "norun: no warning about missing runs"
grep -q "$NO_RUNS" "$WORK/norun/index.html" || fail "norun: index does not say there are no runs"
[ "$(sqlite3 "$WORK/norun.db" 'SELECT count(*) FROM run')" = 0 ] ||
	fail "norun: --no-replay stored runs"
# The advice is for a database that cannot take the runs, not for a path
# that says "readonly": a file that is no database gets its error alone
head -c 4096 /dev/zero | tr '\0' 'x' > "$WORK/readonly.db"
"$SWAPTRACE" report -o "$WORK/readonly" "$WORK/readonly.db" > /dev/null 2> "$WORK/readonly.err"
check_eq "$?:$(cat "$WORK/readonly.err")" "1:swaptrace: report: '$WORK/readonly.db': not a swaptrace database" \
	"report of a file that is no database, named readonly.db"
# An output directory whose index.html would not fit a path (4 KiB):
# refused before any directory of it is made or any run replayed
# (names of 200 bytes, then one of 50-250 that ends the path at 4090 bytes, whatever
# $WORK's length)
long_dir=$WORK/long
while [ $(( 4090 - ${#long_dir} - 1 )) -gt 250 ]; do long_dir=$long_dir/$(printf 'd%.0s' $(seq 200)); done
long_dir=$long_dir/$(printf 'e%.0s' $(seq $(( 4090 - ${#long_dir} - 1 ))))
"$SWAPTRACE" report -o "$long_dir" "$WORK/norun.db" > /dev/null 2> "$WORK/long.err"
check_eq "$?:$(wc -l < "$WORK/long.err")" "1:1" "report into a directory too long for its index.html's path: exit status, lines"
# (the message's 4 KiB cannot hold the path: its middle is cut, marked …)
case "$(cat "$WORK/long.err")" in
"swaptrace: report: '$WORK/long/d"*"…"*"/eee"*"': path too long") ;;
*) fail "report into a directory too long for its index.html's path: $(head -c 80 "$WORK/long.err")...$(tail -c 80 "$WORK/long.err")" ;;
esac
[ ! -e "$WORK/long" ] || fail "report into a directory too long for a path made directories"
[ "$(sqlite3 "$WORK/norun.db" 'SELECT count(*) FROM run')" = 0 ] ||
	fail "report into a directory too long for a path stored runs"
# A database that cannot be written (immutable here: root writes any file
# whatever its mode): the default runs cannot be stored, and the message
# says how to draw without them; --no-replay then works.
cp "$WORK/norun.db" "$WORK/ro.db"
if chattr +i "$WORK/ro.db" 2>/dev/null; then
	"$SWAPTRACE" report -o "$WORK/ro" "$WORK/ro.db" > /dev/null 2> "$WORK/ro.err"
	status=$?
	check_eq "$status" 1 "report of a database it cannot write: exit status"
	grep -q "readonly database (the default runs are stored in it: --no-replay draws without them)" \
		"$WORK/ro.err" || fail "report of a read-only database: '$(cat "$WORK/ro.err")'"
	# named by a path of 4 KiB ("./" over and over, which SQLite opens),
	# the message keeps its cause and the advice after it: the advice was
	# appended into the message's 4 KiB, which the path had filled
	long=$WORK/$(printf './%.0s' $(seq $(( (4080 - ${#WORK}) / 2 ))))ro.db
	"$SWAPTRACE" report -o "$WORK/ro" "$long" > /dev/null 2> "$WORK/ro.err"
	check_eq "$?:$(wc -l < "$WORK/ro.err")" "1:1" "report of a read-only database by a long path: exit status, lines"
	case "$(cat "$WORK/ro.err")" in
	"swaptrace: report: '$WORK/./"*"…"*"/./ro.db': a readonly database (the default runs are stored in it: --no-replay draws without them)") ;;
	*) fail "report of a read-only database by a long path: $(head -c 80 "$WORK/ro.err")...$(tail -c 120 "$WORK/ro.err")" ;;
	esac
	"$SWAPTRACE" report --no-replay -o "$WORK/ro" "$WORK/ro.db" > /dev/null 2> "$WORK/ro.err" ||
		fail "report --no-replay of a read-only database: '$(cat "$WORK/ro.err")'"
	"$SWAPTRACE" replay -p fixed "$WORK/ro.db" > /dev/null 2> "$WORK/ro.err"
	check_eq "$?:$(cat "$WORK/ro.err")" "1:swaptrace: replay: '$WORK/ro.db': a readonly database: the runs cannot be stored in it (--no-store prints them only)" \
		"replay into a read-only database"
	"$SWAPTRACE" replay --no-store -p fixed "$WORK/ro.db" > /dev/null 2> "$WORK/ro.err" ||
		fail "replay --no-store of a read-only database: '$(cat "$WORK/ro.err")'"
	chattr -i "$WORK/ro.db"
	# a writable database in a directory that is not: SQLite could not
	# make its journal at the first insert, so the default runs are
	# refused before they are replayed (once: after, "unable to open
	# database file"), and nothing is written
	mkdir "$WORK/rodir"
	cp "$WORK/norun.db" "$WORK/rodir/ro.db"
	chattr +i "$WORK/rodir"
	"$SWAPTRACE" report -o "$WORK/rodir-report" "$WORK/rodir/ro.db" > /dev/null 2> "$WORK/ro.err"
	check_eq "$?:$(cat "$WORK/ro.err")" "1:swaptrace: report: '$WORK/rodir/ro.db': its directory cannot be written, where SQLite keeps the database's journal (the default runs are stored in it: --no-replay draws without them)" \
		"report of a database in a read-only directory"
	[ ! -e "$WORK/rodir-report" ] || fail "report of a database in a read-only directory left its output directory"
	chattr -i "$WORK/rodir"
else
	echo "note: the read-only database case is skipped: chattr +i is not supported here"
fi

# --- no replay runs: the default set is replayed, stored and drawn ---
variant defaults "VACUUM"
report defaults "{$ALL7, \"runs\": 66,
 \"policy\": {\"series\": {\"none\": 3, \"fixed\": 3, \"adaptive\": 3, \"vma\": 3, \"auto\": 3,
                       \"oracle\": 3}},
 \"memory\": {\"title_has\": \"page-cluster 3\", \"panels\": 3, \"series_exactly\": true,
             \"series\": {\"fixed\": 5, \"auto\": 5, \"oracle\": 5, \"$MEMORY_MARK\": 1},
             \"panel_titles\": [\"Coverage\", \"Accuracy\", \"Pages read per fault\"],
             \"x_labels\": [\"memory of the traced task (MiB)\"], \"messages_exactly\": true},
 \"sweep\": {\"series\": {\"none\": 9, \"fixed\": 9, \"oracle\": 9},
            \"notes_have\": [\"none lies under oracle in Pages read; adaptive lies under auto, the same results at every page-cluster\"]}}"
[ "$(sqlite3 "$WORK/defaults.db" "SELECT count(*), count(DISTINCT policy), min(page_cluster),
	max(page_cluster), sum(faults = (SELECT count(*) FROM swap_in)) FROM run")" = "66|6|0|8|66" ] ||
	fail "defaults: stored runs are not the default set over every swap-in: $(sqlite3 \
		"$WORK/defaults.db" "SELECT count(*), count(DISTINCT policy), min(page_cluster),
		max(page_cluster), sum(faults = (SELECT count(*) FROM swap_in)) FROM run")"
"$SWAPTRACE" report -o "$WORK/defaults2" "$WORK/defaults.db" >/dev/null 2>&1 ||
	fail "defaults: second report failed"
# auto at one page-cluster more still covers adaptive: the note stays
cp "$WORK/defaults.db" "$WORK/pc9.db"
"$SWAPTRACE" replay -p auto -c 9 "$WORK/pc9.db" > /dev/null || fail "pc9: replay"
report pc9 "{\"sweep\": {\"series\": {\"auto\": 10, \"adaptive\": 9},
 \"notes_have\": [\"adaptive lies under auto, the same results at every page-cluster\"]}}"
[ "$(sqlite3 "$WORK/defaults.db" 'SELECT count(*) FROM run')" = 66 ] ||
	fail "defaults: a second report replayed again"
# the memory runs: auto, fixed and oracle at page-cluster 3 (the sample ran
# at 0) and 50, 75, 125 and 150 % of the cgroup limit's 52 480 pages
check_eq "$(sqlite3 "$WORK/defaults.db" "SELECT group_concat(policy || ':' || page_cluster || ':' ||
	cache_pages, ' ') FROM (SELECT * FROM run WHERE cache_pages != 52480 ORDER BY id)")" \
	"auto:3:26240 auto:3:39360 auto:3:65600 auto:3:78720 fixed:3:26240 fixed:3:39360 fixed:3:65600 fixed:3:78720 oracle:3:26240 oracle:3:39360 oracle:3:65600 oracle:3:78720" \
	"defaults: the memory runs"
# the set's runs carry their parameters as replay stores them (defaults
# filled in), so replay finds the set's oracle run stored and report
# --policy finds it by its parameters (the set stored NULL: replay -p
# oracle stored the same run again, and --policy oracle:at=faults found
# none)
check_eq "$(sqlite3 "$WORK/defaults.db" "SELECT group_concat(DISTINCT quote(params)) FROM run WHERE policy = 'oracle'")" \
	"'at=faults'" "defaults: the oracle's parameters stored"
cp "$WORK/defaults.db" "$WORK/again.db"
"$SWAPTRACE" replay -p oracle -c 3 "$WORK/again.db" > /dev/null 2> "$WORK/again.err" || fail "again: replay"
check_eq "$(sqlite3 "$WORK/again.db" 'SELECT count(*) FROM run')" 66 "again: replay -p oracle -c 3 stored the set's run again"
"$SWAPTRACE" report -n -p oracle:at=faults -o "$WORK/again" "$WORK/again.db" > /dev/null 2> "$WORK/again.err" ||
	fail "again: report --policy oracle:at=faults: $(cat "$WORK/again.err")"
# a set stored before (params NULL) and the same run stored by replay are
# one run to the report
sqlite3 "$WORK/again.db" "UPDATE run SET params = NULL WHERE policy = 'oracle'"
"$SWAPTRACE" replay -p oracle -c 3 "$WORK/again.db" > /dev/null 2>&1 || fail "again: replay over NULL parameters"
"$SWAPTRACE" report -n -o "$WORK/again2" "$WORK/again.db" > "$WORK/again2.out" 2>&1 ||
	fail "again: report over NULL parameters: $(cat "$WORK/again2.out")"
grep -q "from 66 replay runs" "$WORK/again2.out" ||
	fail "again: the same oracle run under NULL and default parameters counted twice: $(tail -1 "$WORK/again2.out")"
check_eq "$(head -1 "$WORK/defaults.out")" "swaptrace: report: no replay runs were stored: replayed and stored the default set (66 runs: none, fixed, adaptive, vma, auto, oracle at page-cluster 0-8; auto, fixed, oracle at 50-150 % of the memory)" \
	"defaults: the line on the default set"
# sizes above the replay's limit are left out of the memory runs, and the
# line that says what was replayed says so (it said "50-150 %" still).
# SWT_TEST_MAX_CACHE_PAGES lowers the limit (357848403 pages, hours of
# replay to reach) below 150 % of the sample's 52 480 pages: 78720 is out
variant limit "VACUUM"
out=$(SWT_TEST_MAX_CACHE_PAGES=70000 "$SWAPTRACE" report -o "$WORK/limit" "$WORK/limit.db" \
	2>"$WORK/limit.err" | head -1)
check_eq "$out" "swaptrace: report: no replay runs were stored: replayed and stored the default set (63 runs: none, fixed, adaptive, vma, auto, oracle at page-cluster 0-8; auto, fixed, oracle at 50-125 % of the memory, larger sizes being more than the replay handles)" \
	"limit: the line on the default set"
check_eq "$(sqlite3 "$WORK/limit.db" "SELECT group_concat(DISTINCT cache_pages) FROM
	(SELECT cache_pages FROM run WHERE cache_pages != 52480 ORDER BY cache_pages)")" \
	"26240,39360,65600" "limit: the memory runs"

# --- a report that fails stores no default runs and leaves no files: an
# output directory that cannot be made, a directory where a chart goes (both
# before the replay), runs that cannot be committed after the charts are
# drawn (another reader holds the database; the report was left on disk
# citing runs that were never stored) ---
variant failed "VACUUM"
runs_stored() { sqlite3 "$WORK/failed.db" 'SELECT count(*) FROM run'; }
msg=$("$SWAPTRACE" report -o /proc/nope "$WORK/failed.db" 2>&1 >/dev/null)
check_eq "$?" 1 "failed: an output directory that cannot be made exits 1"
check_eq "$msg" "swaptrace: report: '/proc/nope': cannot create directory: No such file or directory" \
	"failed: message for an output directory that cannot be made"
check_eq "$(runs_stored)" 0 "failed: runs stored by a report that could not make its directory"
# mkdir -p's parents go too, and only the directories the report made: a
# deeper name that cannot be made (over 255 bytes), then a failure once the
# directory is made and the default set replayed (a policy without runs),
# through a directory that existed before and stays
long=$(printf 'x%.0s' $(seq 300))
"$SWAPTRACE" report -o "$WORK/made/a/$long/b" "$WORK/failed.db" >/dev/null 2>&1
check_eq "$?" 1 "failed: a name too long in the output directory exits 1"
check_eq "$(cd "$WORK" && find made 2>/dev/null)" "" \
	"failed: directories left by a report that could not make its directory"
mkdir "$WORK/kept"
msg=$("$SWAPTRACE" report -p nosuch -o "$WORK/made/../kept/a/b" "$WORK/failed.db" 2>&1 >/dev/null)
check_eq "$?:$msg" "1:swaptrace: report: policy 'nosuch' has no replay run in '$WORK/failed.db'" \
	"failed: a policy without runs, after the default set"
check_eq "$(cd "$WORK" && find made kept 2>/dev/null)" "kept" \
	"failed: directories left by a report that failed after making its directory"
check_eq "$(runs_stored)" 0 "failed: runs stored by a report with a policy without runs"
mkdir -p "$WORK/failed-report/sweep.png"
msg=$("$SWAPTRACE" report "$WORK/failed.db" 2>&1 >/dev/null)
check_eq "$?" 1 "failed: a directory in the way of a chart exits 1"
check_eq "$msg" "swaptrace: report: '$WORK/failed-report/sweep.png': is a directory, where the report writes a file" \
	"failed: message for a directory in the way of a chart"
check_eq "$(runs_stored)" 0 "failed: runs stored by a report with a directory in the way"
check_eq "$(ls "$WORK/failed-report")" "sweep.png" "failed: files written before the check failed"
rmdir "$WORK/failed-report/sweep.png"
# a database named as one of the report's files, reported into its own
# directory: refused before anything is written (index.html replaced the
# database with the page, and sweep.svg, drawn as PNG only, was removed
# as the earlier report's stale chart); a link to the database is no
# database there (the report replaces the link)
for name in index.html sweep.svg; do
	mkdir "$WORK/self-$name"
	cp "$WORK/failed.db" "$WORK/self-$name/$name"
	msg=$("$SWAPTRACE" report -f png -o "$WORK/self-$name" "$WORK/self-$name/$name" 2>&1 >/dev/null)
	check_eq "$?:$msg" "1:swaptrace: report: '$WORK/self-$name/$name': is the database, where the report writes or removes a file of its own: give another --output" \
		"a database named $name reported into its directory"
	check_eq "$(ls -A "$WORK/self-$name"):$(sqlite3 "$WORK/self-$name/$name" 'SELECT count(*) FROM run')" \
		"$name:0" "a database named $name reported into its directory: the directory, runs stored"
done
rm "$WORK/self-index.html/index.html"
ln -s ../failed.db "$WORK/self-index.html/index.html"
"$SWAPTRACE" report --no-replay -f svg -o "$WORK/self-index.html" "$WORK/self-index.html/index.html" \
	>/dev/null 2>&1 || fail "a database reported through a link in its output directory"
[ -f "$WORK/self-index.html/index.html" ] && [ ! -L "$WORK/self-index.html/index.html" ] ||
	fail "a database reported through a link in its output directory: no index.html"
check_eq "$(sqlite3 "$WORK/failed.db" 'SELECT count(*) FROM swt_meta')" 1 \
	"a database reported through a link in its output directory: the database"
python3 -c "import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute('BEGIN'); c.execute('SELECT count(*) FROM capture').fetchone()
print('held', flush=True); time.sleep(300)" "$WORK/failed.db" > "$WORK/held" &
HOLDER=$!
for _ in $(seq 1 100); do grep -q held "$WORK/held" && break; sleep 0.1; done
msg=$("$SWAPTRACE" report "$WORK/failed.db" 2>&1 >/dev/null)
rc=$?
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
check_eq "$rc" 1 "failed: runs that cannot be committed exit 1"
check_eq "$(echo "$msg" | tail -1)" "swaptrace: report: '$WORK/failed.db': database is locked" \
	"failed: message for runs that cannot be committed"
check_eq "$(runs_stored)" 0 "failed: runs stored by a report that failed after the replay"
check_eq "$(ls -A "$WORK/failed-report")" "" "failed: files left by a report whose runs were not stored"
"$SWAPTRACE" report "$WORK/failed.db" >/dev/null 2>&1 || fail "failed: report once the way is clear"
check_eq "$(runs_stored)" 66 "failed: runs stored by the report that succeeded"
# a file-size limit (ulimit -f): the default runs outgrow the database, or a
# chart the limit (a database of a tenth of the pages, whose queries need
# no temporary file): one line, as on a full disk, no runs stored, no files
# left, an earlier report whole (SIGXFSZ killed the report, status 153,
# with its staging directory and the runs' hot journal left behind)
variant fsize "VACUUM"
cp "$WORK/fsize.db" "$WORK/fsize.orig"
kib=$(($(stat -c %s "$WORK/fsize.db") / 1024))
(ulimit -f "$kib" && exec "$SWAPTRACE" report -f svg -o "$WORK/fsize" "$WORK/fsize.db") \
	> /dev/null 2> "$WORK/fsize.err"
check_eq "$?:$(cat "$WORK/fsize.err")" \
	"1:swaptrace: report: '$WORK/fsize.db': disk I/O error (File too large)" \
	"file-size limit, the default runs: exit status, message"
cmp -s "$WORK/fsize.db" "$WORK/fsize.orig" || fail "file-size limit, the default runs: the database was changed"
check_eq "$(cd "$WORK" && echo fsize*)" "fsize.db fsize.err fsize.orig" \
	"file-size limit, the default runs: files left"
variant fsize-small "DELETE FROM swap_in WHERE id % 10 != 0; DELETE FROM swap_out WHERE id % 10 != 0; VACUUM"
mkdir "$WORK/fsize-small"
echo "earlier" > "$WORK/fsize-small/index.html"
(ulimit -f 50 && exec "$SWAPTRACE" report --no-replay -o "$WORK/fsize-small" "$WORK/fsize-small.db") \
	> /dev/null 2> "$WORK/fsize.err"
rc=$?
check_eq "$rc:$(wc -l < "$WORK/fsize.err")" "1:1" "file-size limit, a chart: exit status, one line"
grep -qE "^swaptrace: report: '$WORK/fsize-small/\.swaptrace-report-[^/]+/[a-z-]+\.(png|svg|json)': File too large\$" \
	"$WORK/fsize.err" || fail "file-size limit, a chart: $(cat "$WORK/fsize.err")"
check_eq "$(ls -A "$WORK/fsize-small"):$(cat "$WORK/fsize-small/index.html")" "index.html:earlier" \
	"file-size limit, a chart: the earlier report, whole"

# --- the default set is computed before the database is locked: a replay
# into the same database meanwhile is stored, info reads it, and the report
# then stores the rest of its set beside (it stops itself, SIGSTOP, once its runs
# are computed: where the old code held its transaction for the sweep) ---
# wait_stopped PID: until the process is stopped (SIGSTOP), 60 s at most
wait_stopped() {
	for _ in $(seq 1 600); do
		[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = T ] && return 0
		sleep 0.1
	done
	return 1
}
# report_stopped_at POINT WHAT ARGS...: a report of ARGS that stops itself
# at POINT (SWT_TEST_REPORT_STOP), is sent SIGTERM there and continued;
# its exit status, its output in $WORK/interrupted.out and .err
report_stopped_at() {
	local point=$1 what=$2 pid
	shift 2
	SWT_TEST_REPORT_STOP=$point "$SWAPTRACE" report "$@" \
		> "$WORK/interrupted.out" 2> "$WORK/interrupted.err" &
	pid=$!
	wait_stopped "$pid" || fail "$what: never stopped"
	kill -TERM "$pid"
	kill -CONT "$pid"
	wait "$pid"
}
variant concurrent "VACUUM"
SWT_TEST_STOP_BEFORE_STORE=1 "$SWAPTRACE" report -o "$WORK/concurrent" "$WORK/concurrent.db" \
	>/dev/null 2>"$WORK/concurrent.err" &
REPORTER=$!
if ! wait_stopped "$REPORTER"; then
	kill "$REPORTER" 2>/dev/null
	wait "$REPORTER" 2>/dev/null
	fail "concurrent: the report never stopped before storing its runs"
else
	msg=$("$SWAPTRACE" replay -p none -c 0 "$WORK/concurrent.db" 2>&1 >/dev/null)
	check_eq "$?:$msg" "0:" "concurrent: a replay while the report's default set is computed"
	"$SWAPTRACE" info "$WORK/concurrent.db" > /dev/null 2>&1 ||
		fail "concurrent: info while the report's default set is computed"
	kill -CONT "$REPORTER"
	wait "$REPORTER"
	check_eq "$?" 0 "concurrent: the report, continued (stderr: $(cat "$WORK/concurrent.err"))"
	# the replay's none at page-cluster 0 is the default set's: stored once
	check_eq "$(sqlite3 "$WORK/concurrent.db" "SELECT count(*), sum(policy = 'none' AND page_cluster = 0)
		FROM run")" "66|1" "concurrent: the replay's run and the rest of the report's 66 are stored"
	[ -f "$WORK/concurrent/index.html" ] || fail "concurrent: no index.html"
fi
# --- a report stopped by a signal: while it replays, or (stopped by itself
# once its runs are computed, then sent SIGTERM and continued) while it
# stores and draws: it dies of the signal and leaves nothing -- no runs, no
# output directory it made, no staging directory (one was left of
# half-written charts each time), an earlier report whole ---
variant interrupted "VACUUM"
mkdir -p "$WORK/interrupted-old"
echo "earlier" > "$WORK/interrupted-old/index.html"
# (it stops itself as it starts replaying: a signal sent after a fixed
# sleep came before the handler was in place on a loaded machine)
report_stopped_at replay "interrupted while replaying" -o "$WORK/interrupted" "$WORK/interrupted.db"
check_eq "$?:$(cat "$WORK/interrupted.err")" "143:swaptrace: report: interrupted" \
	"interrupted while replaying: exit status (128 + SIGTERM), message"
[ -e "$WORK/interrupted" ] && fail "interrupted while replaying: left $(ls -A "$WORK/interrupted")"
SWT_TEST_STOP_BEFORE_STORE=1 "$SWAPTRACE" report -o "$WORK/interrupted-old" "$WORK/interrupted.db" \
	> /dev/null 2> "$WORK/interrupted.err" &
REPORTER=$!
wait_stopped "$REPORTER"
kill -TERM "$REPORTER"
kill -CONT "$REPORTER"
wait "$REPORTER"
check_eq "$?:$(cat "$WORK/interrupted.err")" "143:swaptrace: report: interrupted" \
	"interrupted while drawing: exit status, message"
check_eq "$(ls -A "$WORK/interrupted-old"):$(cat "$WORK/interrupted-old/index.html")" "index.html:earlier" \
	"interrupted while drawing: the earlier report, whole"
check_eq "$(sqlite3 "$WORK/interrupted.db" 'SELECT count(*) FROM run')" 0 "interrupted: runs stored"
# a stop after the last check between charts, while index.html is written
# (stopped there by itself): the report completed and exited 0; now it is
# asked once more before the runs are committed, and fails as above.  Past
# that, once the runs are committed, the report is moved into place whole
# and the exit status still says it was stopped, in a line
report_stopped_at commit "interrupted before the commit" -o "$WORK/interrupted-old" "$WORK/interrupted.db"
check_eq "$?:$(cat "$WORK/interrupted.err")" "143:swaptrace: report: interrupted" \
	"interrupted before the commit: exit status, message"
check_eq "$(ls -A "$WORK/interrupted-old" | tr '\n' ' '):$(head -c 40 "$WORK/interrupted-old/index.html")" \
	"index.html :earlier" "interrupted before the commit: the earlier report, whole"
check_eq "$(sqlite3 "$WORK/interrupted.db" 'SELECT count(*) FROM run')" 0 \
	"interrupted before the commit: runs stored"
report_stopped_at move "interrupted as the report is moved into place" -f svg \
	-o "$WORK/interrupted-old" "$WORK/interrupted.db"
check_eq "$?:$(cat "$WORK/interrupted.err")" \
	"143:swaptrace: report: interrupted after the report was moved into place: '$WORK/interrupted-old/index.html' is complete" \
	"interrupted as the report is moved into place: exit status, message"
grep -q "charts from 66 replay runs in" "$WORK/interrupted.out" ||
	fail "interrupted as the report is moved into place: stdout $(cat "$WORK/interrupted.out")"
check_eq "$(ls -A "$WORK/interrupted-old" | grep -c -e '^\.' -e '\.png$'):$(grep -c earlier "$WORK/interrupted-old/index.html")" \
	"0:0" "interrupted as the report is moved into place: a staging directory, PNG charts or the earlier index left"
[ -f "$WORK/interrupted-old/sweep.svg" ] || fail "interrupted as the report is moved into place: no sweep.svg"
check_eq "$(sqlite3 "$WORK/interrupted.db" 'SELECT count(*) FROM run')" 66 \
	"interrupted as the report is moved into place: runs stored"
# two reports of an empty database at once: the default set is stored once
# (the second stored all 66 runs again)
variant concurrent2 "VACUUM"
SWT_TEST_STOP_BEFORE_STORE=1 "$SWAPTRACE" report -o "$WORK/concurrent2a" "$WORK/concurrent2.db" \
	>/dev/null 2>"$WORK/concurrent2.err" &
REPORTER=$!
wait_stopped "$REPORTER"
"$SWAPTRACE" report -o "$WORK/concurrent2b" "$WORK/concurrent2.db" > /dev/null 2>&1 ||
	fail "concurrent2: the second report"
kill -CONT "$REPORTER"
wait "$REPORTER"
check_eq "$?" 0 "concurrent2: the first report, continued (stderr: $(cat "$WORK/concurrent2.err"))"
check_eq "$(sqlite3 "$WORK/concurrent2.db" 'SELECT count(*) FROM run')" 66 \
	"concurrent2: the default set stored once"

# --- a readahead capture (reads that are not a fault's demand read): the
# default set is replayed from an approximated demand stream, which stderr
# and every chart drawn from the runs say ---
APPROX="approximate demand stream (the capture's reads mix demand and readahead): see docs/replay-model.md"
variant approx "UPDATE swap_in SET demand = 0 WHERE id % 4 = 0; UPDATE capture SET page_cluster = 3;"
if "$SWAPTRACE" report -o "$WORK/approx" "$WORK/approx.db" >/dev/null 2>"$WORK/approx.err"; then
	check_eq "$(cat "$WORK/approx.err")" \
		"swaptrace: report: warning: 66 of 66 runs replayed an $APPROX" "approx: the warning"
	# captured at page-cluster 3: the kernel's counters mark the cgroup limit
	echo "{$ALL7, \"runs\": 66, \"memory\": {\"notes_have\": [\"$APPROX\"], \"series_exactly\": true,
	 \"series\": {\"fixed\": 5, \"auto\": 5, \"oracle\": 5, \"$MEMORY_MARK\": 1,
	 \"traced kernel at page-cluster 3, cgroup limit (machine-wide /proc/vmstat)\": 2}},
	 \"policy\": {\"notes_have\": [\"$APPROX\"]}, \"sweep\": {\"notes_have\": [\"$APPROX\"]},
	 \"request-sizes\": {\"notes_have\": [\"$APPROX\"]}, \"timeline\": {\"notes_have\": [\"$APPROX\"]},
	 \"ra-window\": {\"notes_have\": [\"$APPROX\"]}}" > "$WORK/approx.expect.json"
	$CHECK "$WORK/approx" "$PNG_CHECK" "$WORK/approx.expect.json" || fail "approx: charts"
	grep -q "approximate" "$WORK/approx/heatmap.json" && fail "approx: the heat map draws no run"
else
	fail "approx: report failed: $(cat "$WORK/approx.err")"
fi
[ "$(sqlite3 "$WORK/approx.db" 'SELECT count(*), sum(approximate) FROM run')" = "66|66" ] ||
	fail "approx: the default runs are not stored as approximate"
grep -rq "approximate demand" "$WORK/defaults"/*.json && fail "defaults: an exact replay's charts say approximate"

# --- no fault addresses (block events only): vma's empty bars are explained,
# on stderr and on the charts that draw vma ---
NOADDR="no fault addresses (block events only): vma reads nothing ahead; see docs/replay-model.md"
variant noaddr "UPDATE swap_in SET address = NULL;"
if "$SWAPTRACE" report -o "$WORK/noaddr" "$WORK/noaddr.db" >/dev/null 2>"$WORK/noaddr.err"; then
	check_eq "$(cat "$WORK/noaddr.err")" "swaptrace: report: warning: 9 vma runs on a capture without fault addresses (block events only): vma reads nothing ahead there" "noaddr: the warning"
	echo "{$ALL7, \"runs\": 66,
	 \"policy\": {\"notes_have\": [\"$NOADDR\"]}, \"sweep\": {\"notes_have\": [\"$NOADDR\"]}}" > "$WORK/noaddr.expect.json"
	$CHECK "$WORK/noaddr" "$PNG_CHECK" "$WORK/noaddr.expect.json" || fail "noaddr: charts"
else
	fail "noaddr: report failed: $(cat "$WORK/noaddr.err")"
fi
grep -rq "no fault addresses" "$WORK/defaults"/*.json && fail "defaults: a capture with addresses says it has none"

# ... and where the traced kernel took VMA readahead (vma_ra_enabled, no
# rotational swap), auto's cluster readahead is not what it ran: said too
NOADDR_AUTO="no fault addresses (block events only): auto uses cluster readahead where the traced kernel used VMA readahead; see docs/replay-model.md"
variant noaddrssd "UPDATE swap_in SET address = NULL; UPDATE swap_area SET rotational = 0;
	UPDATE capture SET vma_ra_enabled = 1;"
if "$SWAPTRACE" report -o "$WORK/noaddrssd" "$WORK/noaddrssd.db" >/dev/null 2>"$WORK/noaddrssd.err"; then
	check_eq "$(cat "$WORK/noaddrssd.err")" "swaptrace: report: warning: 9 vma runs on a capture without fault addresses (block events only): vma reads nothing ahead there
swaptrace: report: warning: 13 auto runs on a capture without fault addresses (block events only): auto uses cluster readahead there, where the traced kernel used VMA readahead" "noaddrssd: the warnings"
	echo "{$ALL7, \"runs\": 66,
	 \"policy\": {\"notes_have\": [\"$NOADDR\", \"$NOADDR_AUTO\"]},
	 \"sweep\": {\"notes_have\": [\"$NOADDR\", \"$NOADDR_AUTO\"]},
	 \"memory\": {\"notes_have\": [\"$NOADDR_AUTO\"]}}" > "$WORK/noaddrssd.expect.json"
	$CHECK "$WORK/noaddrssd" "$PNG_CHECK" "$WORK/noaddrssd.expect.json" || fail "noaddrssd: charts"
	grep -q "vma reads nothing" "$WORK/noaddrssd/memory.json" &&
		fail "noaddrssd: the memory chart, which draws no vma, notes vma"
else
	fail "noaddrssd: report failed: $(cat "$WORK/noaddrssd.err")"
fi
grep -rq "auto uses cluster" "$WORK/noaddr"/*.json &&
	fail "noaddr: a rotational capture's auto is noted as not what the kernel ran"


# --- no swap-ins at all ---
variant noin "DELETE FROM swap_in; DELETE FROM request WHERE write = 0;"
report noin "{$ALL6,
 \"policy\": {\"messages\": [\"no swap-in faults in this capture: nothing to replay\"]},
 \"sweep\": {\"messages\": [\"no swap-in faults in this capture: nothing to replay\"]},
 \"timeline\": {\"messages\": [\"no swap-ins in this capture\"], \"series\": {\"swap-out pages/s\": -1}},
 \"heatmap\": {\"messages\": [\"no swap-ins on 7:0\"], \"messages_exactly\": true, \"series\": {\"swap-ins\": 0}},
 \"request-sizes\": {\"messages\": [\"no read requests on 7:0\"]}}"
# Nothing in the answer: nothing replayed, and nothing the capture says
# would explain it
grep -q "answer" "$WORK/noin.out" && fail "noin: an answer without runs or notes: $(cat "$WORK/noin.out")"
grep -q 'id="answer"' "$WORK/noin/index.html" && fail "noin: index.html has an answer section"
# nor when the traced kernel ran the multi-gen LRU, which cannot be why
variant noinlru "DELETE FROM swap_in; DELETE FROM request WHERE write = 0;
	INSERT INTO capture_fact (section, key, value) VALUES ('', 'lru_gen', '0x0007');"
"$SWAPTRACE" report -o "$WORK/noinlru" "$WORK/noinlru.db" > "$WORK/noinlru.out" 2> "$WORK/noinlru.err" ||
	fail "noinlru: report failed: $(cat "$WORK/noinlru.err")"
grep -q "answer" "$WORK/noinlru.out" && fail "noinlru: an answer of the multi-gen LRU alone: $(cat "$WORK/noinlru.out")"
grep -q 'id="answer"' "$WORK/noinlru/index.html" && fail "noinlru: index.html has an answer section"
# Every swap-in of a workload of zero-filled pages takes no block I/O
# (swpin_zero): nothing to replay, and the answer says what may be why,
# in the terminal and in index.html
variant noinzero "DELETE FROM swap_in; DELETE FROM request WHERE write = 0;
	INSERT INTO vmstat (name, delta) VALUES ('swpin_zero', 4321);"
"$SWAPTRACE" report -o "$WORK/noinzero" "$WORK/noinzero.db" > "$WORK/noinzero.out" 2> "$WORK/noinzero.err" ||
	fail "noinzero: report failed: $(cat "$WORK/noinzero.err")"
NOINZERO="Swap-ins took no block I/O on the traced host (/proc/vmstat, machine-wide: swpin_zero 4321 zero-filled pages): the block trace shows neither them nor their swap-outs, so the replays lack those of the workload."
check_eq "$(head -2 "$WORK/noinzero.out")" "swaptrace: report: answer: none (no swap-in faults in this capture: nothing to replay):
  $NOINZERO" "noinzero: the answer in the terminal"
python3 - "$WORK/noinzero/index.html" "$NOINZERO" <<'EOF' || fail "noinzero: the answer in index.html"
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<div id="answer">(.*?)</div>', page, re.S)
if not m:
    sys.exit("no answer section")
text = html.unescape(re.sub(r"<[^>]+>", " ", m.group(1)))
text = " ".join(text.split())
for want in ("None: no swap-in faults in this capture: nothing to replay.", sys.argv[2]):
    if want not in text:
        sys.exit(f"missing {want!r} in {text!r}")
EOF

# --- one swap event ---
variant one "DELETE FROM swap_out; DELETE FROM swap_in WHERE id > (SELECT min(id) FROM swap_in);
	DELETE FROM request WHERE id NOT IN (SELECT request_id FROM swap_in);"
report one "{$ALL7,
 \"timeline\": {\"messages\": [\"only one swap event in this capture\"], \"messages_exactly\": true},
 \"heatmap\": {\"messages\": [\"only one swap event in this capture\"], \"messages_exactly\": true},
 \"request-sizes\": {\"series\": {\"traced\": 1}, \"categories\": [\"1\"]}}"

# --- every event at one instant ---
variant instant "DELETE FROM swap_out; DELETE FROM swap_in WHERE id > (SELECT min(id) + 2 FROM swap_in);
	UPDATE swap_in SET ts = (SELECT min(ts) FROM swap_in);
	UPDATE capture SET first_ns = (SELECT min(ts) FROM swap_in), last_ns = (SELECT min(ts) FROM swap_in);"
report instant "{$ALL7,
 \"timeline\": {\"messages\": [\"all swap events of this capture at one instant\"]},
 \"heatmap\": {\"messages\": [\"all swap events of this capture at one instant\"]}}"

# --- nothing swapped, no kernel counters, and a run that replayed nothing ---
variant empty "DELETE FROM swap_out; DELETE FROM swap_in; DELETE FROM request; DELETE FROM vmstat;
	INSERT INTO run (id, created, policy, page_cluster, cache_pages, faults, misses, hits,
	  pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)
	VALUES (1, '2025-01-01T00:00:00Z', 'adaptive', 3, 1000, 0, 0, 0, 0, 0, 0, 0, 0, 0);"
report empty "{$ONE_PC, \"runs\": 1,
 \"policy\": {\"series\": {\"adaptive\": 3}, \"series_exactly\": true, \"categories\": [\"7:0 /dev/loop0\"]},
 \"ra-window\": {\"messages\": [\"stored no readahead-window histogram\"]},
 \"timeline\": {\"messages\": [\"no swap-ins or swap-outs in this capture\"]},
 \"heatmap\": {\"messages\": [\"no swap-ins or swap-outs in this capture\"]},
 \"request-sizes\": {\"messages\": [\"no read requests on 7:0\"], \"series\": {\"traced\": 0, \"simulated\": 0}}}"

# --- 16 KiB pages (arm64): the kernel's reads are counted in the capture's
# pages, as replay counts its own, and the axes say so (they were counted
# and labelled in 4 KiB pages: each traced one-page read a 4-page request) ---
variant page16k "UPDATE capture SET page_size = 16384; UPDATE request SET nr_sectors = nr_sectors * 4"
"$SWAPTRACE" replay -p none -c 3 "$WORK/page16k.db" > /dev/null || fail "page16k: replay"
report page16k "{$ONE_PC, \"runs\": 1,
 \"request-sizes\": {\"x_labels\": [\"read request size (pages of 16 KiB)\"], \"categories\": [\"1\"]},
 \"ra-window\": {\"x_labels\": [\"readahead window (pages of 16 KiB)\"]}}" --no-replay

# --- two devices: one panel or group each ---
variant twodev "INSERT INTO device VALUES (7340033, 7, 1, '7:1', '/dev/loop1', 1);
	INSERT INTO swap_area SELECT 1, 7340033, '/dev/loop1', type, priority, rotational,
	  synchronous, start_sector, slots, size_kib, used_kib, assumed FROM swap_area WHERE id = 0;
	UPDATE swap_in SET area_id = 1, dev = 7340033 WHERE slot % 2 = 1;
	UPDATE swap_out SET area_id = 1, dev = 7340033 WHERE slot % 2 = 1;
	UPDATE request SET dev = 7340033 WHERE (sector / 8) % 2 = 1;"
$RUNS --partitions 2 | sqlite3 "$WORK/twodev.db" || fail "twodev: storing runs"
report twodev "{\"runs\": 30,
 \"policy\": {\"categories\": [\"7:0 /dev/loop0|7:1 /dev/loop1\"], \"series\": {\"fixed\": 6}},
 \"request-sizes\": {\"panels\": 2, \"panel_titles\": [\"7:0 /dev/loop0\", \"7:1 /dev/loop1\"],
                   \"messages_exactly\": true},
 \"timeline\": {\"panels\": 2, \"messages_exactly\": true, \"series\": {\"simulated hits/s\": 16}},
 \"heatmap\": {\"panels\": 4, \"messages_exactly\": true},
 \"layout\": {\"series\": {\"traced: 2 devices\": 3, \"spread4: 4 devices\": 3}}}"

# --- two areas on one device (partitions given with --swap): told apart by id ---
variant sharedev "INSERT INTO swap_area SELECT 1, dev, path, type, priority, rotational,
	  synchronous, start_sector + 8 * slots, slots, size_kib, used_kib, assumed FROM swap_area WHERE id = 0;
	UPDATE swap_in SET area_id = 1 WHERE slot % 2 = 1;
	UPDATE swap_out SET area_id = 1 WHERE slot % 2 = 1;"
$RUNS --partitions 2 | sqlite3 "$WORK/sharedev.db" || fail "sharedev: storing runs"
report sharedev "{\"policy\": {\"categories\": [\"7:0 area 0 /dev/loop0|7:0 area 1 /dev/loop0\"]},
 \"request-sizes\": {\"panel_titles\": [\"7:0 area 0 /dev/loop0\", \"7:0 area 1 /dev/loop0\"]}}"

# --- no swap-area rows: the areas named by the swap events stand in ---
variant noarea "DELETE FROM swap_area; DELETE FROM device;"
report noarea "{$ALL6, \"runs\": 0,
 \"request-sizes\": {\"panel_titles\": [\"7:0\"]},
 \"heatmap\": {\"panels\": 2, \"messages_exactly\": true}}"
grep -q "warning: .*no swap areas: nothing to replay" "$WORK/noarea.err" ||
	fail "noarea: no warning that the default set could not be replayed"
# ... and no advice to run replay, which refuses it the same way
grep -q "run swaptrace replay first" "$WORK/noarea.err" &&
	fail "noarea: told to run replay, which has nothing to replay: $(cat "$WORK/noarea.err")"
# --no-replay knows it as well, without replaying: the warning and the run
# charts say why instead of pointing at replay
cp "$WORK/noarea.db" "$WORK/noarea2.db"
NOAREA="no swap areas: nothing to replay"
report noarea2 "{$ALL6, \"runs\": 0,
 \"policy\": {\"messages\": [\"$NOAREA\"], \"messages_exactly\": true},
 \"sweep\": {\"messages\": [\"$NOAREA\"], \"messages_exactly\": true},
 \"ra-window\": {\"messages\": [\"$NOAREA\"], \"messages_exactly\": true},
 \"heatmap\": {\"panels\": 2, \"messages_exactly\": true}}" --no-replay
check_eq "$(cat "$WORK/noarea2.err")" \
	"swaptrace: report: warning: no replay runs stored, and $NOAREA" "noarea: --no-replay's warning"
grep -q "$NOAREA" "$WORK/noarea2/index.html" || fail "noarea: --no-replay: the index does not say why"
# --- no memory to replay against: the advice runs as given (without
# --approximate, replay refused a capture that records no page-cluster) ---
for pc in 0 NULL; do
	variant nomem "UPDATE capture SET mem_limit_bytes = NULL, working_set_bytes = NULL,
		page_cluster = $pc; VACUUM"
	"$SWAPTRACE" report -o "$WORK/nomem" "$WORK/nomem.db" >/dev/null 2>"$WORK/nomem.err"
	advice=$(sed -n "s/.*against; run swaptrace \(replay .*\) first\$/\1/p" "$WORK/nomem.err")
	[ -n "$advice" ] || { fail "nomem, page_cluster $pc: no advice: $(cat "$WORK/nomem.err")"; continue; }
	# shellcheck disable=SC2086 # the advice's words
	"$SWAPTRACE" ${advice/PAGES/52480} --no-store "$WORK/nomem.db" >/dev/null 2>"$WORK/nomem.err" ||
		fail "nomem, page_cluster $pc: '$advice' failed: $(cat "$WORK/nomem.err")"
done
# swap-ins that swapoff read, none faulted: replay leaves them all out
variant swapoff "INSERT INTO task (pid, comm) VALUES (999999, 'swapoff');
	UPDATE swap_in SET pid = 999999;"
SWAPOFF="every swap-in was read by swapoff, none faulted: nothing to replay"
for how in default --no-replay; do
	report "swapoff" "{$ALL6, \"runs\": 0,
 \"policy\": {\"messages\": [\"$SWAPOFF\"], \"messages_exactly\": true},
 \"sweep\": {\"messages\": [\"$SWAPOFF\"], \"messages_exactly\": true}}" \
		$([ $how = default ] || echo --no-replay)
	grep -q "run swaptrace replay" "$WORK/swapoff.err" "$WORK/swapoff"/*.json &&
		fail "swapoff ($how): told to run replay, which has nothing to replay"
	grep -q "nothing to replay" "$WORK/swapoff.err" ||
		fail "swapoff ($how): no warning that there is nothing to replay"
done

# --- runs at one page-cluster only, without per-second series; a policy
# name that is not UTF-8 (U+FFFD in the charts, no complaint from pango),
# with U+FFFF (UTF-8, but no XML character: U+FFFD too) and markup ---
variant onepc "VACUUM"
$RUNS --one-pc 5 --no-series | sqlite3 "$WORK/onepc.db" || fail "onepc: storing runs"
sqlite3 "$WORK/onepc.db" "UPDATE run SET policy = CAST(X'76ff6d61efbfbf3c26' AS TEXT) WHERE policy = 'vma'" ||
	fail "onepc: renaming a policy"
report onepc "{$ONE_PC, \"runs\": 3,
 \"policy\": {\"title_has\": \"page-cluster 5\", \"messages_exactly\": true,
            \"series\": {\"fixed\": 3, \"adaptive\": 3, \"v\\ufffdma\\ufffd<&\": 3}},
 \"timeline\": {\"messages\": [\"no hit/miss shading: run #1 stored no per-second series\"],
              \"messages_exactly\": true}}"

# --- more policies than the palette has colours ---
variant many "VACUUM"
$RUNS --one-pc 3 --no-series | sqlite3 "$WORK/many.db" || fail "many: storing runs"
sqlite3 "$WORK/many.db" "WITH k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 7)
	INSERT INTO run (id, created, policy, page_cluster, cache_pages, layout, faults, misses,
	  hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)
	SELECT 100 + n, created, 'p' || n, page_cluster, cache_pages, layout, faults, misses, hits,
	  pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges
	FROM run, k WHERE id = 1;
	UPDATE run SET misses = misses - 1, hits = hits + 1, ra_pages = ra_pages + 1,
	  ra_hits = ra_hits + 1 WHERE policy = 'p7';" ||
	fail "many: storing more policies"
# p7, the last, waits least of the other policies: the answer names it, so
# the charts keep it and leave out the two before it, by name
report many "{\"runs\": 10,
 \"policy\": {\"notes_have\": [\"2 more policies at this page-cluster are not shown (p5, p6); pick runs with --run\"],
            \"series\": {\"p7\": 3}},
 \"ra-window\": {\"notes_have\": [\"2 more policies at this page-cluster are not shown (p5, p6)\"]}}"

# --- names, colours and memory of the compared runs, from real replays ---
# replay run twice: the repeated runs are drawn once; fixed keeps the
# built-in colour it has in every report (#e69f00), here alone.  A plugin
# at a path of 200+ characters, with two parameter sets: two series, named
# by the file name with their parameters.  leap with its defaults, given or
# not (in any order), is plain "leap" in its own colour (#f0e442, however
# many other runs there are); with other values a parameter set.  A memory sweep with the same
# runs at each size compares the capture's own memory (no memory note); a
# sweep without it names the memory it shows.
plugin="$SWT_BUILD_DIR/samples/libswt-policy-forward.so"
longdir="$WORK/$(printf 'd%.0s' $(seq 1 120))/$(printf 'e%.0s' $(seq 1 60))"
mkdir -p "$longdir" && cp "$plugin" "$longdir/libswt-policy-forward.so" || fail "copying the plugin"
cp "$WORK/sample.db" "$WORK/names.db"
for i in 1 2; do
	"$SWAPTRACE" replay -p fixed -c 3 "$WORK/names.db" > /dev/null || fail "names: replay $i"
done
"$SWAPTRACE" replay -p "$longdir/libswt-policy-forward.so:pages=3" \
	-p "$longdir/libswt-policy-forward.so:pages=60" -c 2,3 "$WORK/names.db" > /dev/null ||
	fail "names: plugin replay"
"$SWAPTRACE" replay -p leap:min_window=auto,history=32 -p leap:history=64 -c 3 \
	"$WORK/names.db" > /dev/null || fail "names: leap replay"
check_eq "$(sqlite3 "$WORK/names.db" "SELECT group_concat(params, ' ') FROM run WHERE policy = 'leap'")" \
	"history=32,min_window=auto history=64,min_window=auto" \
	"leap's parameters stored in its own order"
cp "$WORK/sample.db" "$WORK/memtie.db"
"$SWAPTRACE" replay -p fixed -p auto -p adaptive -c 3 -m 25%,100%,50% "$WORK/memtie.db" > /dev/null ||
	fail "memtie: replay"
cp "$WORK/sample.db" "$WORK/memother.db"
"$SWAPTRACE" replay -p fixed -c 3 -m 25%,50% "$WORK/memother.db" > /dev/null ||
	fail "memother: replay"
for n in names memtie memother; do
	"$SWAPTRACE" report --no-replay -o "$WORK/$n" "$WORK/$n.db" > "$WORK/$n.out" 2>&1 ||
		fail "$n: report: $(cat "$WORK/$n.out")"
done
# --policy takes a plugin by the file name its legends give it (only its
# path was taken: "policy 'libswt-policy-forward.so' has no replay run"),
# and a file name of two plugins asks for the path
"$SWAPTRACE" report --no-replay --policy libswt-policy-forward.so -o "$WORK/names-pol" \
	"$WORK/names.db" > /dev/null 2>&1 || fail "names: --policy by the plugin's file name"
grep -q '"title": "Read request sizes .*(libswt-policy-forward.so (pages=3), page-cluster 3)"' \
	"$WORK/names-pol/request-sizes.json" ||
	fail "names: --policy by file name: not the plugin's run: $(grep -m1 title "$WORK/names-pol/request-sizes.json")"
# and with parameters, matched against its stored ones without loading it
# (the plugin is moved away: drawing stored runs needs no plugin file, and
# by file name with parameters it was "unknown policy")
mv "$longdir/libswt-policy-forward.so" "$longdir/moved.so" || fail "moving the plugin away"
"$SWAPTRACE" report --no-replay --policy libswt-policy-forward.so:pages=60 -o "$WORK/names-pol60" \
	"$WORK/names.db" > /dev/null 2>&1 || fail "names: --policy by file name with parameters"
grep -q '"title": "Read request sizes .*(libswt-policy-forward.so (pages=60), page-cluster 3)"' \
	"$WORK/names-pol60/request-sizes.json" ||
	fail "names: --policy file name:pages=60: not that run: $(grep -m1 title "$WORK/names-pol60/request-sizes.json")"
msg=$("$SWAPTRACE" report --no-replay --policy "$longdir/libswt-policy-forward.so:pages=7" \
	-o "$WORK/names-pol7" "$WORK/names.db" 2>&1 >/dev/null)
check_eq "$?:${msg##*: }" "1:policy '$longdir/libswt-policy-forward.so:pages=7' has no replay run in '$WORK/names.db'" \
	"names: --policy with parameters no run has"
mv "$longdir/moved.so" "$longdir/libswt-policy-forward.so"
cp "$WORK/names.db" "$WORK/names2.db"
mkdir -p "$WORK/other" && cp "$plugin" "$WORK/other/libswt-policy-forward.so" &&
"$SWAPTRACE" replay -p "$WORK/other/libswt-policy-forward.so" -c 3 "$WORK/names2.db" > /dev/null ||
	fail "names2: replay of a second plugin of that file name"
msg=$("$SWAPTRACE" report --no-replay --policy libswt-policy-forward.so -o "$WORK/names2" \
	"$WORK/names2.db" 2>&1 >/dev/null)
check_eq "$?" 1 "names2: --policy naming two plugins exits 1, as an unknown one does"
case "$msg" in
*"names 2 plugins in '$WORK/names2.db', give its path: '"*"/libswt-policy-forward.so' or '$WORK/other/libswt-policy-forward.so'") ;;
*) fail "names2: --policy naming two plugins: $msg" ;;
esac
# three: each path named (only the first two were)
mkdir -p "$WORK/third" && cp "$plugin" "$WORK/third/libswt-policy-forward.so" &&
"$SWAPTRACE" replay -p "$WORK/third/libswt-policy-forward.so" -c 3 "$WORK/names2.db" > /dev/null ||
	fail "names2: replay of a third plugin of that file name"
msg=$("$SWAPTRACE" report --no-replay --policy libswt-policy-forward.so -o "$WORK/names3" \
	"$WORK/names2.db" 2>&1 >/dev/null)
case "$msg" in
*"names 3 plugins in '$WORK/names2.db', give its path: '"*"/libswt-policy-forward.so', '$WORK/other/libswt-policy-forward.so' or '$WORK/third/libswt-policy-forward.so'") ;;
*) fail "names3: --policy naming three plugins: $msg" ;;
esac
# --policy with --run of layout runs only: no traced-layout run, so no
# memory to compare ("the memory the charts compare (-1 pages...)")
cp "$WORK/sample.db" "$WORK/layonly.db"
"$SWAPTRACE" replay -p auto -c 3 -l 2 "$WORK/layonly.db" > /dev/null || fail "layonly: replay"
msg=$("$SWAPTRACE" report --no-replay -r "$(sqlite3 "$WORK/layonly.db" 'SELECT max(id) FROM run')" \
	-p auto -o "$WORK/layonly" "$WORK/layonly.db" 2>&1 >/dev/null)
check_eq "$?:$msg" \
	"1:swaptrace: report: policy 'auto' has no selected replay run on the traced layout in '$WORK/layonly.db'" \
	"layonly: --policy with layout runs only"
# --policy with parameters names one parameter set of a policy (the first
# leap run was taken, whatever its parameters)
"$SWAPTRACE" report --no-replay --policy leap:history=064 -o "$WORK/names-leap" \
	"$WORK/names.db" > /dev/null 2>&1 || fail "names: --policy leap:history=064"
grep -q '"title": "Read request sizes .*(leap (history=64,min_window=auto), page-cluster 3)"' \
	"$WORK/names-leap/request-sizes.json" ||
	fail "names: --policy with parameters: not that run: $(grep -m1 title "$WORK/names-leap/request-sizes.json")"
msg=$("$SWAPTRACE" report --no-replay --policy leap:history=16 -o "$WORK/names-leap16" \
	"$WORK/names.db" 2>&1 >/dev/null)
check_eq "$?:$msg" \
	"1:swaptrace: report: policy 'leap:history=16,min_window=auto' has no replay run in '$WORK/names.db'" \
	"names: --policy with parameters no run has"
python3 - "$WORK" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
w = sys.argv[1]
meta = lambda n, c: json.load(open("%s/%s/%s.json" % (w, n, c)))
legend = {e["name"]: e["color"] for e in meta("names", "policy")["legend"]
          if not e["name"].startswith("traced kernel")}
plugin = "libswt-policy-forward.so (pages=%d)"
leap64 = "leap (history=64,min_window=auto)"
assert set(legend) == {"fixed", "leap", leap64, plugin % 3, plugin % 60}, legend
assert legend["fixed"] == "#e69f00" and legend["leap"] == "#f0e442", legend
assert len(set(legend.values())) == 5 and "#000000" not in legend.values(), legend
sweep = {s["name"]: s["points"] for s in meta("names", "sweep")["series"]
         if not s["name"].startswith("traced kernel")}
assert sweep == {"fixed": 1, "leap": 1, leap64: 1, plugin % 3: 2, plugin % 60: 2}, sweep
for c in ("sweep", "ra-window", "request-sizes"):
    for e in meta("names", c)["legend"]:
        if e["name"] in legend:
            assert e["color"] == legend[e["name"]], (c, e)
    assert not any("Replayed with" in n for n in meta("names", c)["notes"]), c
tie = meta("memtie", "policy")
assert not any("Replayed with" in n for n in tie["notes"]), tie["notes"]
# auto is adaptive on this rotational capture: its line, under adaptive's, is named
mem = meta("memtie", "memory")["notes"]
assert "auto lies under adaptive, the same results at every memory size" in mem, mem
for c in ("policy", "ra-window", "request-sizes", "timeline"):
    notes = meta("memother", c)["notes"]
    assert any(n.startswith("Replayed with 51 MiB of memory (25% of the capture's 205 MiB)")
               for n in notes), (c, notes)
# the sample's start-up burst of swap-outs (70k pages/s) is off the scale of
# its swap-ins (2k pages/s): the timeline says so rather than flatten them
tl = meta("names", "timeline")["notes"]
assert any(n.startswith("Swap-outs peak at ") and "off the scale: the panels are scaled to "
           "the swap-ins and the shading." in n for n in tl), tl
print("names, colours and memory ok")
PY
grep -q "traced layout, 52.*480 pages of memory" "$WORK/memtie.out" ||
	fail "memtie: the answer compares the capture's memory: $(head -1 "$WORK/memtie.out")"

# --- seven layouts: their specs do not fit the columns word by word, so the
# axis names them A..G and a note spells each one out (never "5" / "12M") ---
cp "$WORK/sample.db" "$WORK/layouts7.db"
"$SWAPTRACE" replay -p auto -c 3 -l traced -l 1 -l 2 -l 4:spread -l 8:ssd -l 2:hdd:era=4.11 \
	-l devices=512M@5,512M@5,1G@1/ssd "$WORK/layouts7.db" > /dev/null &&
"$SWAPTRACE" report --no-replay -o "$WORK/layouts7" "$WORK/layouts7.db" > /dev/null ||
	fail "layouts7: replay and report"
python3 - "$WORK/layouts7/layout.json" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
m = json.load(open(sys.argv[1]))
assert [p["categories"] for p in m["panels"]] == ["A|B|C|D|E|F|G"] * 3, m["panels"]
key = [n for n in m["notes"] if n.startswith("Layouts: ")]
assert key == ["Layouts: A = traced: 1 device; B = 1: 1 device; C = 2: 2 devices; "
               "D = 4: 4 devices, mean of 16 device offsets; E = 8:ssd: 8 devices; "
               "F = 2:hdd:era=4.11: 2 devices; G = devices=512M@5,512M@5,1G@1/ssd: 3 devices"], key
PY

# --- layouts replayed for another policy than the shown run's (auto, the
# first that reads ahead): the answer speaks of the layouts the chart draws
# (fixed's), against fixed's traced run, where it had said nothing ---
cp "$WORK/sample.db" "$WORK/otherlayout.db"
"$SWAPTRACE" replay -p auto -p fixed -c 3 "$WORK/otherlayout.db" > /dev/null &&
"$SWAPTRACE" replay -p fixed -c 3 -l 2 "$WORK/otherlayout.db" > /dev/null &&
"$SWAPTRACE" report --no-replay -o "$WORK/otherlayout" "$WORK/otherlayout.db" \
	> "$WORK/otherlayout.out" 2>&1 || fail "otherlayout: replay and report"
grep -q '"title": "Swap layout: .*, fixed at page-cluster 3"' "$WORK/otherlayout/layout.json" ||
	fail "otherlayout: the layout chart draws fixed's layouts"
# fixed's own traced run, its thousands apart as the report groups them
traced=$(sqlite3 "$WORK/otherlayout.db" "SELECT misses FROM run WHERE policy = 'fixed' AND layout = 'traced'")
grep -q "^  fixed at page-cluster 3 on the simulated layout 2: .* against the traced layout's ${traced%???}.${traced: -3}\.$" \
	"$WORK/otherlayout.out" ||
	fail "otherlayout: no answer line for the layout the chart draws: $(cat "$WORK/otherlayout.out")"

# --- layout runs of one policy with other model settings: a column of each
# kind under one title made 2 devices turn 133k requests into 57k (the
# traced column --max-request-kib 4's, the other a plain replay's) ---
cp "$WORK/sample.db" "$WORK/modellayout.db"
"$SWAPTRACE" replay -p fixed -c 3 -l 2 "$WORK/modellayout.db" > /dev/null &&
"$SWAPTRACE" replay -p fixed -c 3 -l traced -l 2 --max-request-kib 4 "$WORK/modellayout.db" \
	> /dev/null &&
"$SWAPTRACE" report --no-replay -o "$WORK/modellayout" "$WORK/modellayout.db" \
	> "$WORK/modellayout.out" 2>&1 || fail "modellayout: replay and report"
python3 - "$WORK/modellayout/layout.json" <<'PY' || FAILURES=$((FAILURES + 1))
import json, sys
m = json.load(open(sys.argv[1]))
assert m["title"].endswith("fixed (--max-request-kib 4) at page-cluster 3"), m["title"]
assert [s["name"] for s in m["series"]] == ["traced: 1 device", "2: 2 devices"], m["series"]
PY
grep -q "^  fixed (--max-request-kib 4) at page-cluster 3 on the simulated layout 2: .* against" \
	"$WORK/modellayout.out" || fail "modellayout: answer: $(cat "$WORK/modellayout.out")"

# ... at every page-cluster: the notes count the policies left out, not
# their runs (10 policies, 9 runs each: 2 more, not 18)
variant manypc "VACUUM"
$RUNS --no-series | sqlite3 "$WORK/manypc.db" || fail "manypc: storing runs"
sqlite3 "$WORK/manypc.db" "WITH k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 7)
	INSERT INTO run (id, created, policy, page_cluster, cache_pages, layout, faults, misses,
	  hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges)
	SELECT 1000 + 100 * n + id, created, 'p' || n, page_cluster, cache_pages, layout, faults,
	  misses, hits, pages_read, ra_pages, ra_hits, ra_wasted, read_requests, read_merges
	FROM run, k WHERE policy = 'fixed' AND layout = 'traced';" ||
	fail "manypc: storing more policies"
report manypc "{\"sweep\": {\"notes_have\": [\"2 more policies are not shown\"]}}"

# --- lines a page or two apart (up to page-cluster 2 leap reads as fixed
# does on this random stream, but for its trend windows and first faults:
# its smallest window, 4 pages, is the whole cluster): the later one
# covers the earlier, and the chart says so ---
variant near "VACUUM"
"$SWAPTRACE" replay -p fixed -p leap -c 0-2 "$WORK/near.db" >/dev/null || fail "near: replay"
[ "$(sqlite3 "$WORK/near.db" "SELECT count(*) FROM run a JOIN run b ON b.page_cluster = a.page_cluster
	WHERE a.policy = 'fixed' AND b.policy = 'leap' AND a.pages_read != b.pages_read")" != 0 ] ||
	fail "near: fixed and leap came out identical, which this case is not about"
report near "{$ALL6, \"runs\": 6,
 \"sweep\": {\"series\": {\"fixed\": 3, \"leap\": 3},
            \"notes_have\": [\"fixed lies under leap, within 0.5 % at every page-cluster\"]}}"
# --- a damaged capture.last_ns, 2^60 ns after first_ns: the timeline and the
# heat map span the swap events they draw, and come out as an undamaged
# copy's (the timeline's per-second shading was sized by capture.last_ns:
# 50 s of drawing at 2^56 ns, "out of memory" or no end at 2^60) ---
variant spanok "VACUUM"
$RUNS | sqlite3 "$WORK/spanok.db" || fail "span: storing runs"
cp "$WORK/spanok.db" "$WORK/span.db"
sqlite3 "$WORK/span.db" "UPDATE capture SET last_ns = first_ns + (1 << 60)" || fail "span: damaging"
"$SWAPTRACE" report -o "$WORK/spanok" "$WORK/spanok.db" >/dev/null 2>&1 || fail "span: undamaged report"
if timeout 120 "$SWAPTRACE" report -o "$WORK/span" "$WORK/span.db" >/dev/null 2>"$WORK/span.err"; then
	for chart in timeline heatmap; do
		cmp -s "$WORK/spanok/$chart.json" "$WORK/span/$chart.json" ||
			fail "span: $chart differs from the undamaged copy's: $(diff "$WORK/spanok/$chart.json" \
				"$WORK/span/$chart.json" | head -n 4)"
	done
else
	fail "span: report failed or ran over 2 minutes: $(head -c 300 "$WORK/span.err")"
fi
# one swap-out 2^40 ns (18 minutes) on: bins of 10 s, and the per-second
# series shaded per bin, not per second
variant long "UPDATE swap_out SET ts = ts + (1 << 40) WHERE id = (SELECT max(id) FROM swap_out)"
$RUNS | sqlite3 "$WORK/long.db" || fail "long: storing runs"
report long "{\"timeline\": {\"notes_have\": [\"Rates over 10 s bins, the shading's too.\"],
 \"series\": {\"simulated hits/s\": 2, \"simulated misses/s\": 2}}}"
# a day and more (2^47 ns, 39 hours): bins of 1000 seconds, so written,
# and time in hours
variant day "UPDATE swap_out SET ts = ts + (1 << 47) WHERE id = (SELECT max(id) FROM swap_out)"
$RUNS | sqlite3 "$WORK/day.db" || fail "day: storing runs"
report day "{\"timeline\": {\"notes_have\": [\"Rates over 1000 s bins, the shading's too.\"],
 \"x_labels\": [\"time since capture start (h)\"]},
 \"heatmap\": {\"x_labels\": [\"time since capture start (h)\"]}}"
# the last bin ends at the last event, not a whole bin on: its rate is over
# the time it covers.  7000 swap-outs over the capture's last 70 ms (bins of
# 100 ms) are 100 000 pages/s, not 70 000 (below the sample's own burst);
# the timeline's last second was shaded at a third of its rate on rnd-4dev-pc3
variant tail "UPDATE swap_out SET ts = (SELECT first_ns FROM capture) + 11000000000
	+ 10000 * (id - (SELECT max(id) FROM swap_out) + 6999)
	WHERE id > (SELECT max(id) FROM swap_out) - 7000"
report tail "{\"timeline\": {}}" --no-replay
python3 - "$WORK/tail/timeline.json" <<'PY' || FAILURES=$((FAILURES + 1))
import json, re, sys
notes = json.load(open(sys.argv[1]))["notes"]
peak = [n for n in notes if n.startswith("Swap-outs peak at ")]
assert peak, notes
rate = int(re.sub(r"\D", "", peak[0].split(" pages/s")[0]))
assert 99000 <= rate <= 101000, peak
PY
# --- a run row no replay stores (edited by hand to page-cluster -3, or with
# more pages read ahead than read): refused, naming the database and the
# run, with nothing written; --run leaves the row out ---
variant edited "VACUUM"
$RUNS | sqlite3 "$WORK/edited.db" || fail "edited: storing runs"
id=$(sqlite3 "$WORK/edited.db" "SELECT max(id) FROM run")
other=$(sqlite3 "$WORK/edited.db" "SELECT min(id) FROM run")
for damage in "page_cluster = -3:page_cluster outside 0..16" \
	"ra_pages = ra_pages + 1:ra_pages are not pages_read - misses" \
	"hits = hits + 1:faults are not misses + hits" \
	"page_cluster = page_cluster + (1 << 32):page_cluster outside 0..16" \
	"misses = 1 << 62, hits = 1 << 62, faults = 1:faults are not misses + hits" \
	"page_cluster = 'abc':a count or setting that is no integer" \
	"ra_hits = ra_hits + 0.5:a count or setting that is no integer" \
	"policy = '':an empty policy or layout name" \
	"layout = '':an empty policy or layout name"; do
	cp "$WORK/edited.db" "$WORK/edited1.db"
	sqlite3 "$WORK/edited1.db" "UPDATE run SET ${damage%%:*} WHERE id = $id" || fail "edited: damaging"
	rm -rf "$WORK/edited1"
	if "$SWAPTRACE" report -o "$WORK/edited1" "$WORK/edited1.db" >/dev/null 2>"$WORK/edited1.err"; then
		fail "edited: a run with ${damage%%:*} was drawn"
	else
		check_eq "$(cat "$WORK/edited1.err")" \
			"swaptrace: report: '$WORK/edited1.db': run $id is not as replay stores runs (${damage#*:}); replay it again or leave it out with --run"
	fi
	[ ! -e "$WORK/edited1" ] || fail "edited: ${damage%%:*}: the report directory was made"
	"$SWAPTRACE" report -o "$WORK/edited1" --run "$other" "$WORK/edited1.db" >/dev/null 2>&1 ||
		fail "edited: --run $other did not leave run $id out"
done
# ... its histograms and per-second series too (a negative request count
# took a bar off the request sizes chart, one huge second flattened the
# timeline, each with exit 0); on a run with both (the layout runs here
# have no series)
sid=$(sqlite3 "$WORK/edited.db" "SELECT max(run_id) FROM run_series")
for damage in \
	"UPDATE run_histogram SET count = -5 WHERE run_id = @ AND kind = 'request_pages' AND bucket = (SELECT min(bucket) FROM run_histogram WHERE run_id = @ AND kind = 'request_pages'):a histogram count that is no count" \
	"UPDATE run_histogram SET count = count + 1 WHERE run_id = @ AND kind = 'request_pages' AND partition = 0 AND bucket = (SELECT min(bucket) FROM run_histogram WHERE run_id = @ AND kind = 'request_pages'):its request sizes do not add up to its read requests" \
	"UPDATE run_series SET faults = 900000000000000000, hits = 899999999999998225 WHERE run_id = @ AND second = (SELECT min(second) FROM run_series WHERE run_id = @):a second whose faults are not hits + misses" \
	"UPDATE run_series SET faults = faults + 1000000, misses = misses + 1000000 WHERE run_id = @ AND second = (SELECT min(second) FROM run_series WHERE run_id = @):a second with more faults, hits or pages read than the whole run"; do
	cp "$WORK/edited.db" "$WORK/edited1.db"
	sqlite3 "$WORK/edited1.db" "$(printf '%s' "${damage%%:*}" | sed "s/@/$sid/g")" || fail "edited: damaging"
	rm -rf "$WORK/edited1"
	if "$SWAPTRACE" report -o "$WORK/edited1" "$WORK/edited1.db" >/dev/null 2>"$WORK/edited1.err"; then
		fail "edited: a run with ${damage##*:} was drawn"
	else
		check_eq "$(cat "$WORK/edited1.err")" \
			"swaptrace: report: '$WORK/edited1.db': run $sid is not as replay stores runs (${damage##*:}); replay it again or leave it out with --run"
	fi
	"$SWAPTRACE" report -o "$WORK/edited1" --run "$other" "$WORK/edited1.db" >/dev/null 2>&1 ||
		fail "edited: --run $other did not leave run $sid's ${damage##*:} out"
done
# ... a run's per-partition row too (the policy chart drew -66.6% coverage),
# but not one a run deleted alone left behind
cp "$WORK/edited.db" "$WORK/edited1.db"
sqlite3 "$WORK/edited1.db" "UPDATE run_partition SET hits = -1 WHERE run_id = $id" || fail "edited: damaging"
rm -rf "$WORK/edited1"
if "$SWAPTRACE" report -o "$WORK/edited1" "$WORK/edited1.db" >/dev/null 2>"$WORK/edited1.err"; then
	fail "edited: a run_partition row with a negative count was drawn"
else
	check_eq "$(cat "$WORK/edited1.err")" \
		"swaptrace: report: '$WORK/edited1.db': a run_partition row of run $id is not as replay stores runs (a negative count); replay it again or leave it out with --run"
fi
"$SWAPTRACE" report -o "$WORK/edited1" --run "$other" "$WORK/edited1.db" >/dev/null 2>&1 ||
	fail "edited: --run $other did not leave run $id's partition row out"
sqlite3 "$WORK/edited1.db" "DELETE FROM run WHERE id = $id" || fail "edited: deleting the run"
"$SWAPTRACE" report -o "$WORK/edited1" "$WORK/edited1.db" >/dev/null 2>&1 ||
	fail "edited: the partition row of a deleted run was read"
# ... and a slot a hand edit made text, which SQLite keeps in an INTEGER
# column and the heatmap drew at slot 0: refused as replay refuses it,
# naming the table and row, without runs (--no-replay, or the default set
# replayed) or with them (--run), nothing written, an earlier report whole;
# in a row of an area swap_area does not list too, and in a swap-entry
# probe, which the report did not look at (three restated from the first
# reads, as a probed capture has them); and a slot below 1 (0 is the
# area's header), which the heatmap drew as well
mkdir "$WORK/textslot-old"
echo "earlier" > "$WORK/textslot-old/index.html"
probes="INSERT INTO swap_probe (id, ts, pid, kind, area_id, slot, address)"
probes+=" SELECT id, ts, pid, 'fault', area_id, slot, address FROM swap_in ORDER BY id LIMIT 3;"
for damage in "swap_in|SELECT min(id) + 100 FROM swap_in|'7abc'||" "swap_out|SELECT max(id) FROM swap_out|'x'||" \
	"swap_in|SELECT min(id) + 100 FROM swap_in|'7abc'| of an unlisted area|UPDATE swap_in SET area_id = 9 WHERE id = (SELECT min(id) + 100 FROM swap_in);" \
	"swap_probe|SELECT min(id) + 1 FROM swap_in|'7abc'||$probes" \
	"swap_out|SELECT max(id) FROM swap_out|0||" "swap_probe|SELECT min(id) + 1 FROM swap_in|-5||$probes" \
	"swap_in|SELECT min(id) FROM swap_in|262144||"; do
	IFS='|' read -r table sql value where prepare <<< "$damage"
	why=$(slot_complaint "$value")
	id=$(sqlite3 "$WORK/sample.db" "$sql")
	variant textslot "$prepare UPDATE $table SET slot = $value WHERE id = $id"
	cp "$WORK/edited.db" "$WORK/textslot-runs.db"
	sqlite3 "$WORK/textslot-runs.db" "$prepare UPDATE $table SET slot = $value WHERE id = $id" ||
		fail "text slot: damaging $table$where"
	for args in "--no-replay -o $WORK/textslot-new textslot" "-o $WORK/textslot-new textslot" \
		"--run $other -o $WORK/textslot-new textslot-runs" "--no-replay -o $WORK/textslot-old textslot"; do
		# shellcheck disable=SC2086
		"$SWAPTRACE" report ${args% *} "$WORK/${args##* }.db" > /dev/null 2> "$WORK/textslot.err"
		check_eq "$?:$(cat "$WORK/textslot.err")" \
			"1:swaptrace: report: '$WORK/${args##* }.db': $table row $id: slot $value $why: not a database ingest wrote" \
			"slot $value in $table$where: report ${args% *}"
	done
	[ ! -e "$WORK/textslot-new" ] || fail "text slot in $table$where: left $(ls -A "$WORK/textslot-new")"
	check_eq "$(ls -A "$WORK/textslot-old"):$(cat "$WORK/textslot-old/index.html")" "index.html:earlier" \
		"text slot in $table$where: the earlier report, whole"
	check_eq "$(sqlite3 "$WORK/textslot.db" 'SELECT count(*) FROM run')" 0 "text slot in $table$where: runs stored"
done
# --- a damaged page that only a read with a default of its own reads: the
# traced kernel's vmstat (the reference points), the devices' request
# limits (capture_fact); the report was drawn without them, exit 0.  With
# runs stored and with the default set to replay: one line naming the
# database, nothing written, an earlier report whole, no runs stored ---
for table in vmstat capture_fact; do
	cp "$WORK/edited.db" "$WORK/damaged-runs.db"
	cp "$WORK/sample.db" "$WORK/damaged.db"
	zero_root_pages "$WORK/damaged-runs.db" "$table" || fail "damaging $table"
	zero_root_pages "$WORK/damaged.db" "$table" || fail "damaging $table"
	for db in damaged-runs damaged; do
		"$SWAPTRACE" report -o "$WORK/textslot-old" "$WORK/$db.db" > /dev/null 2> "$WORK/damaged.err"
		check_eq "$?:$(cat "$WORK/damaged.err")" \
			"1:swaptrace: report: '$WORK/$db.db': query: database disk image is malformed" \
			"report of $db.db, a damaged $table page"
		check_eq "$(ls -A "$WORK/textslot-old"):$(cat "$WORK/textslot-old/index.html")" \
			"index.html:earlier" "report of $db.db, a damaged $table page: the earlier report, whole"
	done
	check_eq "$(sqlite3 "$WORK/damaged.db" 'SELECT count(*) FROM run')" 0 \
		"report of a damaged $table page: runs stored"
done
# --- kernel counters past 2^62 (pgmajfault + swap_ra_hit overflowed: a
# UBSan report in the policy chart) are not taken as recorded; a capture
# page_cluster of 2^32 + 3 is no page-cluster (read as an int it was 3:
# "traced kernel at page-cluster 3"), and info prints it as stored ---
variant vmhuge "UPDATE vmstat SET delta = (1 << 62) + 1 WHERE name IN ('pgmajfault', 'swap_ra_hit');
	UPDATE capture SET page_cluster = (1 << 32) + 3"
$RUNS | sqlite3 "$WORK/vmhuge.db" || fail "vmhuge: storing runs"
report vmhuge "{\"policy\": {}}"
grep -q 'traced kernel at page-cluster 3' "$WORK/vmhuge/policy.json" &&
	fail "vmhuge: page_cluster 2^32 + 3 taken as page-cluster 3"
"$SWAPTRACE" info "$WORK/vmhuge.db" 2>&1 | grep -q "page-cluster 4294967299," ||
	fail "vmhuge: info does not print the page_cluster stored"
finish
