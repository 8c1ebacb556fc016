"""A long-lived grading worker: imports nbgrader once, then grades the jobs it is sent on
stdin one after the other and answers each on stdout (see ``wire``).

Started by ``worker_pool`` as ``python -c BOOTSTRAP``. Anything printed while grading goes
into that job's output, never into the answers: the answers go to a private copy of the
original stdout, and fd 1 points at stderr between jobs.
"""

import os
import time
import traceback
from pathlib import Path

# Keeps ``rfc3987_syntax`` out of the import: jsonschema imports it (if installed) only for
# the "iri" string format, which no notebook schema uses, and building its grammar costs
# about a second of every worker's start-up.
BOOTSTRAP = """\
import sys
sys.modules.setdefault("rfc3987_syntax", None)
from autograder.grading.autograde.worker import main
main(sys.argv[1] if len(sys.argv) > 1 else None)
"""


def main(scratch: str | None = None) -> None:
    """Serve jobs until stdin closes, each in a fresh folder under ``scratch`` (a folder the
    grading process removes at the end, so a killed worker's job folder goes too)."""
    import nbgrader.converters  # noqa: F401 (imported once here, not in the first job)

    from autograder.grading.autograde import wire
    from autograder.grading.autograde.grade_job import grade_job
    from autograder.grading.autograde.job_spec import JobOutcome
    from autograder.grading.autograde.processes import kill_descendants, set_subreaper

    # Whatever a job's kernel starts stays this worker's descendant, even detached with a
    # cleared environment; all of it is killed before the job's outcome is sent.
    set_subreaper()

    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    wire.send(answers, wire.READY)
    while True:
        try:
            spec = wire.receive(0)
        except wire.WorkerGone:
            return
        started = time.perf_counter()
        try:
            outcome = grade_job(spec, Path(scratch) if scratch else None)
        except Exception:  # a fault of this program, not the student's: report it, go on
            seconds = time.perf_counter() - started
            text = traceback.format_exc()
            message = f"the grading worker failed: {text.strip().splitlines()[-1]}"
            outcome = JobOutcome("error", message, seconds, None, {}, text)
        kill_descendants()
        wire.send(answers, outcome)


if __name__ == "__main__":
    main()
