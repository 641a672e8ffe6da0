#!/bin/bash
# The command examples of README.md, docs/schema.md and docs/layouts.md run
# as written, one after the other, from a checkout alone: schema.md builds
# cap.db, README's and layouts.md's replay, report and info lines use it.
# (A cap.db ingested from a capture whose reads need --approximate made
# every replay line fail.)
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
finish
