"""Progress lines for a long run of steps: step k of n, time taken, elapsed, an end estimate.

The estimate assumes every remaining unit of work (a submission to grade) takes as long as
the average one so far: a step's cost is its number of units, known before it starts.
"""

import sys
import time
from collections.abc import Callable


def clock_text(seconds: float) -> str:
    """A duration as m:ss (h:mm:ss from an hour on), for a progress line."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def print_to_stderr(line: str) -> None:
    """Write a progress line where the user sees it at once, apart from the results."""
    print(line, file=sys.stderr, flush=True)


class StepProgress:
    """Reports steps of known size as they start and end, with elapsed time and time left."""

    def __init__(
        self,
        units: dict[str, int],
        noun: str = "units",
        verb: str = "",
        report: Callable[[str], None] = print_to_stderr,
        clock: Callable[[], float] = time.perf_counter,
        started: float | None = None,
    ) -> None:
        self.units = dict(units)  # step name -> units of work, in the order they run
        self.noun = noun  # what a unit is, for the lines: "submissions"
        self.verb = verb  # what a step does, for the lines: "grading"
        self.report = report
        self.clock = clock
        self.started = clock() if started is None else started  # elapsed counts from here
        self.done_units = 0
        self.done_seconds = 0.0
        self.step_started = 0.0
        self.steps_done = 0

    def seconds_left(self) -> float | None:
        """Estimated seconds for the steps not yet done; None before any unit was done."""
        if self.done_units == 0:
            return None
        left = sum(self.units.values()) - self.done_units
        return self.done_seconds / self.done_units * left

    def start(self, step: str) -> None:
        """Say which step begins and how big it is."""
        self.step_started = self.clock()
        position = f"[{self.steps_done + 1}/{len(self.units)}]"
        doing = f"{self.verb} " if self.verb else ""
        self.report(f"{position} {doing}{step} ({self.units[step]} {self.noun}) ...")

    def finish(self, step: str) -> None:
        """Say the step is done, how long it took, the elapsed time and the time left."""
        now = self.clock()
        taken = now - self.step_started
        self.done_units += self.units[step]
        self.done_seconds += taken
        self.steps_done += 1
        left = self.seconds_left()
        estimate = f", about {clock_text(left)} left" if left and left > 0 else ""
        self.report(
            f"[{self.steps_done}/{len(self.units)}] {step}: done in {clock_text(taken)}"
            f" (elapsed {clock_text(now - self.started)}{estimate})"
        )
