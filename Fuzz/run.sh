#!/usr/bin/env bash
# Builds Vitrine's libFuzzer targets (Fuzz/Package.swift, every module with -sanitize=fuzzer,address)
# and runs them (docs/fuzzing.md).
#
#   Fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]   fuzz each target for that long (default 60 s)
#   Fuzz/run.sh --regressions [TARGET...]          run every file in Fuzz/Regressions/<target>/ and
#                                                  Fuzz/Corpus/<target>/ once, nothing else
#
# The targets are run one after the other (the machine may have 2 cores). Each fuzzes a working
# copy of its corpus in Fuzz/.work/corpus/<target>/ (git-ignored; seeded from Fuzz/Corpus and
# Fuzz/Regressions, and kept between runs so a long run goes on from the last one); reproducers go
# to Fuzz/.work/artifacts/<target>/, logs to Fuzz/.work/logs/<target>.log.
#
# Exit status: 0 when no target crashed, leaked, timed out or ran out of memory; 1 when one did
# (the reproducer's path is printed); 2 when the build failed; 77 when the toolchain has no libFuzzer.
# FUZZ_TIMEOUT (s per input, default 10) and FUZZ_RSS_LIMIT_MB (default 2048) tune the limits.
# FUZZ_JOBS=N (default 1) fuzzes each target in N processes at once (libFuzzer's -jobs/-workers,
# sharing the working corpus), for long runs on a machine with N cores to spare; the line printed
# then sums their executions.
set -uo pipefail
cd "$(dirname "$0")"
fuzz=$PWD

all_targets=(FuzzProbe FuzzScheduleTOML FuzzScheduleJSON FuzzBundleManifest FuzzMinisign FuzzConfig)
mode=fuzz
seconds=60
if [ "${1:-}" = "--regressions" ]; then
    mode=regressions
    shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
    [[ " ${all_targets[*]} " == *" $target "* ]] || { echo "fuzz: unknown target $target (known: ${all_targets[*]})" >&2; exit 64; }
done
timeout_seconds=${FUZZ_TIMEOUT:-10}
jobs=${FUZZ_JOBS:-1}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_JOBS must be a number of processes, not \"$jobs\"" >&2; exit 64; }
rss_limit=${FUZZ_RSS_LIMIT_MB:-2048}

if [ -x /opt/swift/usr/bin/swift ] && ! command -v swift >/dev/null; then export PATH=/opt/swift/usr/bin:$PATH; fi
command -v swift >/dev/null || { echo "fuzz: SKIPPED: no Swift toolchain on PATH"; exit 77; }

# libFuzzer ships with the toolchain's clang runtime on Linux; some toolchains lack it.
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
cat > "$probe_dir/probe.swift" <<'EOF'
@_cdecl("LLVMFuzzerTestOneInput") public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt { 0 }
EOF
if ! swiftc -parse-as-library -sanitize=fuzzer,address "$probe_dir/probe.swift" -o "$probe_dir/probe" >"$probe_dir/log" 2>&1; then
    echo "fuzz: SKIPPED: this toolchain cannot build libFuzzer targets (swiftc -sanitize=fuzzer,address failed):"
    sed 's/^/    /' "$probe_dir/log" | head -5
    exit 77
fi

# One build for all targets: every Swift module (Vitrine's and its dependencies') gets
# libFuzzer's coverage instrumentation and AddressSanitizer; optimised, with debug info.
echo "fuzz: building the targets (Fuzz/.build, release, -sanitize=fuzzer,address)"
mkdir -p .build
build=(swift build --package-path "$fuzz" --scratch-path "$fuzz/.build" -c release
       -Xswiftc -sanitize=fuzzer,address -Xswiftc -g)
# SwiftPM reuses its cached build plan while the manifests are unchanged, and does not notice files
# added to the Vitrine package it depends on (seen: a new MediaSinks file missing from the plan,
# "cannot find type in scope"). When the list of Vitrine's Swift files changed since the last
# build, drop the plan (the compiled objects stay): it is made again from the files as they are.
listing=$(cd .. && find Sources -name '*.swift' | LC_ALL=C sort | sha256sum | cut -d' ' -f1)
if [ "$(cat .build/vitrine-sources.sha256 2>/dev/null)" != "$listing" ]; then
    rm -f .build/build.db .build/release.yaml .build/*/release/description.json
fi
if ! "${build[@]}" >.build/build.log 2>&1; then
    grep -E 'error:' .build/build.log | head -20 >&2
    echo "fuzz: the build failed (Fuzz/.build/build.log)" >&2
    exit 2
fi
echo "$listing" > .build/vitrine-sources.sha256
if grep -E "^$fuzz/Sources/.*warning:" .build/build.log; then
    echo "fuzz: the fuzz targets build with warnings (Swift 6, no warnings allowed)" >&2
    exit 2
fi
bin=$("${build[@]}" --show-bin-path)

# Swift's own crash backtracer would race libFuzzer's handler (and trips ASan reading memory):
# libFuzzer reports the crash, with the stack, and writes the reproducer.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0:handle_abort=1:symbolize=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
for symbolizer in /opt/swift/usr/bin/llvm-symbolizer "$(command -v llvm-symbolizer || true)"; do
    if [ -n "$symbolizer" ] && [ -x "$symbolizer" ]; then export ASAN_SYMBOLIZER_PATH=$symbolizer; break; fi
done

# stat NAME LOG [max]: a libFuzzer final statistic (-print_final_stats=1) over the processes that
# logged it (one unless FUZZ_JOBS): their sum, or with "max" the largest.
stat() {
    sed -n "s/^stat::$1: *//p" "$2" |
        awk -v max="${3:-}" '{ sum += $1; if (!n++ || $1 > top) top = $1 } END { if (n) print (max ? top : sum) }'
}

failed=0
for target in "${targets[@]}"; do
    logs=.work/logs; artifacts=.work/artifacts/$target
    mkdir -p "$logs" "$artifacts"
    log=$logs/$target.log
    # libFuzzer's own failure status is 77, which here means "skipped": ask for 1.
    options=(-timeout="$timeout_seconds" -rss_limit_mb="$rss_limit" -malloc_limit_mb="$rss_limit" -detect_leaks=1
             -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$fuzz/$artifacts/")
    [ -f "Dictionaries/$target.dict" ] && options+=(-dict="$fuzz/Dictionaries/$target.dict")
    before=$(ls "$artifacts" | wc -l)
    if [ "$mode" = regressions ]; then
        inputs=()
        [ -d "Regressions/$target" ] && [ -n "$(ls -A "Regressions/$target")" ] && inputs+=("Regressions/$target")
        [ -d "Corpus/$target" ] && inputs+=("Corpus/$target")
        [ ${#inputs[@]} -gt 0 ] || { echo "fuzz: $target: no regression or corpus files"; continue; }
        "$bin/$target" "${options[@]}" -runs=0 "${inputs[@]}" >"$log" 2>&1
        status=$?
        count=$(find "${inputs[@]}" -type f | wc -l)
        if [ $status -eq 0 ]; then
            echo "fuzz: $target: $count regression and corpus files ran once: no crash, leak or timeout"
        else
            failed=1
            echo "fuzz: $target: FAILED on a regression or corpus file (exit $status); see $fuzz/$log:" >&2
            grep -E 'ERROR:|Fatal error|Running:|Test unit written' "$log" | tail -5 | sed 's/^/    /' >&2
        fi
        continue
    fi
    corpus=.work/corpus/$target
    mkdir -p "$corpus"
    # Seeds and regressions join the working corpus (files already there are kept).
    for seeds in "Corpus/$target" "Regressions/$target"; do
        [ -d "$seeds" ] && cp -n "$seeds"/* "$corpus"/ 2>/dev/null
    done
    echo "fuzz: $target: fuzzing for ${seconds}s ($(ls "$corpus" | wc -l) inputs in $corpus)"
    if [ "$jobs" -eq 1 ]; then
        "$bin/$target" "${options[@]}" -max_total_time="$seconds" -max_len=16384 "$corpus" >"$log" 2>&1
        status=$?
    else
        # Each process logs to fuzz-<job>.log in the folder it is started in; libFuzzer copies
        # each into the target's log when the process ends, and the figures below add them up.
        rm -rf "$logs/$target.jobs" && mkdir -p "$logs/$target.jobs"
        (cd "$logs/$target.jobs" && "$bin/$target" "${options[@]}" -jobs="$jobs" -workers="$jobs" \
            -max_total_time="$seconds" -max_len=16384 "$fuzz/$corpus") >"$log" 2>&1
        status=$?
    fi
    executions=$(stat number_of_executed_units "$log")
    speed=$(stat average_exec_per_sec "$log")
    added=$(stat new_units_added "$log")
    coverage=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
    slowest=$(stat slowest_unit_time_sec "$log" max)
    found=$(ls "$artifacts" | wc -l)
    crashes=$((found - before))
    echo "fuzz: $target: ${executions:-?} executions, ${speed:-?} exec/s, ${added:-?} new inputs, ${coverage:-no coverage line}, slowest input ${slowest:-?} s, $crashes crashes/leaks/timeouts"
    if [ $status -ne 0 ] || [ $crashes -gt 0 ]; then
        failed=1
        echo "fuzz: $target: FAILED (exit $status); see $fuzz/$log" >&2
        grep -E '^==[0-9]+==ERROR|Fatal error|ERROR: libFuzzer|SUMMARY' "$log" | head -5 | sed 's/^/    /' >&2
        grep -oE "Test unit written to [^ ]+" "$log" | sed "s|Test unit written to |    reproducer: $fuzz/|" >&2
    fi
done
exit $failed
