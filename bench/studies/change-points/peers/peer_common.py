"""What the change-point peers' runners share (otava_run.py, edivisive_run.py): read the series file, run each series
alone through the peer's detection function, time it, find when each change point would first have been reported,
and write the detections file that bench/studies/change-points/score.ts reads.

Detections file: {"detector", "version", "parameters", "cpu_seconds", "delay_cpu_seconds", "delay_sampled",
"series": {id: [{"at", "reported_at"}]}}. `at` is the index of the first build at the new level; `reported_at` the
last build of the shortest prefix of the series on which the detector finds a change point within TOLERANCE builds of
`at` (the peers are offline: they see a whole series, so their delay is found by re-running them on growing
prefixes), or null when the delay was not computed (--delay-sample). `cpu_seconds` is the process CPU time of the
detection calls on the full series only; the prefix re-runs are timed apart (`delay_cpu_seconds`).
"""

import argparse
import json
import random
import sys
import time
from collections.abc import Callable

# As bench/studies/change-points/score.ts matches a change point to a true step.
TOLERANCE = 2

Detect = Callable[[list[float], int], list[int]]


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("series", help="the series file (bench/studies/change-points/generate.ts, record-real.py)")
    parser.add_argument("out", help="the detections file to write")
    parser.add_argument(
        "--delay-sample",
        type=int,
        default=0,
        help="compute the delay of this many change points drawn at random (seed 1), not of all (0: all)",
    )
    return parser.parse_args()


def first_report(detect: Detect, values: list[float], at: int, seed: int, cache: dict[int, list[int]]) -> int:
    """The last index of the shortest prefix, ending at or after at + 1, on which `detect` finds a change point within
    TOLERANCE of `at` (the full series does, so the answer is at most its last index)."""
    for end in range(at + 1, len(values)):
        if end not in cache:
            cache[end] = detect(values[: end + 1], seed)
        if any(abs(found - at) <= TOLERANCE for found in cache[end]):
            return end
    return len(values) - 1


def run(detector: str, version: str, parameters: dict[str, object], detect: Detect) -> None:
    args = arguments()
    with open(args.series) as handle:
        series = json.load(handle)["series"]
    found: dict[str, list[int]] = {}
    cpu = 0.0
    started = time.monotonic()
    for k, one in enumerate(series):
        values = [float(v) for v in one["values"]]
        before = time.process_time()
        found[one["id"]] = sorted(detect(values, k))
        cpu += time.process_time() - before
    print(f"{detector}: {len(series)} series in {cpu:.2f} s of CPU", file=sys.stderr)
    every = [(k, at) for k, one in enumerate(series) for at in found[one["id"]]]
    chosen = set(every)
    if 0 < args.delay_sample < len(every):
        chosen = set(random.Random(1).sample(every, args.delay_sample))
    delays: dict[tuple[int, int], int] = {}
    delay_cpu = 0.0
    before = time.process_time()
    caches: dict[int, dict[int, list[int]]] = {}
    for k, at in sorted(chosen):
        values = [float(v) for v in series[k]["values"]]
        delays[(k, at)] = first_report(detect, values, at, k, caches.setdefault(k, {}))
    delay_cpu = time.process_time() - before
    print(
        f"{detector}: delays of {len(chosen)} of {len(every)} change points in {delay_cpu:.2f} s of CPU "
        f"({time.monotonic() - started:.0f} s in all)",
        file=sys.stderr,
    )
    out = {
        "detector": detector,
        "version": version,
        "parameters": parameters,
        "cpu_seconds": round(cpu, 4),
        "delay_cpu_seconds": round(delay_cpu, 4),
        "delay_sampled": len(chosen) if len(chosen) < len(every) else None,
        "series": {
            one["id"]: [{"at": at, "reported_at": delays.get((k, at))} for at in found[one["id"]]]
            for k, one in enumerate(series)
        },
    }
    with open(args.out, "w") as handle:
        json.dump(out, handle, separators=(",", ":"))
        handle.write("\n")
