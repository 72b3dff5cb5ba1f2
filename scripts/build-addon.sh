#!/usr/bin/env bash
# Build the N-API addon and generate index.js / index.d.ts.
# Usage: scripts/build-addon.sh [--release]
# The public types of every area (types/*.d.ts) are joined into the header napi prepends to index.d.ts;
# types/90-generated.d.ts is first written from the Rust result types (crates/ts, ts-rs).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target
# For the host triple, as napi and the tests build: the three share compiled dependencies.
cargo run --quiet -p roo-ts --target "$(rustc -vV | sed -n 's/^host: //p')"
cat types/*.d.ts > target/types-header.d.ts
npx napi build --platform "$@" --manifest-path crates/napi/Cargo.toml --output-dir . --js index.js --dts index.d.ts
# One clear message when no native binary loads (platform, and the two ways out).
node scripts/loader-message.mjs index.js
