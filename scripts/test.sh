#!/usr/bin/env bash
# The project's full test run: formatting, lints, Rust tests, the N-API addon build, Vitest suites.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
# The addon build (napi) always passes --target <host triple>, which puts what it compiles under
# target/<triple>/; the tests build for the same triple, so the two share one set of compiled
# dependencies instead of compiling every crate twice.
host_triple=$(rustc -vV | sed -n 's/^host: //p')
cargo test --workspace --target "$host_triple"
echo "== napi build (debug addon for the JS suites)"
bash scripts/build-addon.sh
echo "== index.d.ts type-checks under --strict"
npx tsc --noEmit --strict --lib es2022,dom index.d.ts
echo "== compat types: the legacy handlers' and the extension's call shapes under --strict"
npx tsc -p __tests__/compat/tsconfig.json
echo "== the test suites type-check against index.d.ts under --strict"
npx tsc -p __tests__/tsconfig.json
echo "== the CLI, MCP server and web view (cli/, JavaScript) type-check against index.d.ts"
npx tsc -p cli/tsconfig.json
echo "== vitest"
npx vitest run
