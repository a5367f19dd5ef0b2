#!/usr/bin/env bash
# Unpacks the compressed binaries of gpu-bundle/ in place (xz, or Python's lzma).
cd "$(dirname "$0")"
for f in *.xz; do
  [[ -e $f ]] || continue
  if command -v xz >/dev/null; then xz -d -f "$f"; else python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3],'wb'))" "$f" && rm "$f"; fi
  chmod +x "${f%.xz}"
done
