#!/bin/sh
# The Python package's tests (python/tests, pytest) as one suite of `ninja test`: usage
# python_suite.sh SRC BUILDDIR. Runs them on the built library and prints each test's result in
# CMocka's lines, which tests/run.sh counts ("[ RUN      ] name", then OK, FAILED or SKIPPED;
# a skipped test's reason as "name SKIPPED: reason"). The interpreter is the first of python3
# and /usr/bin/python3 that has pytest; with none, the suite is one skipped test that says so.
set -u
src=$1 builddir=$2
python=
for p in python3 /usr/bin/python3; do
    if "$p" -m pytest --version >/dev/null 2>&1; then python=$p; break; fi
done
if [ -z "$python" ]; then
    echo "[ RUN      ] python"
    echo "python SKIPPED: no python3 with pytest (apt-get install python3-pytest)"
    echo "[  SKIPPED ] python"
    exit 0
fi
export CONVGEN_LIBRARY="$builddir/libconvgen.so.0" PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
out=$("$python" -m pytest -v -rfEs -p no:cacheprovider "$src/python/tests" 2>&1)
rc=$?
printf '%s\n' "$out"
# "path::test[id] PASSED [ 4%]" -> CMocka's lines named by the node ("path::test[id]"), a failed
# test's summary line ("FAILED path::test - why") between its RUN and FAILED lines; "SKIPPED [1]
# path:line: reason" -> the reason. XPASS passes, as pytest's exit status says (xfail not strict).
printf '%s\n' "$out" | awk '
    # a result line: "NODE STATUS [(reason)] [ NN%]", NODE being "file::test[id]" (ids may hold spaces)
    match($0, / (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)( \(.*\))?( +\[ *[0-9]+%\])?$/) && index($0, "::") {
        node = substr($0, 1, RSTART - 1); status = substr($0, RSTART + 1); sub(/ .*/, "", status)
        names[++count] = node; state[count] = status; next
    }
    /^(FAILED|ERROR) [^ ].*::/ { node = substr($0, index($0, " ") + 1); sub(/ - .*/, "", node); why[node] = $0; next }
    /^SKIPPED \[[0-9]+\] / { reason = $0; sub(/^SKIPPED \[[0-9]+\] [^ ]*: /, "", reason); skipped[++skips] = reason }
    END {
        for (i = 1; i <= count; ++i) {
            node = names[i]
            print "[ RUN      ] " node
            if (state[i] == "PASSED" || state[i] == "XFAIL" || state[i] == "XPASS") print "[       OK ] " node
            else if (state[i] == "SKIPPED") print "[  SKIPPED ] " node
            else { if (node in why) print why[node]; print "[  FAILED  ] " node }
        }
        for (i = 1; i <= skips; ++i) print "python SKIPPED: " skipped[i]
    }'
exit $rc
