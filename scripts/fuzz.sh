#!/usr/bin/env bash
# Runs each fuzz target of roo-json (crates/json/fuzz) for the given seconds (default 60), as
# many at once as there are cores (FUZZ_JOBS to choose), at low priority. Needs the nightly
# toolchain and cargo-fuzz. Each target checks an entry point of the JSON stack against
# serde_json (docs/json.md); a finding fails the run and leaves the input under
# crates/json/fuzz/artifacts/<target>/.
# Usage: scripts/fuzz.sh [seconds] [target...]
set -euo pipefail
cd "$(dirname "$0")/../crates/json"
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
at_once="${FUZZ_JOBS:-$(nproc)}"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
nice -n 10 cargo +nightly fuzz build -O
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$at_once" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  nice -n 10 cargo +nightly fuzz run -O "$target" -- -max_total_time="$seconds" -max_len=4096 \
    -print_final_stats=1 >"$logs/$target" 2>&1 &
  running=$((running + 1))
done
wait || true
found=0
for target in "${targets[@]}"; do
  echo "== fuzz $target for ${seconds}s"
  grep -E "^(stat::|==|INFO: -max_len|Done|SUMMARY|thread|.*panicked)" "$logs/$target" || true
  if [ -n "$(ls -A "fuzz/artifacts/$target" 2>/dev/null)" ]; then
    echo "fuzz $target: finding in crates/json/fuzz/artifacts/$target" >&2
    found=1
  elif ! grep -q "^Done" "$logs/$target"; then
    echo "fuzz $target did not run to its end:" >&2
    tail -n 20 "$logs/$target" >&2
    found=1
  fi
done
exit "$found"
