#!/bin/sh
# Runs the CMocka test programs (ninja test), as many at once as there are cores, then shows
# their output in the order given and ends with one line "N passed, N failed, N skipped" over
# all of them. A program that exits non-zero without a failed test (a crash, an abort) counts
# as one failure.
set -u
builddir=$1
shift
jobs=$(nproc 2>/dev/null || echo 2)
for t in "$@"; do rm -f "$builddir/tests/$(basename "$t").status"; done
# Each program writes NAME.log, then NAME.status: "exit-code seconds".
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c '
    name=$(basename "$1") start=$(date +%s)
    "$1" >"$2/tests/$name.log" 2>&1
    echo "$? $(($(date +%s) - start))" >"$2/tests/$name.status"' run-one {} "$builddir"
pass=0 fail=0 skip=0
for t in "$@"; do
    name=$(basename "$t")
    log=$builddir/tests/$name.log
    read -r rc seconds <"$builddir/tests/$name.status" || rc=127 seconds=0
    cat "$log"
    # Per-test results: a result line naming the test that the last RUN line started.
    counts=$(awk '
        /^\[ RUN      \] / { run = substr($0, 14); next }
        run != "" && /^\[       OK \] /  { if (substr($0, 14) == run) p++; run = ""; next }
        run != "" && /^\[  SKIPPED \] /  { if (substr($0, 14) == run) s++; run = ""; next }
        run != "" && /^\[  (FAILED|ERROR)  ?\] / { f++; run = ""; next }
        END { print p + 0, f + 0, s + 0 }' "$log")
    read -r p f s <<EOF_COUNTS
$counts
EOF_COUNTS
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "$name: exited with status $rc outside any test"
        f=1
    fi
    echo "== $name: $p passed, $f failed, $s skipped ($seconds s)"
    pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
