#!/bin/sh
# emit-diff.sh OLD NEW [RENAMES.sed]: compares two emit-snapshot.sh folders. Prints the files
# that differ beyond the lines a refactor may change (a kernel header's "emitted by:" re-emit
# command), and counts the files that differ only there. RENAMES.sed, for a refactor that moved
# files, rewrites the old snapshot's mentions of the old paths first (tools/moved-issue-27.sed),
# so that a header naming its source files must name the new ones and nothing else may differ.
# Exit 0 when nothing else differs.
old=${1:?usage: emit-diff.sh OLD NEW [RENAMES.sed]}
new=${2:?usage: emit-diff.sh OLD NEW [RENAMES.sed]}
renames=${3:-/dev/null}
strip() { grep -v -e '^ \* emitted by: ' "$1" | sed -f "$renames"; }
strip_new() { grep -v -e '^ \* emitted by: ' "$1"; }
same=0 header=0 differ=0
tmp=$(mktemp -d) || exit 1
(cd "$old" && find . -type f | sort) >"$tmp/old"
(cd "$new" && find . -type f | sort) >"$tmp/new"
comm -23 "$tmp/old" "$tmp/new" | sed 's/^/only in old: /'
comm -13 "$tmp/old" "$tmp/new" | sed 's/^/only in new: /'
only=$(comm -3 "$tmp/old" "$tmp/new" | wc -l)
for f in $(comm -12 "$tmp/old" "$tmp/new"); do
    if cmp -s "$old/$f" "$new/$f"; then
        same=$((same + 1))
    elif strip "$old/$f" >"$tmp/a"; strip_new "$new/$f" >"$tmp/b"; cmp -s "$tmp/a" "$tmp/b"; then
        header=$((header + 1))
    else
        differ=$((differ + 1))
        echo "differs: $f"
    fi
done
rm -rf "$tmp"
echo "emit-diff.sh: $same identical, $header differ only in the re-emit lines (and renamed paths), $differ differ, $only in one only"
[ $differ -eq 0 ] && [ $only -eq 0 ]
