"""The progress of a run on stderr: submissions done/total, failures, elapsed time, ETA."""

import sys
import time

from autograder.grading.course.run_progress import clock_text
from autograder.grading.pipeline.autograde.log import GradingRecord


class Progress:
    """Submissions done/total, failures, elapsed time and ETA on stderr.

    On a terminal one line rewritten in place; otherwise (CI logs, files) a line per
    finished submission.
    """

    def __init__(self, total: int, label: str, enabled: bool = True, stream=None) -> None:
        self.total, self.label, self.enabled = total, label, enabled
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.done = self.failed = 0
        self.started = time.perf_counter()

    def line(self, latest: GradingRecord | None = None) -> str:
        """The progress line: counts, a bar on a terminal, elapsed and ETA."""
        elapsed = time.perf_counter() - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else None
        parts = [f"{self.label}: {self.done}/{self.total} done", f"{self.failed} failed"]
        eta_text = clock_text(eta) if eta is not None else "?"
        parts += [f"elapsed {clock_text(elapsed)}", f"ETA {eta_text}"]
        text = ", ".join(parts)
        if self.tty:
            filled = int(20 * self.done / self.total) if self.total else 20
            return f"[{'#' * filled}{'.' * (20 - filled)}] {text}"
        if latest is not None:
            text += f" ({latest.student}: {latest.status}, {latest.seconds:.1f} s)"
        return text

    def update(self, record: GradingRecord) -> None:
        """Count one finished submission and show the new line."""
        self.done += 1
        self.failed += record.failed
        self.show(record)

    def show(self, latest: GradingRecord | None = None) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r" + self.line(latest) + "\x1b[K")
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(self.line(latest) + "\n")
        self.stream.flush()
