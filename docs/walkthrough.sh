#!/usr/bin/env bash
# A newcomer's walkthrough in a 100-column terminal: the commands a user types first, run in a real tmux
# pane, each screen captured as text (tmux capture-pane), then checked: no line wider than the pane.
#
#   bash docs/walkthrough.sh [OUT_DIR]      (needs tmux and the project's .venv: `make .venv/.models`)
#
# The screens land in OUT_DIR (default: kaoshi_runs/walkthrough), one file per command. The runs go to a
# store of their own, so your runs are never touched.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/kaoshi_runs/walkthrough}"
WIDTH=100
HEIGHT=50
mkdir -p "$OUT"
STORE="$OUT/walkthrough.sqlite"
rm -f "$STORE" "$OUT"/*.txt
SESSION="kaoshi-walkthrough-$$"
KAOSHI="$ROOT/.venv/bin/kaoshi"
PY="$ROOT/.venv/bin/python"
[ -x "$KAOSHI" ] || { echo "no $KAOSHI: run 'make .venv/.models' first" >&2; exit 1; }

tmux new-session -d -s "$SESSION" -x "$WIDTH" -y "$HEIGHT"
tmux set-option -t "$SESSION" history-limit 20000 >/dev/null
trap 'tmux kill-session -t "$SESSION" 2>/dev/null || true' EXIT

# Runs one command in the pane, waits for it, and keeps the whole screen (scrollback included).
step() {
  local name="$1"; shift
  tmux send-keys -t "$SESSION" "clear; tmux clear-history; $* ; echo __done__\$?" Enter
  until tmux capture-pane -p -t "$SESSION" -S - | grep -q '^__done__'; do sleep 0.5; done
  tmux capture-pane -p -t "$SESSION" -S - -J | sed '/^__done__/,$d' > "$OUT/$name.txt"
  # -J joins lines the terminal wrapped: a table line (its borders) wider than the pane is a row that
  # wrapped into a jumble; a sentence wider than the pane wraps as prose does in any terminal
  "$PY" - "$OUT/$name.txt" "$WIDTH" <<'CHECK'
import sys
from rich.cells import cell_len
path, width = sys.argv[1], int(sys.argv[2])
table = set("│┃┏┓┗┛┡┩└┘━─")
lines = open(path, encoding="utf-8").read().splitlines()
wide = [n for n, line in enumerate(lines, 1) if cell_len(line) > width and table & set(line)]
if wide:
    sys.exit(f"{path}: lines {wide[:5]} are wider than {width} columns: they wrapped")
CHECK
}

cd "$ROOT"
K="$KAOSHI"
S="--store $STORE"
step 1-benchmarks "$K benchmarks"
step 2-smoke-test "$K run --benchmark sample --model smollm2 --method loglik --limit 2 $S"
step 3-full-run "$K run --benchmark sample --model smollm2 --method loglik $S"
step 4-runs "$K runs $S"
RUN=$("$KAOSHI" runs --format json $S | "$ROOT/.venv/bin/python" -c \
  'import json,sys; print(next(r["run"] for r in json.load(sys.stdin) if "limit" not in r["run"]))')
step 5-report "$K report $RUN --by domain $S"
step 6-leaderboard "$K leaderboard $S"
echo "screens in $OUT; no table row wider than $WIDTH columns"
