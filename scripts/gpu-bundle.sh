#!/usr/bin/env bash
# Builds the release binaries a GPU machine needs (it has no Rust toolchain) into
# gpu-bundle/, xz-packed: the CLI, the GPU test binary and gpucheck; the example
# objective's PTX; the scripts that run there (gpu-measure.sh, the measurement of
# docs/PERFORMANCE.md, and gpu-run.sh); the peers and the CEC 2017 data from ../shared
# when they are there; and the commit the bundle was built from (commit.txt).
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
# The embedded PTX modules make each binary tens of MB (a fraction of that packed):
# packed, the bundle stays within what one call to the GPU machine carries.
# gpu-measure.sh and gpu-run.sh unpack them there (xz, or gzip for older bundles).
rm -f gpu-bundle/gpude.gz gpu-bundle/gpu-tests.gz gpu-bundle/gpucheck.gz
for f in gpude gpu-tests gpucheck; do
  if [[ -f gpu-bundle/$f ]]; then xz -f -6 -T0 "gpu-bundle/$f"; fi
done
rm -f gpu-bundle/gpude.ptx
# The measurement of docs/PERFORMANCE.md and its tables.
cp scripts/gpu-measure.sh scripts/bench-compare.py gpu-bundle/
# The peers run in the same call as the benches, and some GPU tests read the CEC 2017
# data: ../shared does not travel to the GPU machine, so the bundle carries them.
if [[ -d ../shared/peers ]]; then
  rm -rf gpu-bundle/peers && cp -r ../shared/peers gpu-bundle/peers && chmod -R u+w gpu-bundle/peers
fi
if [[ -f ../shared/reference/cec2017/CEC17_fast_pow-C++.zip ]]; then
  mkdir -p gpu-bundle/reference/cec2017
  cp -f ../shared/reference/cec2017/CEC17_fast_pow-C++.zip gpu-bundle/reference/cec2017/
  cp -f ../shared/reference/cec2017-* gpu-bundle/reference/ 2>/dev/null || true
fi
# The commit the bundle's binaries were built from (and whether the tree had changes).
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with uncommitted changes'), built $(date -u +%Y-%m-%dT%H:%MZ)" > gpu-bundle/commit.txt
# The example objective crate's PTX (tests/gpu/ and gpu-run.sh run it).
(cd examples/objective-rust && RUSTFLAGS="-C target-cpu=sm_70" cargo rustc --release \
  --target nvptx64-nvidia-cuda -Zbuild-std=core --crate-type cdylib) &&
  cp examples/objective-rust/target/nvptx64-nvidia-cuda/release/gpude_objective_example.ptx \
    gpu-bundle/objective-example.ptx ||
  echo 'warning: the example objective did not build; bundling the rest'

cp scripts/gpu-run.sh scripts/gpu-scaling.sh gpu-bundle/
# The adaptive kernels' measurement and its peer, EvoX (PyPI; the GPU machine has PyTorch
# but no network: its wheel travels in the bundle).
cp scripts/gpu-adaptive.sh scripts/evox_peer.py gpu-bundle/
mkdir -p gpu-bundle/wheels
ls gpu-bundle/wheels/evox-*.whl > /dev/null 2>&1 ||
  python3 -m pip download --quiet --no-deps evox -d gpu-bundle/wheels ||
  echo 'warning: no EvoX wheel; gpu-adaptive.sh skips the peer'
ls -la gpu-bundle
