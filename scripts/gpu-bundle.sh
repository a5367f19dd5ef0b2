#!/usr/bin/env bash
# Builds the release binaries a GPU machine needs (it has no Rust toolchain) into
# gpu-bundle/, gzip-packed: the CLI, the GPU test binary and gpucheck; and the example
# objective's PTX.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p gpu-bundle
cargo build --release --examples
cargo build --release --bin gpude || echo 'warning: the CLI did not build; bundling the rest'
exe=$(cargo test --release --test gpu --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="gpu": print(m["executable"])' | tail -1)
cp target/release/gpude gpu-bundle/ 2>/dev/null || true
cp "$exe" gpu-bundle/gpu-tests
cp target/release/examples/gpucheck gpu-bundle/ 2>/dev/null || true
strip gpu-bundle/gpude gpu-bundle/gpu-tests gpu-bundle/gpucheck 2>/dev/null || true
# The embedded PTX modules make each binary tens of MB (about a fifth of that packed):
# packed, the bundle stays within what one call to the GPU machine carries.
# gpu-run.sh unpacks them there.
for f in gpude gpu-tests gpucheck; do
  [[ -f gpu-bundle/$f ]] && gzip -f -6 "gpu-bundle/$f"
done
rm -f gpu-bundle/gpude.ptx
# The measurement scripts docs/PERFORMANCE.md names (scripts/gpu-calls/README.md).
cp scripts/gpu-calls/*.sh scripts/gpu-calls/*.py gpu-bundle/
# The example objective crate's PTX (tests/gpu.rs and gpu-run.sh run it).
(cd examples/objective-rust && RUSTFLAGS="-C target-cpu=sm_70" cargo rustc --release \
  --target nvptx64-nvidia-cuda -Zbuild-std=core --crate-type cdylib) &&
  cp examples/objective-rust/target/nvptx64-nvidia-cuda/release/gpude_objective_example.ptx \
    gpu-bundle/objective-example.ptx ||
  echo 'warning: the example objective did not build; bundling the rest'

cp scripts/gpu-run.sh gpu-bundle/
ls -la gpu-bundle
