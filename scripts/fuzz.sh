#!/usr/bin/env bash
# Runs each fuzz target of roo-json (crates/json/fuzz) for the given seconds (default 60), one
# after the other, at low priority. Needs the nightly toolchain and cargo-fuzz. Each target
# checks an entry point of the JSON stack against serde_json (docs/json.md); a finding stops the
# run and leaves the input under crates/json/fuzz/artifacts/<target>/.
# Usage: scripts/fuzz.sh [seconds] [target...]
set -euo pipefail
cd "$(dirname "$0")/../crates/json"
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
nice -n 10 cargo +nightly fuzz build -O
for target in "${targets[@]}"; do
  echo "== fuzz $target for ${seconds}s"
  nice -n 10 cargo +nightly fuzz run -O "$target" -- -max_total_time="$seconds" -max_len=4096 \
    -print_final_stats=1 2>&1 | grep -E "^(stat::|==|INFO: -max_len|Done|SUMMARY|thread|.*panicked)" || true
  if [ -n "$(ls -A "fuzz/artifacts/$target" 2>/dev/null)" ]; then
    echo "fuzz $target: finding in crates/json/fuzz/artifacts/$target" >&2
    exit 1
  fi
done
