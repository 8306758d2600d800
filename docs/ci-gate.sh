#!/bin/sh
# A CI gate on iolab's documented JSON and exit codes (docs/automation.md): run a quick test
# on the baseline and on the candidate, check the candidate against the baseline, and fail the
# job on a regression. On a real drive set BASELINE_TARGET and CANDIDATE_TARGET (or keep the
# baseline's document from the last good build and pass it to `iolab check --baseline FILE`).
#
#   sh docs/ci-gate.sh                      # the simulated drive against itself: passes
#   CANDIDATE_TARGET='sim:enterprise-sas?t_prog_us=2300' sh docs/ci-gate.sh   # slower NAND: fails
#
# Exit status: 0 passed, 1 a key figure regressed (JUnit XML in $RUNS/check.xml), 2 an error.
set -u
IOLAB=${IOLAB:-iolab}
TEST=${TEST:-latency}
BASELINE_TARGET=${BASELINE_TARGET:-sim:enterprise-sas}
CANDIDATE_TARGET=${CANDIDATE_TARGET:-$BASELINE_TARGET}
RUNS=${RUNS:-$(mktemp -d)}
mkdir -p "$RUNS"

# One field of a JSON document, read with Python (any JSON tool will do).
field() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$1" "$2"; }

run() {  # run TARGET OUT.json: a quick run; exit 0 is a complete run (6 would need --require-steady)
    "$IOLAB" run "$TEST" --target "$1" --quick --cell-time 1s --max-rounds 5 --no-report \
        --runs-dir "$RUNS" --json > "$2"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "gate: error: iolab run on $1 exited $rc" >&2
        exit 2
    fi
    echo "ran $(field "$2" 'd["runs"][0]["run_id"]'): steady state $(field "$2" 'd["runs"][0]["steady_state"]')"
}

run "$BASELINE_TARGET" "$RUNS/baseline.json"
run "$CANDIDATE_TARGET" "$RUNS/candidate.json"

"$IOLAB" check "$(field "$RUNS/candidate.json" 'd["runs"][0]["path"]')" --baseline "$RUNS/baseline.json" \
    --max-regression 5% --junit "$RUNS/check.xml" --json > "$RUNS/check.json"
case $? in
    0) echo "gate: passed" ;;
    7) echo "gate: FAILED: $(field "$RUNS/check.json" '", ".join(d["check"]["regressions"])')"
       exit 1 ;;
    *) echo "gate: error: iolab check exited with an error; see above" >&2
       exit 2 ;;
esac
