#!/usr/bin/env bash
# On the device, in the call that carries .dev/kit/partN: check part N's chunk against the MANIFEST it
# carries, move it to /tmp/kitparts/ (kept while the machine stays warm) and say what is there so far.
#   bash speed/vllm_kit_stash.sh N
set -euo pipefail
n="${1:?usage: vllm_kit_stash.sh N (the part this call carries)}"
src=".dev/kit/part$n"
dst=/tmp/kitparts
[ -d "$src" ] || { echo "KIT: $src is not here: carry it (run's carry: [\".dev/kit/part$n\"])" >&2; exit 1; }
[ -f "$src/MANIFEST" ] || { echo "KIT: $src/MANIFEST is missing" >&2; exit 1; }
line=$(awk -v n="$n" '$1 == "chunk" && $2 == n' "$src/MANIFEST")
[ -n "$line" ] || { echo "KIT: MANIFEST names no chunk $n" >&2; exit 1; }
read -r _ _ sum size name <<<"$line"
[ -f "$src/$name" ] || { echo "KIT: $src/$name is missing" >&2; exit 1; }
got=$(sha256sum "$src/$name" | cut -d' ' -f1)
[ "$got" = "$sum" ] || { echo "KIT: $src/$name: sha256 $got, MANIFEST says $sum" >&2; exit 1; }
mkdir -p "$dst"
if [ -f "$dst/MANIFEST" ] && ! cmp -s "$dst/MANIFEST" "$src/MANIFEST"; then
    echo "KIT: $dst holds parts of another build (MANIFEST differs): clearing it" >&2
    rm -f "$dst"/*
fi
cp "$src/MANIFEST" "$dst/MANIFEST"
mv -f "$src/$name" "$dst/$name"
echo "KIT: part $n ok ($name, $size bytes, sha256 $sum) -> $dst"
total=$(awk '$1 == "parts" {print $2}' "$dst/MANIFEST")
have=""; miss=""
for i in $(seq 1 "$total"); do
    c=$(awk -v n="$i" '$1 == "chunk" && $2 == n {print $5}' "$dst/MANIFEST")
    if [ -f "$dst/$c" ]; then have="$have $i"; else miss="$miss $i"; fi
done
echo "KIT: $dst holds parts:${have:- none} of $total; missing:${miss:- none}"
df -h /tmp | tail -1
