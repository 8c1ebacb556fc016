"""``autograd-course hub``: the course as a class on a local JupyterHub until Ctrl-C."""

import signal
import time
from pathlib import Path

from autograder.grading.authoring.hub.accounts import AccountError
from autograder.grading.authoring.hub.classroom import classroom
from autograder.grading.authoring.hub.launch import HubError, require_free, running_hub
from autograder.grading.authoring.hub.lti import LtiError, LtiPlatform, read_lti
from autograder.grading.authoring.hub.proxy import ProxyError, node_missing
from autograder.grading.course.repo_paths import assignments

LOCAL_TRIAL_NOTE = (
    "This hub is for a local trial only: it listens on 127.0.0.1, its accounts and passwords "
    "exist for this run and are removed at Ctrl-C, with their homes (docs/instructors.md says "
    "what a real deployment changes)."
)


class TrialError(RuntimeError):
    """The trial hub cannot start: one line for the command to print."""


def run_trial(students: int, port: int, password: str | None, lti: Path | None = None) -> int:
    """Make the class, start the hub, print how to log in, wait for Ctrl-C, remove it all.
    With ``lti`` (a settings file, ``hub/lti.py``), students sign in by launches from the LMS."""
    try:
        require_free(port)  # first: it needs nothing installed, so it is said on any machine
        if lti is not None:  # checked before any account is made
            read_lti(lti, "instructor", [f"student{n}" for n in range(students)])
        missing = node_missing()
        if missing:
            raise ProxyError(missing)
        started = time.monotonic()
        with classroom(students, assignments(), password) as room:
            names = [student.name for student in room.students]
            platform = read_lti(lti, room.instructor.name, names) if lti else None
            with running_hub(room, port, lti=platform) as hub:
                if platform is not None:
                    print_lti_settings(hub.url, platform)
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
    except (AccountError, HubError, ProxyError, LtiError, OSError) as error:
        raise TrialError(str(error)) from None
    print("hub stopped; accounts, homes and the exchange removed")
    return 0


def print_lti_settings(url: str, platform: LtiPlatform) -> None:
    """What the instructor pastes into the LMS's tool registration, and who is who."""
    print(f"\nLTI 1.3: launches from {platform.issuer} (client id {platform.client_id}).")
    print(f"  OIDC login initiation URL  {url}/hub/lti13/oauth_login")
    print(f"  redirect (launch) URL      {url}/hub/lti13/oauth_callback")
    print(f"  target link URI            {url}/hub/home")
    print(f"  tool configuration (JSON)  {url}/hub/lti13/config")
    for lms_id, account in platform.accounts.items():
        print(f"  LMS user {lms_id} -> {account}")


def wait_for_interrupt() -> None:
    """Sleep until Ctrl-C (SIGINT) or SIGTERM."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("\nstopping the hub...", flush=True)
