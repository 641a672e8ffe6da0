#!/bin/bash
# The command examples of README.md, docs/schema.md and docs/layouts.md run
# as written, one after the other, from a checkout alone: schema.md builds
# cap.db, README's and layouts.md's replay, report and info lines use it.
# (A cap.db ingested from a capture whose reads need --approximate made
# every replay line fail.)  With the shared captures, schema.md's example
# queries also print the outputs it shows, on the captures it names.
. "$(dirname "$0")/lib.sh"
need_tool sqlite3

# $EX stands for the checkout: samples/ in it, the shared captures (when
# found) beside it, as ../shared/captures
EX=$WORK/ex
mkdir -p "$EX" "$WORK/shared"
ln -s "$SWT_SOURCE_DIR/samples" "$EX/samples"
for d in "${SWT_SHARED_CAPTURES:-}" "$SWT_SOURCE_DIR/../shared/captures" /work/shared/captures; do
	if [ -n "$d" ] && [ -d "$d" ]; then
		ln -s "$(cd "$d" && pwd)" "$WORK/shared/captures"
		break
	fi
done

# examples FILE: the indented "swaptrace ..." and "sqlite3 ..." lines of the
# file's code blocks that name cap.db, comments after '#' cut off
examples() {
	sed -n 's/^    \(\(swaptrace\|sqlite3\) .*cap\.db.*\)$/\1/p' "$1" |
		sed 's/ *# .*$//'
}

# run_example FILE LINE: run it in $EX with this build's swaptrace
run_example() {
	local file=$1 line=$2 out
	case "$line" in
	*CAPTURE_DIR*|*" DIR"|*NAME*) return ;;	# placeholders, not commands
	esac
	out=$(cd "$EX" && eval "${line/#swaptrace/\"\$SWAPTRACE\"}" 2>&1 >/dev/null) ||
		fail "$file: '$line' failed: $(echo "$out" | head -n 3)"
}

# schema.md's first block makes cap.db; the others then use it
first=$(examples "$SWT_SOURCE_DIR/docs/schema.md" | head -n 2)
case "$first" in
"swaptrace ingest -o cap.db "*) ;;
*) fail "docs/schema.md no longer starts by building cap.db: $first" ;;
esac
while IFS= read -r line; do
	run_example docs/schema.md "$line"
done <<< "$first"
[ -f "$EX/cap.db" ] || { fail "docs/schema.md's ingest made no cap.db"; finish; }
for doc in README.md docs/layouts.md; do
	n=0
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		n=$((n + 1))
		run_example "$doc" "$line"
	done <<< "$(examples "$SWT_SOURCE_DIR/$doc")"
	[ "$n" -gt 0 ] || fail "$doc: no cap.db examples found"
done

# schema.md's example queries: each ```sql block followed by an output block
# prints that output (a line '...' stands for any lines, blank lines left
# out) on the capture the paragraph before it names, rnd-1dev-pc3 unless it
# names another: rnd-1ssd-vma-pc0's capture directory, or the blktrace
# files of rnd-4dev-pc3, whose trace.dat has no plugs (the doc once said
# every example was ingested from its capture directory, which gives the
# plugs query no rows)
if [ ! -d "$WORK/shared/captures" ]; then
	echo "shared captures not found: schema.md's example outputs not checked"
	finish
fi
CAPTURES=$WORK/shared/captures
for cap in rnd-1dev-pc3 rnd-1ssd-vma-pc0; do
	"$SWAPTRACE" ingest -q -o "$WORK/$cap.db" "$CAPTURES/$cap/" || fail "$cap: ingest"
done
"$SWAPTRACE" ingest -q -o "$WORK/rnd-4dev-pc3.db" --meta "$CAPTURES/rnd-4dev-pc3/meta.txt" \
	"$(blk_input rnd-4dev-pc3)" || fail "rnd-4dev-pc3 blktrace files: ingest"
python3 - "$SWT_SOURCE_DIR/docs/schema.md" "$WORK" <<'PY' || FAILURES=$((FAILURES + 1))
import re, subprocess, sys

doc, work = sys.argv[1], sys.argv[2]
text = open(doc).read()
text = text[text.index("## Example queries"):]
blocks = re.finditer(r"(?s)(?P<before>(?:(?!```).)*)```sql\n(?P<sql>.*?)```\n```\n(?P<out>.*?)```", text)
bad = n = 0
for m in blocks:
    n += 1
    before = m.group("before").strip().split("\n\n")[-1]	# its own paragraph
    cap = "rnd-1dev-pc3"
    for other in ("rnd-1ssd-vma-pc0", "rnd-4dev-pc3"):
        if "`%s`" % other in before:
            cap = other
    got = subprocess.run(["sqlite3", "-header", "-column", "%s/%s.db" % (work, cap)],
                         input=m.group("sql"), capture_output=True, text=True)
    lines = lambda t: [l.rstrip() for l in t.splitlines() if l.strip()]
    want, have = lines(m.group("out")), lines(got.stdout + got.stderr)
    pattern = "".join("(?:.*\n)*" if l == "..." else re.escape(l) + "\n" for l in want)
    if not re.fullmatch(pattern, "".join(l + "\n" for l in have)):
        bad += 1
        print("docs/schema.md: on %s, %s\nprints\n%s\nwhere the doc shows\n%s\n" % (
              cap, m.group("sql").strip().splitlines()[0], "\n".join(have), "\n".join(want)))
if n < 10:
    print("docs/schema.md: only %d example queries with outputs found" % n)
    bad += 1
print("docs/schema.md: %d example outputs checked, %d differ" % (n, bad))
sys.exit(1 if bad else 0)
PY
finish
