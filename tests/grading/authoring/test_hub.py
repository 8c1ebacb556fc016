"""The semester's loop on a real JupyterHub with real Unix users and nbgrader's exchange.

One class for the module (an instructor and three students with per-run names, the
exchange, the students' kit-only environment, the instructor's course root, JupyterHub with
the proxy from npm on 127.0.0.1): the loop test runs nbgrader's exchange commands as two
students, from release to feedback, and checks what each can and cannot reach; the third
goes through the semester in Chromium; the fault tests hand in what was never released,
fetch as a user outside the class and kill a student's server. Everything is removed
afterwards, and no process of the class may be left. Skipped, saying why, where the test
cannot make accounts (not root) or has no node.
"""

import contextlib
import grp
import os
import pwd
import re
import shutil
import signal
import time
from datetime import UTC, datetime, timedelta

import nbformat
import pytest
from hub_api import call, server_processes, start_server, stop_server, user_token
from hub_helpers import (
    entries,
    feedback_score,
    hub_unavailable_reason,
    outsider,
    probe,
    run_as,
    type_in_reference,
)

from autograder.grading.authoring.hub.accounts import processes_of
from autograder.grading.authoring.hub.classroom import classroom
from autograder.grading.authoring.hub.exchange import COURSE_ID, chown_tree, write_user_settings
from autograder.grading.authoring.hub.launch import free_port, running_hub
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    REPO_ROOT,
    SOLUTIONS_DIR,
    notebook_path,
)

pytestmark = pytest.mark.slow

ASSIGNMENT = "00-recipe"


@pytest.fixture(scope="module")
def hub():
    """(classroom, hub settings) of one class for the module; nothing left afterwards."""
    reason = hub_unavailable_reason()
    if reason:
        print(f"hub tests skipped: {reason}")
        pytest.skip(reason)
    started = time.perf_counter()
    # two students for the semester's loop, a third for the browser
    with classroom(3, [ASSIGNMENT], log=lambda line: None) as room:
        uids = [account.uid for account in room.accounts]
        with running_hub(room, free_port()) as settings:
            print(f"class and hub up in {time.perf_counter() - started:.1f} s")
            yield room, settings
    left = {uid: processes_of(uid) for uid in uids if processes_of(uid)}
    assert not left, f"processes of the class left behind: {left}"
    names = {account.name for account in room.accounts}
    assert not names & {user.pw_name for user in pwd.getpwall()}, "accounts left behind"
    assert room.group not in {group.gr_name for group in grp.getgrall()}, "group left behind"
    assert not room.folder.exists(), f"{room.folder} left behind"


def as_instructor(room, *args: str, check: bool = True):
    """Run the instructor's python with ``args`` in the course root, as the instructor."""
    python = room.instructor_python
    return run_as(
        room.instructor, python, str(python), *args, cwd=room.course_root,
        library=room.library_path, check=check,
    )  # fmt: skip


def as_student(room, account, *args: str, check: bool = True):
    """Run the students' python with ``args`` in the student's working folder, as them."""
    python = room.student_python
    work = room.work_folders[account.name]
    return run_as(account, python, str(python), *args, cwd=work, library=room.library_path,
                  check=check)  # fmt: skip


@pytest.fixture(scope="module")
def released(hub):
    """The class with 00-recipe generated and released by the instructor."""
    room, _ = hub
    as_instructor(room, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force")
    as_instructor(room, "-m", "nbgrader", "release_assignment", ASSIGNMENT)
    return room


def submitted_at(output: str) -> str:
    """The timestamp nbgrader's submit printed ('Submitted as: COURSE ID TIMESTAMP')."""
    return re.search(rf"Submitted as: {COURSE_ID} {ASSIGNMENT} (.+)", output)[1].strip()


def test_release_fetch_submit_collect_grade_feedback_as_real_users(released):
    room = released
    teacher, typist, idle = room.instructor, room.students[0], room.students[1]
    teach_py, kit_py = room.instructor_python, room.student_python
    root = room.course_root
    lib = room.library_path

    def instructor(*args: str) -> str:
        done = run_as(teacher, teach_py, str(teach_py), *args, cwd=root, library=lib)
        return done.stdout + done.stderr

    def student(account, *args: str) -> str:
        work = room.work_folders[account.name]
        done = run_as(account, kit_py, str(kit_py), *args, cwd=work, library=lib)
        return done.stdout + done.stderr

    for account in (typist, idle):
        student(account, "-m", "nbgrader", "fetch_assignment", ASSIGNMENT)
    fetched = {a.name: notebook_path(room.work_folders[a.name], ASSIGNMENT) for a in (typist, idle)}

    # The typist hands in the blank release first, then the reference: the later one counts.
    first = submitted_at(student(typist, "-m", "nbgrader", "submit", ASSIGNMENT))
    time.sleep(1.1)
    type_in_reference(fetched[typist.name], notebook_path(SOLUTIONS_DIR, ASSIGNMENT), typist)
    later = submitted_at(student(typist, "-m", "nbgrader", "submit", ASSIGNMENT))
    student(idle, "-m", "nbgrader", "submit", ASSIGNMENT)
    assert later > first
    forge_hand_ins(room, forger=idle, victim=typist)

    collected = instructor("-m", "nbgrader", "collect", ASSIGNMENT)
    stamp = root / "submitted" / typist.name / ASSIGNMENT / "timestamp.txt"
    assert stamp.read_text().strip() == later
    refused = [line for line in collected.splitlines() if "hand-in refused for" in line]
    assert len(refused) == len(FORGED) and all(typist.name in line for line in refused), collected
    assert any(f"owned by {idle.name}, not by {typist.name}" in line for line in refused)
    assert any("cannot be read" in line for line in refused)
    listed = run_as(
        teacher, teach_py, str(teach_py.parent / "autograd-course"), "refused-hand-ins",
        cwd=root, library=lib,
    ).stdout  # fmt: skip
    assert f"{len(FORGED)} refused hand-in(s)" in listed, listed
    graded = run_as(
        teacher, teach_py, str(teach_py.parent / "autograd-course"), "autograde", ASSIGNMENT,
        "--workers", "2", cwd=root, library=lib,
    )  # fmt: skip
    assert "2 graded" in graded.stdout, graded.stdout
    assert "sandbox: bubblewrap" in graded.stderr + graded.stdout
    run_as(teacher, teach_py, str(teach_py.parent / "autograd-course"), "feedback", ASSIGNMENT,
           cwd=root)  # fmt: skip
    instructor("-m", "nbgrader", "release_feedback", ASSIGNMENT)

    scores = {}
    for account in (typist, idle):
        student(account, "-m", "nbgrader", "fetch_feedback", ASSIGNMENT)
        pages = list((room.work_folders[account.name] / ASSIGNMENT / "feedback").glob("*/*.html"))
        assert len(pages) == 1, pages  # the counted submission's page only
        scores[account.name] = feedback_score(pages[0])
    earned, total = scores[typist.name]
    assert total > 0 and earned == total, scores
    assert scores[idle.name] == (0.0, total), scores

    check_what_students_reach(room, typist, idle)


# Hand-ins a classmate makes by hand under another's name: dated far ahead (so nbgrader would
# take it as the newest), and with a timestamp nbgrader cannot read.
FORGED = ("2099-01-01 00:00:00.000000 UTC+forged", "next tuesday+forged")
FORGE = """
import os, sys
inbound, victim, assignment, notebook = sys.argv[1:5]
for stamp in sys.argv[5:]:
    folder = os.path.join(inbound, f"{victim}+{assignment}+{stamp}")
    os.mkdir(folder)
    with open(os.path.join(folder, f"{assignment}.ipynb"), "w") as out:
        out.write(open(notebook).read())
    with open(os.path.join(folder, "timestamp.txt"), "w") as out:
        out.write(stamp.split("+")[0])
"""


def forge_hand_ins(room, forger, victim) -> None:
    """``forger`` hands in as ``victim`` every way a student could: ``nbgrader submit
    --student`` (refused at once), folders made by hand in the inbound (set aside at collect)
    and renaming the victim's real hand-in away (refused: the inbound is sticky)."""
    work = room.work_folders[forger.name]
    python = room.student_python
    done = run_as(
        forger, python, str(python), "-m", "nbgrader", "submit", ASSIGNMENT,
        "--student", victim.name, cwd=work, library=room.library_path, check=False,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode != 0 and f"never as {victim.name}" in said, said
    inbound = room.exchange / COURSE_ID / "inbound"
    blank = notebook_path(work, ASSIGNMENT)
    run_as(
        forger, python, str(python), "-I", "-c", FORGE, str(inbound), victim.name, ASSIGNMENT,
        str(blank), *FORGED, cwd=work, library=room.library_path,
    )  # fmt: skip
    real = sorted(
        p for p in inbound.glob(f"{victim.name}+{ASSIGNMENT}+*") if p.owner() == victim.name
    )
    found = probe(forger, python, {"rename": ("rename", real[-1])}, room.library_path)
    assert found == {"rename": "PermissionError"}, found


def check_what_students_reach(room, typist, idle) -> None:
    """Each student, as their Unix user: nothing of the other, the instructor or the repo."""
    inbound = room.exchange / COURSE_ID / "inbound"
    findings = {}
    for me, other in ((typist, idle), (idle, typist)):
        theirs = next(inbound.glob(f"{other.name}+{ASSIGNMENT}+*"))
        other_work = room.work_folders[other.name]
        tries = {
            "list the exchange's inbound": ("list", inbound),
            "list the exchange's feedback": ("list", room.exchange / COURSE_ID / "feedback"),
            "write into the other's submitted notebook": ("write", theirs / f"{ASSIGNMENT}.ipynb"),
            "write into the other's submission timestamp": ("write", theirs / "timestamp.txt"),
            "read the other's working notebook": ("read", notebook_path(other_work, ASSIGNMENT)),
            "list the other's fetched feedback": ("list", other_work / ASSIGNMENT / "feedback"),
            "list the other's submission cache": ("list", other.home / ".local"),
            "list the instructor's source/": ("list", room.course_root / "source"),
            "read the instructor's source notebook": (
                "read", notebook_path(room.course_root / "source", ASSIGNMENT)
            ),
            "read the gradebook": ("read", room.course_root / "gradebook.db"),
            "read the instructor's submitted/ copy": (
                "list", room.course_root / "submitted" / other.name
            ),
            "read the repository's solutions/": (
                "read", notebook_path(SOLUTIONS_DIR, ASSIGNMENT)
            ),
            "list the repository": ("list", REPO_ROOT),
            "write into the released assignment": (
                "write", room.exchange / COURSE_ID / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            ),
        }  # fmt: skip
        found = probe(me, room.student_python, tries, room.library_path)
        findings[me.name] = found
        allowed = [label for label, outcome in found.items() if outcome == "allowed"]
        assert not allowed, f"{me.name} may: {allowed}"
        # nbgrader leaves a hand-in readable by all, hidden by its name's random part only;
        # the hub's submit closes it: even the exact path is refused.
        direct = {
            "read the other's submitted notebook": ("read", theirs / f"{ASSIGNMENT}.ipynb"),
            "read the other's submission timestamp": ("read", theirs / "timestamp.txt"),
            "list the other's submission": ("list", theirs),
        }
        found.update(probe(me, room.student_python, direct, room.library_path))
        allowed = [label for label, outcome in found.items() if outcome == "allowed"]
        assert not allowed, f"{me.name} may: {allowed}"
    # The students' environment has the kit, not the course's engine or grading tools.
    done = run_as(
        typist, room.student_python, str(room.student_python), "-I", "-c",
        "import importlib.util as u; print([bool(u.find_spec(m)) for m in "
        "('autograder.checks', 'autograder.engine', 'autograder.grading', 'nbgrader')])",
        cwd=room.work_folders[typist.name], library=room.library_path,
    )  # fmt: skip
    assert done.stdout.strip() == "[True, False, False, True]", done.stdout
    print({name: sorted(set(found.values())) for name, found in findings.items()})


NEVER_RELEASED = "99-never-released"


def test_a_submission_of_an_assignment_never_released_is_refused(released):
    room = released
    student = room.students[1]
    folder = room.work_folders[student.name] / NEVER_RELEASED
    folder.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), folder / f"{NEVER_RELEASED}.ipynb")
    chown_tree(folder, student.uid, student.gid)
    inbound = room.exchange / COURSE_ID / "inbound"
    before = entries(inbound)
    cache = student.home / ".local" / "share" / "jupyter" / "nbgrader_cache"
    try:
        done = as_student(room, student, "-m", "nbgrader", "submit", NEVER_RELEASED, check=False)
    finally:
        shutil.rmtree(folder)
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    outbound = room.exchange / COURSE_ID / "outbound" / NEVER_RELEASED
    assert f"Assignment not found: {outbound}" in said, said
    assert entries(inbound) == before
    assert not list(cache.rglob(f"*{NEVER_RELEASED}*"))


def test_a_release_showing_an_open_assignments_answers_is_refused_on_the_hub(released):
    """02's release shows 01's answers: with 01 due in a week, the instructor's nbgrader
    refuses to release it (the course settings' release, scheduled_release.py)."""
    room = released
    later, earlier = "02-how-it-works", "01-worked-example"
    added = [room.course_root / "source" / a for a in (earlier, later)]
    added.append(room.course_root / "release" / later)
    for assignment in (earlier, later):
        shutil.copytree(SOLUTIONS_DIR / assignment, room.course_root / "source" / assignment)
    shutil.copytree(COURSE_DIR / later, added[-1])  # what generate_assignment makes of it
    term = room.course_root / "term.toml"
    kept = term.read_text()
    due = (datetime.now(UTC) + timedelta(days=7)).replace(microsecond=0)
    term.write_text(f'[due]\n"{earlier}" = {due.isoformat()}\n[closed]\n"{ASSIGNMENT}" = "out"\n')
    chown_tree(room.course_root, room.instructor.uid, room.instructor.gid)
    try:
        done = as_instructor(room, "-m", "nbgrader", "release_assignment", later, check=False)
    finally:
        for folder in added:
            shutil.rmtree(folder)
        term.write_text(kept)
    said = done.stdout + done.stderr
    assert done.returncode != 0 and f"{later} shows answers of {earlier}" in said, said
    assert not (room.exchange / COURSE_ID / "outbound" / later).exists()


def test_an_lti_launch_signs_the_student_in_and_a_tampered_one_is_refused(hub):
    """A second hub of the class that takes LTI 1.3 launches from a test LMS (its key's JWKS
    on loopback): a launch signed by the platform logs the student in to their account; a
    token changed after signing, and a launch by someone the class does not list, are refused."""
    from lti_platform import CLIENT_ID, ISSUER, launch, test_platform

    from autograder.grading.authoring.hub.lti import LtiPlatform

    room, _ = hub
    student = room.students[0]
    with test_platform() as platform:
        lms = LtiPlatform(
            ISSUER, CLIENT_ID, platform.authorize_url, platform.jwks_url,
            {"lms-1001": student.name},
        )  # fmt: skip
        with running_hub(room, free_port(), lti=lms) as settings:
            signed_in = launch(platform, settings.url, "lms-1001")
            assert signed_in.status_code == 200, signed_in.text[-2000:]
            assert student.name in signed_in.text
            tampered = launch(platform, settings.url, "lms-1001", tamper=True)
            assert tampered.status_code == 400 and "Signature" in tampered.text
            stranger = launch(platform, settings.url, "lms-9999")
            assert stranger.status_code == 403


def test_a_user_outside_the_course_can_neither_fetch_nor_look(released):
    room = released
    with outsider(room.group) as stranger:
        # they know the course and where its exchange is: the settings a student has
        write_user_settings(stranger.home, room.exchange, stranger.uid, stranger.gid)
        before = entries(stranger.home)
        done = run_as(
            stranger, room.student_python, str(room.student_python), "-m", "nbgrader",
            "fetch_assignment", ASSIGNMENT, cwd=stranger.home, library=room.library_path,
            check=False,
        )  # fmt: skip
        said = done.stdout + done.stderr
        assert done.returncode != 0, said
        assert f"Unwritable directory, please contact your instructor: {room.exchange}" in said
        assert entries(stranger.home) == before, "the refused fetch wrote into their home"
        outbound = room.exchange / COURSE_ID / "outbound"
        released_notebook = notebook_path(outbound / ASSIGNMENT, ASSIGNMENT)
        tries = {
            "list the released assignments": ("list", outbound),
            "read the released notebook": ("read", released_notebook),
            "write into the inbound": ("write", room.exchange / COURSE_ID / "inbound" / "x"),
        }  # fmt: skip
        found = probe(stranger, room.student_python, tries, room.library_path)
        assert set(found.values()) == {"PermissionError"}, found


def test_a_students_semester_in_the_browser(released, hub):
    """In Chromium: a student logs in, fetches 00-recipe in the Assignments tab, runs a
    check, submits; the instructor sees the submission in the formgrader, and its score once
    the command line has graded it; the student fetches the feedback. Screenshots:
    build/screenshots/hub-*.png."""
    from browser_helpers import (
        PAGE_MS,
        RUN_MS,
        SCREENSHOTS,
        chromium,
        code_cell,
        run_menu,
        wait_until_run,
    )
    from hub_browser import assignment_row, log_in, open_assignment_list
    from playwright.sync_api import expect

    expect.set_options(timeout=PAGE_MS)
    room, settings = released, hub[1]
    student, teacher = room.students[2], room.instructor
    work = room.work_folders[student.name]
    shots = SCREENSHOTS
    shots.mkdir(parents=True, exist_ok=True)
    with chromium("hub browser test") as browser:
        try:
            page = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
            page.set_default_timeout(PAGE_MS)
            log_in(page, settings.url, student.name, student.password, shots / "hub-login.png")

            open_assignment_list(page)
            assignment_row(page, "released", ASSIGNMENT).get_by_role("button", name="Fetch").click()
            fetched = assignment_row(page, "fetched", ASSIGNMENT)
            expect(fetched).to_be_visible()
            page.screenshot(path=str(shots / "hub-assignments-fetched.png"))
            notebook = notebook_path(work, ASSIGNMENT)
            found = sorted(str(p) for p in student.home.rglob(f"{ASSIGNMENT}*"))
            assert notebook.is_file() and notebook.stat().st_uid == student.uid, found

            page.goto(
                f"{settings.url}/user/{student.name}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
            )
            expect(page.get_by_text("Python 3 (ipykernel) | Idle")).to_have_count(1, timeout=RUN_MS)
            run_menu(page, "Run All Cells")
            check = code_cell(page, "check_parity(lambda x, y: x + y")
            output = check.locator(".jp-OutputArea-output")
            expect(output.first).to_contain_text("NotImplementedError", timeout=RUN_MS * 2)
            wait_until_run(check)
            check.scroll_into_view_if_needed()
            check.screenshot(path=str(shots / "hub-check-output.png"))

            open_assignment_list(page)
            assignment_row(page, "fetched", ASSIGNMENT).get_by_role("button", name="Submit").click()
            expect(assignment_row(page, "submitted", ASSIGNMENT)).to_be_visible()
            inbound = room.exchange / COURSE_ID / "inbound"
            assert [p for p in inbound.iterdir() if p.name.startswith(f"{student.name}+")]

            as_instructor(room, "-m", "nbgrader", "collect", ASSIGNMENT)
            grader = browser.new_context(viewport={"width": 1300, "height": 900}).new_page()
            grader.set_default_timeout(PAGE_MS)
            log_in(grader, settings.url, teacher.name, teacher.password)
            grader.goto(
                f"{settings.url}/user/{teacher.name}/formgrader/manage_submissions/{ASSIGNMENT}"
            )
            expect(grader.locator("body")).to_contain_text(student.name)
            grader.screenshot(path=str(shots / "hub-formgrader-submission.png"))

            course = str(room.instructor_python.parent / "autograd-course")
            run_as(teacher, room.instructor_python, course, "autograde", ASSIGNMENT,
                   "--student", student.name, "--workers", "1", cwd=room.course_root,
                   library=room.library_path)  # fmt: skip
            # the formgrader opens the gradebook the command line graded into (one gradebook)
            grader.reload()
            row = grader.locator("tr", has_text=student.name)
            expect(row).to_contain_text(re.compile(r"graded\s*0 / [1-9]"))
            expect(row).not_to_contain_text("needs autograding")
            grader.screenshot(path=str(shots / "hub-formgrader-scores.png"))
            run_as(teacher, room.instructor_python, course, "feedback", ASSIGNMENT,
                   cwd=room.course_root, library=room.library_path)  # fmt: skip
            as_instructor(room, "-m", "nbgrader", "release_feedback", ASSIGNMENT)

            page.reload()
            open_assignment_list(page)
            submitted = assignment_row(page, "submitted", ASSIGNMENT)
            submitted.get_by_role("button", name="Fetch Feedback").click()
            expect(submitted).to_contain_text("view feedback")
            page.screenshot(path=str(shots / "hub-feedback-fetched.png"))
            pages = list((work / ASSIGNMENT / "feedback").glob("*/*.html"))
            assert len(pages) == 1, pages
            earned, total = feedback_score(pages[0])
            assert total > 0 and earned == 0, (earned, total)  # the blank release handed in
            relative = pages[0].relative_to(work)
            page.goto(f"{settings.url}/user/{student.name}/files/{relative}")
            expect(page.locator("body")).to_contain_text("Score:")
            page.screenshot(path=str(shots / "hub-feedback-page.png"))
        except Exception:
            with contextlib.suppress(Exception):  # where the student's page stopped
                browser.contexts[0].pages[0].screenshot(path=str(shots / "hub-failure.png"))
            raise


def test_a_killed_student_server_keeps_the_saved_notebook(hub):
    """Saved through the contents API, the server killed (SIGKILL), restarted through the
    hub's API: the notebook reads back as saved, still the student's file."""
    room, settings = hub
    student = room.students[1]
    token = user_token(settings, student.name)
    user = f"{settings.url}/user/{student.name}"
    saved = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("answer = 42  # typed before the crash")]
    )
    kept = room.work_folders[student.name] / "kept-through-a-crash.ipynb"
    try:
        start_server(settings.url, student.name, token)
        body = {"type": "notebook", "format": "json", "content": saved}
        status, _ = call(f"{user}/api/contents/{kept.name}", token, "PUT", body)
        assert status in (200, 201), status
        [killed] = server_processes(student.uid)
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while killed in server_processes(student.uid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert killed not in server_processes(student.uid)

        stop_server(settings.url, student.name, token)  # the hub learns it is gone
        start_server(settings.url, student.name, token)
        [restarted] = server_processes(student.uid)
        assert restarted != killed
        _, model = call(f"{user}/api/contents/{kept.name}", token)
        assert model["content"]["cells"][0]["source"] == saved.cells[0].source
        assert kept.stat().st_uid == student.uid
    finally:
        stop_server(settings.url, student.name, token)
        kept.unlink(missing_ok=True)
