#!/usr/bin/env bash
# Runs blurhash_reference.py with PyPI's `blurhash` (pure Python, pinned) from a virtualenv under .local/,
# made on first use. Called by ImagingTests; by hand, `Tests/ImagingTests/blurhash-reference.sh pinned`
# recomputes the hashes pinned in BlurHashTests.swift.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$ROOT/.local/venv-blurhash"
BLURHASH_VERSION=1.1.5

if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('blurhash') != '$BLURHASH_VERSION')" 2>/dev/null; then
  echo "==> installing blurhash $BLURHASH_VERSION into $VENV" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "blurhash==$BLURHASH_VERSION" >&2
fi
exec "$VENV/bin/python" "$ROOT/Tests/ImagingTests/blurhash_reference.py" "$@"
