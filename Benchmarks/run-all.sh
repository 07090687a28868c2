#!/usr/bin/env bash
# Runs every benchmark, one after another (each measures Vitrine and its reference tool in the same
# run), and prints one table: what, Vitrine, the reference, the ratio, the target, pass or fail.
# Each benchmark's full output goes to out/benchmarks/NAME.log; a benchmark that cannot run shows
# as "error" with its log's last line. Exit status 1 when any row failed or errored.
#
#   bash Benchmarks/run-all.sh [NAME...]      (default: all; NAME is a script's name without .sh)
set -uo pipefail
cd "$(dirname "$0")/.."
out=out/benchmarks
mkdir -p "$out"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(first-frame seam-gap cue-error decode play-cpu audio-cpu record-cpu probe composite queue-rss restart schedule-switch import inspector sync-skew)
rows=()
status=0
for name in "${names[@]}"; do
    echo "run-all: $name ..." >&2
    started=$SECONDS
    bash "Benchmarks/$name.sh" > "$out/$name.log" 2>&1
    code=$?
    lines=$(grep -a '^RESULT' "$out/$name.log" || true)
    if [ -z "$lines" ]; then
        rows+=("$(printf '%s\t-\t-\t-\t-\terror (exit %s: %s)' "$name" "$code" "$(tail -1 "$out/$name.log" | cut -c1-60)")")
        status=1
        continue
    fi
    while IFS= read -r line; do
        rows+=("${line#RESULT	}")
        [[ "$line" == *$'\t'pass ]] || status=1
    done <<<"$lines"
    echo "run-all: $name done in $((SECONDS - started)) s" >&2
done
echo
echo "Vitrine benchmarks on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ) (logs in $out/)"
printf '%s\n' "${rows[@]}" | python3 -c '
import sys
header = ["what", "vitrine", "reference", "ratio", "target", "result"]
rows = [header] + [line.rstrip("\n").split("\t") for line in sys.stdin if line.strip()]
rows = [row + [""] * (6 - len(row)) for row in rows]
widths = [max(len(row[i]) for row in rows) for i in range(6)]
for index, row in enumerate(rows):
    print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    if index == 0:
        print("  ".join("-" * w for w in widths))
'
exit $status
