"""``autograd-course hub``: the course as a class on a local JupyterHub until Ctrl-C."""

import signal
import time

from autograder.grading.authoring.hub.accounts import AccountError
from autograder.grading.authoring.hub.classroom import classroom
from autograder.grading.authoring.hub.launch import HubError, require_free, running_hub
from autograder.grading.authoring.hub.proxy import ProxyError, node_missing
from autograder.grading.course.repo_paths import assignments

LOCAL_TRIAL_NOTE = (
    "This hub is for a local trial only: it listens on 127.0.0.1, its accounts and passwords "
    "exist for this run and are removed at Ctrl-C, with their homes (docs/instructors.md says "
    "what a real deployment changes)."
)


class TrialError(RuntimeError):
    """The trial hub cannot start: one line for the command to print."""


def run_trial(students: int, port: int, password: str | None) -> int:
    """Make the class, start the hub, print how to log in, wait for Ctrl-C, remove it all."""
    try:
        require_free(port)  # first: it needs nothing installed, so it is said on any machine
        missing = node_missing()
        if missing:
            raise ProxyError(missing)
        started = time.monotonic()
        with classroom(students, assignments(), password) as room:
            with running_hub(room, port) as hub:
                seconds = time.monotonic() - started
                print(f"\nThe course hub is up at {hub.url} (in {seconds:.0f} s).")
                print(LOCAL_TRIAL_NOTE)
                print(
                    f"  instructor  {room.instructor.name:<16} password {room.instructor.password}"
                )
                for student in room.students:
                    print(f"  student     {student.name:<16} password {student.password}")
                print(
                    f"The instructor's course root is {room.course_root} (formgrader: "
                    f"{hub.url}/user/{room.instructor.name}/formgrader); students fetch "
                    "released assignments in the Assignments tab.\nCtrl-C stops it.",
                    flush=True,
                )
                wait_for_interrupt()
    except (AccountError, HubError, ProxyError, OSError) as error:
        raise TrialError(str(error)) from None
    print("hub stopped; accounts, homes and the exchange removed")
    return 0


def wait_for_interrupt() -> None:
    """Sleep until Ctrl-C (SIGINT) or SIGTERM."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("\nstopping the hub...", flush=True)
