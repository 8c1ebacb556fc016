"""How busy a test run kept its test processes: from the file AUTOGRADER_TEST_TIMELINE wrote
(see conftest), the share of the run with 0, 1, 2, 3... tests running at once, and the tests
running alone at the end, to find a long tail or files that start too late."""

import json
import sys
from collections import Counter
from pathlib import Path


def concurrency(phases: list[dict]) -> Counter:
    """Seconds of the run spent with N test phases running at once, by N."""
    events = sorted(
        [(p["start"], 1) for p in phases] + [(p["stop"], -1) for p in phases],
        key=lambda event: (event[0], event[1]),
    )
    seconds: Counter = Counter()
    running, last = 0, events[0][0]
    for time, change in events:
        seconds[running] += time - last
        running, last = running + change, time
    return seconds


def by_file(phases: list[dict]) -> list[tuple[str, str, float, float]]:
    """Each test file's worker, first start and last stop, by start."""
    spans: dict[str, list] = {}
    for p in phases:
        name = p["test"].split("::")[0]
        span = spans.setdefault(name, [p["worker"], p["start"], p["stop"]])
        span[1], span[2] = min(span[1], p["start"]), max(span[2], p["stop"])
    return sorted(((n, w, s, e) for n, (w, s, e) in spans.items()), key=lambda row: row[2])


def cpu_by_file(phases: list[dict]) -> dict[str, float]:
    """CPU seconds each test file cost its test process (its children included): the rise of
    the process's CPU time from the end of the file before it on that worker to its own end.
    Phases written without ``cpu`` (older timelines) are left out."""
    cost: dict[str, float] = {}
    last: dict[str, float] = {}
    for p in sorted((p for p in phases if "cpu" in p), key=lambda p: p["stop"]):
        name = p["test"].split("::")[0]
        spent = p["cpu"] - last.get(p["worker"], 0.0)
        cost[name] = cost.get(name, 0.0) + spent
        last[p["worker"]] = p["cpu"]
    return cost


def main(path: str) -> None:
    phases = [json.loads(line) for line in Path(path).read_text().splitlines() if line]
    begin = min(p["start"] for p in phases)
    end = max(p["stop"] for p in phases)
    print(f"{len(phases)} phases over {end - begin:.0f} s")
    for running, seconds in sorted(concurrency(phases).items()):
        print(f"  {running} at once: {seconds:7.1f} s ({100 * seconds / (end - begin):4.1f}%)")
    print("files taking over 30 s (worker, start, stop, seconds):")
    for name, worker, start, stop in by_file(phases):
        if stop - start > 30:
            span = f"{start - begin:6.0f} {stop - begin:6.0f} {stop - start:6.0f}"
            print(f"  {worker:5} {span}  {name}")
    cost = cpu_by_file(phases)
    if cost:
        total = sum(cost.values())
        print(f"CPU seconds by file ({total:.0f} s in all; files over 1% of it):")
        for name, seconds in sorted(cost.items(), key=lambda item: -item[1]):
            if seconds > total / 100:
                print(f"  {seconds:7.1f} s ({100 * seconds / total:4.1f}%)  {name}")


if __name__ == "__main__":
    main(sys.argv[1])
