#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ for a bounded time.
#
#   scripts/fuzz-smoke.sh            # 60 s per target (local)
#   FUZZ_SECONDS=10 FUZZ_DEV=1 scripts/fuzz-smoke.sh   # CI smoke run
#   scripts/fuzz-smoke.sh inbound    # one target
#
# Installs cargo-fuzz if missing. On this stable toolchain, RUSTC_BOOTSTRAP=1
# lets cargo-fuzz use the nightly-only sanitizer flags. A crash leaves its
# input under fuzz/artifacts/TARGET/ and fails the script; once fixed, keep
# it under fuzz/seeds/TARGET/, which tests/tests/fuzz_seeds.rs replays.
set -euo pipefail

seconds="${FUZZ_SECONDS:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    timeout 600 cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(inbound aliases native_decode)
fi

# `-s none`: no sanitizer (the crates forbid unsafe code); libFuzzer still
# finds panics, overflows (debug assertions on) and hangs.
# FUZZ_DEV=1 builds the targets unoptimised (`--dev`, debug assertions on
# as in any dev build): a smoke run of seconds gains less from an optimised
# fuzzer than the release build of the whole tree costs (CI's 10 s a
# target); longer runs keep the optimised build.
build=(-s none --debug-assertions)
if [ -n "${FUZZ_DEV:-}" ]; then
    build+=(--dev)
fi
cargo fuzz build "${build[@]}"

status=0
for target in "${targets[@]}"; do
    corpus="corpus/$target"
    mkdir -p "$corpus"
    log="$(mktemp)"
    echo "== $target: ${seconds}s"
    if cargo fuzz run "${build[@]}" "$target" "$corpus" "seeds/$target" -- \
        -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1; then
        grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)" "$log" || true
    else
        status=1
        grep -E "panicked|ERROR|SUMMARY|Test unit written" "$log" || tail -40 "$log"
    fi
    rm -f "$log"
done
exit "$status"
