#!/usr/bin/env bash
# Checks the project's systemd units: every systemd/*.service (or the unit
# files given as arguments; a template unit@.service is checked as the
# instance unit@sdb1.service) must pass "systemd-analyze verify" without a
# single message, and its overall exposure from
# "systemd-analyze security --offline=true" must be at most 2.0.
#
#   systemd/check-units.sh [UNIT_FILE...]
#
# Neither command needs a running systemd. Exits 0 when every unit passes,
# 1 when one fails, 77 (printing SKIPPED) when systemd-analyze is not
# installed.
#
# The units name their installed executables (ExecStart=/usr/bin/vitrine ...),
# which need not exist on the machine running this check, and "verify"
# reports a missing ExecStart executable. So verify runs on a temporary copy
# of each unit in which only the executable of each ExecStart= line is
# replaced by VITRINE_BINARY (default /bin/true); every other line,
# including the ExecStart= arguments, is verified as written. The security
# analysis runs on the unit file itself.
set -euo pipefail

limit=2.0       # highest acceptable "Overall exposure level"
threshold=20    # the same limit on the 0..100 scale of --threshold=
binary=${VITRINE_BINARY:-/bin/true}

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "check-units: SKIPPED: systemd-analyze is not installed"
    exit 77
fi

if [[ ! -f $binary || ! -x $binary ]]; then
    echo "check-units: VITRINE_BINARY=$binary is not an executable file" >&2
    exit 1
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if (( $# > 0 )); then
    units=("$@")
else
    shopt -s nullglob
    units=("$here"/*.service)
    shopt -u nullglob
fi
if (( ${#units[@]} == 0 )); then
    echo "check-units: no *.service files in $here" >&2
    exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

failures=0
fail() {
    echo "$1: FAILED: $2" >&2
    failures=$((failures + 1))
}

for unit in "${units[@]}"; do
    name=$(basename "$unit")
    if [[ ! -f $unit ]]; then
        fail "$name" "no such file: $unit"
        continue
    fi
    if [[ $name == *@.service ]]; then
        # A template: check an instance of it, named as udev would.
        name=${name%@.service}@sdb1.service
        mkdir -p "$scratch/instances"
        cp "$unit" "$scratch/instances/$name"
        unit=$scratch/instances/$name
    fi

    # --- systemd-analyze verify, on a copy with only ExecStart's executable
    # replaced (same file name, same line numbers).
    mkdir -p "$scratch/verify"
    copy="$scratch/verify/$name"
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ ^(ExecStart=[-@:+!]*)([^[:space:]]+)(.*)$ ]]; then
            printf '%s%s%s\n' "${BASH_REMATCH[1]}" "$binary" "${BASH_REMATCH[3]}"
        else
            printf '%s\n' "$line"
        fi
    done <"$unit" >"$copy"

    status=0
    out=$(systemd-analyze verify "$copy" 2>&1) || status=$?
    out=${out//"$copy"/"$unit"}
    if (( status != 0 )) || [[ -n $out ]]; then
        fail "$name" "systemd-analyze verify (exit status $status) reported:"
        printf '%s\n' "$out" | sed 's/^/    /' >&2
    else
        echo "$name: verify OK (ExecStart executable checked as $binary)"
    fi

    # --- systemd-analyze security, on the unit file itself.
    status=0
    out=$(systemd-analyze security --offline=true --threshold="$threshold" "$unit" 2>&1) || status=$?
    exposure=$(printf '%s\n' "$out" |
        sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9]*\.[0-9]\).*/\1/p' | tail -n 1)
    if [[ -z $exposure ]]; then
        fail "$name" "no \"Overall exposure level\" in the output of systemd-analyze security (exit status $status):"
        printf '%s\n' "$out" | sed 's/^/    /' >&2
        continue
    fi
    echo "$name: exposure $exposure (limit $limit)"
    if awk -v e="$exposure" -v l="$limit" 'BEGIN { exit !(e > l) }'; then
        fail "$name" "exposure $exposure is above the limit $limit; the settings that raise it:"
        printf '%s\n' "$out" | grep '✗' | sed 's/^/    /' >&2 || true
    elif (( status != 0 )); then
        fail "$name" "systemd-analyze security exited with status $status (exposure $exposure, limit $limit):"
        printf '%s\n' "$out" | tail -n 5 | sed 's/^/    /' >&2
    fi
done

if (( failures > 0 )); then
    echo "check-units: $failures problem(s) in ${#units[@]} unit(s)" >&2
    exit 1
fi
echo "check-units: ${#units[@]} unit(s) OK"
