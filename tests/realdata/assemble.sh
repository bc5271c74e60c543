#!/usr/bin/env bash
# Assemble the folder KAOSHI_REALDATA points at: each benchmark's repository cloned under its GitHub name at
# the commit checked (README, "Checked on the published files"), and FinEval's v1 academic data, deleted
# from its main branch, restored from the history as FinEval-v1/{dev,val}.
# Usage: tests/realdata/assemble.sh FOLDER [GIT_BASE_URL]   (default https://github.com)
set -euo pipefail
dest=${1:?give the folder to fill}
base=${2:-https://github.com}
mkdir -p "$dest"
while read -r repo commit; do
  name=${repo#*/}
  [ -d "$dest/$name/.git" ] || git clone -q "$base/$repo" "$dest/$name"
  git -C "$dest/$name" -c advice.detachedHead=false checkout -q "$commit"
done <<'REPOS'
haonan-li/CMMLU d6e7b716d8ac694f38969a6c0407437d1fded799
ruixiangcui/AGIEval 5c77d073fda993f1652eaae3cf5d04cc5fd21d40
OpenLMLab/GAOKAO-Bench 6dbb24f8d8439041e5431c4c184a582182a6ce9c
lgw863/LogiQA-dataset ff6c4cbca47627b3ac2da94a29fa28204a167b41
aliyun/cflue ff28c38f9618b51b6747f275b09d24c14fe58509
tjunlp-lab/M3KE b370aae92167610791c34d16ef1b5a3e41805e62
SUFE-AIFLM-Lab/FinEval b676e912f52f35d515d635ea67df4626deaa69b2
hkust-nlp/ceval cba65ae93bcf189149ced9f66ae0c958201faed9
williamliujl/CMExam fadb22c89beb1b7115dc36460ba792eb96b7b972
REPOS
if [ ! -d "$dest/FinEval-v1" ]; then
  # the last commit before "delete data" (0a5f23f) holds the academic data in C-Eval's layout
  tmp=$(mktemp -d)
  git -C "$dest/FinEval" archive 0a5f23f01e0291b11f0a0a06e3737770d471d731^ \
    code/opensource_eval/1academic_eval/code/data | tar -x -C "$tmp"
  mv "$tmp/code/opensource_eval/1academic_eval/code/data" "$dest/FinEval-v1"
  rm -rf "$tmp"
fi
echo "KAOSHI_REALDATA=$dest"
