#!/bin/bash
# Fuzz regression: damaged inputs must keep ingest's rule for bad input --
# exit 1 with one line on stderr naming the file (or ingest, exit 0, when
# the damage still decodes plausibly), no database left behind, an existing
# one unchanged, and never a crash, hang or sanitizer report.
#   - the minimised cases a fuzzing campaign found, each of which broke the
#     rule before its fix (tests/ingest-fuzz.py lists them);
#   - a fixed set of mutants (fixed seed: the same on every run) of a small
#     blktrace prefix in both byte orders and of small version-6 and
#     version-7 (zstd) trace.dat files cut from a real capture.
# Run under the sanitizer build (SWT_SANITIZE=ON) it also catches memory and
# undefined-behaviour errors, in the trace.dat decoder's child process too.
. "$(dirname "$0")/lib.sh"
need_tool xz
need_tool trace-cmd
need_tool python3
find_captures
: "${SWT_TOOLS_DIR:?}"

NAME=rnd-1dev-pc0
CAP=$CAPTURES/$NAME
[ -f "$CAP/trace.dat" ] && [ -d "$CAP/blk" ] || skip "capture $NAME not found"
TF() { python3 "$SWT_SOURCE_DIR/tests/tracefile.py" "$@"; }
FUZZ() { python3 "$SWT_SOURCE_DIR/tests/ingest-fuzz.py" "$@"; }
SEEDS=$WORK/seeds
mkdir -p "$SEEDS"
# Under the sanitizer build: reports go to stderr, where the checks look for
# them.  The decoder child's stderr is thrown away, so a report there shows
# as the child stopping without an error, which the checks refuse.  Signals
# are left to crash as they would without sanitizers, and allocations too
# large to make fail as they would, so that libtracecmd's own crashes on a
# damaged file stay what ingest reports them as: a crash of libtracecmd.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allocator_may_return_null=1"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# --- the undamaged inputs -----------------------------------------------------------
BLK=$(blk_input "$NAME")
head -c "$(TF blk-record "$BLK.blktrace.0" 600)" "$BLK.blktrace.0" > "$SEEDS/blk.blktrace.0"
"$SWT_TOOLS_DIR/blk-swap-endian" "$SEEDS/blk.blktrace.0" "$SEEDS/blk-be.blktrace.0" big ||
	fail "blk-swap-endian"
cp "$CAP/meta.txt" "$SEEDS/meta.txt"
# four pages a CPU from the middle of the trace (block events and faults),
# the top level given pages too so the version-7 copy has every BUFFER option
trace-cmd convert -i "$CAP/trace.dat" -o "$WORK/full-v6.dat" --file-version 6 >/dev/null 2>&1 ||
	fail "trace-cmd convert to version 6"
python3 "$SWT_SOURCE_DIR/tests/td-shrink.py" --top --skip 300 "$WORK/full-v6.dat" "$SEEDS/small.dat" 4 ||
	fail "td-shrink"
rm -f "$WORK/full-v6.dat"
trace-cmd convert -i "$SEEDS/small.dat" -o "$SEEDS/small-v7z.dat" --file-version 7 \
	--compression zstd >/dev/null 2>&1 || fail "trace-cmd convert to version 7"
[ "$FAILURES" -eq 0 ] || finish

# --- the checks themselves catch what they are for ------------------------------------
FUZZ selftest "$WORK/selftest" || fail "the fuzz checks miss a broken rule"

# --- what fuzzing found --------------------------------------------------------------------
FUZZ cases "$SWAPTRACE" "$WORK/cases" "$SEEDS" || fail "minimised fuzz cases"

# --- mutants --------------------------------------------------------------------------------
FUZZ random "$SWAPTRACE" "$WORK/random" 1 "${SWT_FUZZ_COUNT:-80}" "$SEEDS/blk.blktrace.0" \
	"$SEEDS/blk-be.blktrace.0" "$SEEDS/small.dat" "$SEEDS/small-v7z.dat" ||
	fail "fuzz mutants"
finish
