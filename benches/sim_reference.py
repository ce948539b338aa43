#!/usr/bin/env python3
"""The seed scenario of `benches/sim.rs` as a plain Python model, to time
`retrylint simulate` against (issue #30 item 5: the simulator per trial
against a Python reference of the same model).

The overload model (docs/chaos.md) for six clients alone, each sending one
request: 100 ms of service time, capacity 4 (while more than 4 attempts are
in flight every attempt in flight fails), a 2 s horizon, 5 attempts with
exponential backoff from 100 ms, cap 2 s, full jitter. It is `reference_trial`
of `benches/sim.rs` line for line, with Python's own generator (so its draws,
not its model, differ from the simulator's).

    python3 benches/sim_reference.py 20000

prints the trials, the attempts and successes, and the CPU seconds it took
(`time.process_time`, so a busy machine's other work is not counted).
"""

import heapq
import random
import sys
import time

CLIENTS = 6
CAPACITY = 4
SERVICE = 100_000_000  # ns
HORIZON = 2_000_000_000  # ns
BASE = 100_000_000  # ns
CAP = 2_000_000_000  # ns
MAX_ATTEMPTS = 5


def trial(seed):
    rng = random.Random(seed)
    heap = []
    seq = 0
    ticket = [0] * CLIENTS
    tries = [0] * CLIENTS
    in_flight = overflows = attempts = successes = 0
    for c in range(CLIENTS):
        heap.append((0, 1, seq, c))
        seq += 1
    heapq.heapify(heap)
    while heap:
        t, phase, _, c = heapq.heappop(heap)
        if phase == 1:
            attempts += 1
            in_flight += 1
            ticket[c] = overflows
            if in_flight > CAPACITY:
                overflows += 1
            heapq.heappush(heap, (t + SERVICE, 0, seq, c))
            seq += 1
            continue
        in_flight -= 1
        if overflows == ticket[c]:
            successes += 1
            continue
        tries[c] += 1
        if tries[c] >= MAX_ATTEMPTS:
            continue
        envelope = min(BASE * 2 ** (tries[c] - 1), CAP)
        at = t + int(rng.random() * envelope)
        if at < HORIZON:
            heapq.heappush(heap, (at, 1, seq, c))
            seq += 1
    return attempts, successes


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    began = time.process_time()
    attempts = successes = 0
    for i in range(trials):
        a, s = trial(42 + i)
        attempts += a
        successes += s
    cpu = time.process_time() - began
    print(
        f"{trials} trials: {attempts} attempts, {successes} of {CLIENTS * trials} "
        f"requests succeeded; {cpu:.3f} s CPU, {cpu / trials * 1e6:.1f} us a trial"
    )


if __name__ == "__main__":
    main()
