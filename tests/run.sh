#!/bin/sh
# Runs the CMocka test programs (ninja test), as many at once as there are cores. Each suite's
# line is printed as it finishes ("== NAME: N passed, N failed, N skipped (S s)", with one more
# line saying why its skipped cases were skipped); a failed test's output follows at the end,
# and a last line "N passed, N failed, N skipped" counts them all. Every suite's whole output
# stays in BUILDDIR/tests/NAME.log. A program that exits non-zero without a failed test (a
# crash, an abort) counts as one failure.
set -u

# The counts of a finished suite's log: "passed failed skipped", from the result line that
# closes each RUN line's test.
counts() {
    awk '
        /^\[ RUN      \] / { run = substr($0, 14); next }
        run != "" && /^\[       OK \] /  { if (substr($0, 14) == run) p++; run = ""; next }
        run != "" && /^\[  SKIPPED \] /  { if (substr($0, 14) == run) s++; run = ""; next }
        run != "" && /^\[  (FAILED|ERROR)  ?\] / { f++; run = ""; next }
        END { print p + 0, f + 0, s + 0 }' "$1"
}

# One suite: run it, write NAME.status ("exit-code seconds passed failed skipped"), print its line.
run_one() {
    name=$(basename "$1") start=$(date +%s) log=$2/tests/$(basename "$1").log
    "$1" >"$log" 2>&1
    rc=$?
    set -- "$rc" "$(($(date +%s) - start))" $(counts "$log")
    [ "$1" -ne 0 ] && [ "$4" -eq 0 ] && set -- "$1" "$2" "$3" 1 "$5"
    echo "$*" >"$(dirname "$log")/$name.status"
    line="== $name: $3 passed, $4 failed, $5 skipped ($2 s)"
    # Why cases were skipped: the suite's own "... SKIPPED: reason" lines (no GPU, ...), each
    # reason once.
    why=$(grep -v '^\[' "$log" | grep 'SKIPPED: ' | sed 's/.*SKIPPED: /   skipped: /' | awk '!seen[$0]++')
    [ "$5" -gt 0 ] && [ -n "$why" ] && line="$line
$why"
    [ "$1" -ne 0 ] && [ "$4" -eq 1 ] && [ "$(counts "$log" | cut -d' ' -f2)" -eq 0 ] &&
        line="$line
   exited with status $1 outside any test (the end of $log says why)"
    echo "$line"
}

if [ "$1" = --one ]; then # sh run.sh --one PROGRAM BUILDDIR: one suite, from xargs below
    run_one "$2" "$3"
    exit 0
fi
builddir=$1
shift
jobs=$(nproc 2>/dev/null || echo 2)
for t in "$@"; do rm -f "$builddir/tests/$(basename "$t").status"; done
echo "running $# test suites, $jobs at a time; each one's output goes to $builddir/tests/NAME.log"
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh "$0" --one {} "$builddir"

pass=0 fail=0 skip=0
for t in "$@"; do
    name=$(basename "$t")
    read -r rc seconds p f s <"$builddir/tests/$name.status" || { rc=127 p=0 f=1 s=0; }
    if [ "$f" -gt 0 ]; then
        echo
        echo "---- $name failed (from $builddir/tests/$name.log):"
        # each failed test's lines, from its RUN line to its result
        awk '/^\[ RUN      \] / { buf = $0; next }
             { buf = buf "\n" $0 }
             /^\[  (FAILED|ERROR)  ?\] / && buf != "" { print buf; buf = "" }
             /^\[       OK \] |^\[  SKIPPED \] / { buf = "" }' "$builddir/tests/$name.log"
        [ "$rc" -ne 0 ] && tail -n 5 "$builddir/tests/$name.log"
    fi
    pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
