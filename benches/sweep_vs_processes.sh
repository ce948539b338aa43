#!/usr/bin/env bash
# `simulate --sweep` against the same points run one by one as separate
# `simulate` processes: the canonical surge scenario, 9 points × 8 trials ×
# 60 s of simulated time, in one run so the VM's noise hits both alike.
# Usage: benches/sweep_vs_processes.sh [path/to/release/retrylint]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/retrylint}
args=(examples/surge.yaml --fault surge --duration 60s --seed 7)
json=$(mktemp)
start=$(date +%s.%N)
"$bin" simulate "${args[@]}" --sweep rate=200..900 --steps 9 --trials 8 --format json >"$json"
mid=$(date +%s.%N)
# Every point the sweep ran (the grid and its bisection points), each as
# its own process with the same trials and seeds.
for rate in $(python3 -c 'import json,sys; print(" ".join(str(p["value"]) for p in json.load(open(sys.argv[1]))["sweep"]["points"]))' "$json"); do
    "$bin" simulate "${args[@]}" --rate "$rate" --trials 8 --format json >/dev/null
done
end=$(date +%s.%N)
points=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sweep"]["points"]))' "$json")
python3 -c "import sys; s,m,e=map(float,sys.argv[1:4]); print(f'{sys.argv[4]} points: sweep {m-s:.2f} s, separate processes {e-m:.2f} s, ratio {(e-m)/(m-s):.2f}')" "$start" "$mid" "$end" "$points"
rm -f "$json"
