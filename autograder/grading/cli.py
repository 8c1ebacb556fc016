"""``autograd-course``: the instructor's command line over nbgrader.

Course-building commands (release, sync-engine, demo) work on this repository; grading
commands (autograde, feedback, export, report) work on an nbgrader course root given by
``--root`` (default: the current folder), whose nbgrader_config.py says where things are.
"""

import argparse
import contextlib
import faulthandler
import json
import os
import shlex
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from autograder.grading.course.grading_status import Status
from autograder.grading.course.nbgrader_workspace import NbgraderError
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, assignments, notebook_path
from autograder.grading.course.term import TERM_FILE


def _release(args: argparse.Namespace) -> int:
    from autograder.grading.authoring.i18n.edition import edition, editions, generate_solutions
    from autograder.grading.authoring.release import generate_release, publish_release
    from autograder.grading.course.run_progress import print_to_stderr

    ids = args.assignment or assignments()
    unknown = sorted(set(ids) - set(assignments()))
    if unknown:
        print(f"error: unknown assignment(s) {unknown}; known: {assignments()}", file=sys.stderr)
        return 2
    chosen = editions() if args.edition == "all" else [edition(args.edition)]
    for each in chosen:
        if each.translated:
            for path in generate_solutions(each):
                print(f"regenerated {path} from solutions/ and i18n/{each.language}/")
        workspace = args.workspace / each.language
        release = generate_release(workspace, ids, print_to_stderr, each.language)
        written = publish_release(release, each.course)
        print(f"regenerated {', '.join(written)} in {each.course}")
    return 0


def _sync_engine(args: argparse.Namespace) -> int:
    from autograder.grading.authoring.engine_sync import sync_notebook

    drifted_any = False
    for assignment in assignments():
        drifted = sync_notebook(notebook_path(SOLUTIONS_DIR, assignment), write=not args.check)
        if drifted:
            drifted_any = True
            verb = "differs from" if args.check else "rewritten from"
            print(f"{assignment}: {', '.join(drifted)} {verb} autograder/engine")
    if args.check and drifted_any:
        print("run `autograd-course sync-engine` to update the notebooks", file=sys.stderr)
        return 1
    return 0


def _translations(args: argparse.Namespace) -> int:
    from autograder.grading.authoring.i18n.catalog import LANGUAGES
    from autograder.grading.authoring.i18n.update import update_all

    owed = 0
    for language in LANGUAGES:
        for update in update_all(language):
            owed += update.untranslated + update.fuzzy
            state = "updated" if update.changed else "unchanged"
            print(
                f"{update.path}: {state}, {update.entries} entries, "
                f"{update.untranslated} untranslated, {update.fuzzy} fuzzy"
            )
    if owed:
        print(f"{owed} entries need a translator (empty msgstr or fuzzy)", file=sys.stderr)
    return 1 if args.check and owed else 0


def _student_kit(args: argparse.Namespace) -> int:
    from autograder.grading.authoring.i18n.edition import edition
    from autograder.grading.authoring.student_kit import KitError, build_kit, request

    try:
        kit = request(
            edition(args.edition),
            args.out,
            through=args.through,
            self_study=args.self_study,
            at=args.at,
            term_file=args.term,
        )
    except KitError as error:
        raise UsageError(str(error)) from None
    for path in build_kit(kit):
        size = (kit.out / path).stat().st_size
        print(f"{size:>10,}  {path}")
    print(f"student kit for {', '.join(kit.assignments)} ({args.edition}) in {kit.out}")
    for note in kit.notes:
        print(note)
    return 0


def _aware_time(text: str) -> datetime:
    """A command-line date and time that says its time zone (an offset or Z)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 date and time") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no time zone: add an offset, e.g. +01:00")
    return value


def _reveals(args: argparse.Namespace) -> int:
    from autograder.grading.authoring.i18n.edition import edition, editions
    from autograder.grading.authoring.reveals import markdown_table, reveal_map

    chosen = editions() if args.edition == "all" else [edition(args.edition)]
    maps = [reveal_map(each) for each in chosen]
    if args.json:
        print(json.dumps([each.as_json() for each in maps], indent=2))
    else:
        print(markdown_table(maps))
    return 0


def _release_assignment(args: argparse.Namespace) -> int:
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from autograder.grading.course.course_root import nbgrader_config

    _course(args.root, args.assignment)
    config = nbgrader_config(args.root)
    if args.force is not None:
        if not args.force.strip():
            raise UsageError("--force needs a reason, e.g. --force 'every hand-in of 01 is in'")
        config.ScheduledRelease.force_reason = args.force.strip()
    result = NbGraderAPI(CourseDirectory(config=config), config=config).release_assignment(
        args.assignment
    )
    if not result["success"]:
        marker = "release refused"
        log = result.get("log", "").splitlines()
        refused = [line[line.index(marker) :] for line in log if marker in line]
        other = (result.get("error") or result.get("log") or "release failed").strip()
        raise UsageError(refused[-1] if refused else other.splitlines()[-1])
    print(f"released {args.assignment} to nbgrader's exchange")
    return 0


def _refused_hand_ins(args: argparse.Namespace) -> int:
    from nbgrader.exchange.default.exchange import Exchange

    from autograder.grading.course.course_root import nbgrader_config
    from autograder.grading.pipeline.integrity.owned_collect import (
        SET_ASIDE,
        refusal,
        refused_hand_ins,
        remove_refused,
    )

    config = nbgrader_config(args.root)
    exchange = config.Exchange.get("root", Exchange.class_traits()["root"].default_value)
    inbound = Path(exchange) / config.CourseDirectory.course_id / "inbound"
    if not inbound.is_dir():
        raise UsageError(f"no inbound folder at {inbound}: nothing was released from {args.root}")
    found = refused_hand_ins(inbound)
    for path in found:
        reason = refusal(path, name=path.name.removeprefix(SET_ASIDE)) or "set aside"
        print(remove_refused(path) if args.remove else f"{path.name}: {reason}")
    print(f"{len(found)} refused hand-in(s) in {inbound}")
    return 0


def _hub(args: argparse.Namespace) -> int:
    from autograder.grading.authoring.hub.trial import TrialError, run_trial

    try:
        return run_trial(args.students, args.port, args.password, args.lti)
    except TrialError as error:
        raise UsageError(str(error)) from None


def _doctor(args: argparse.Namespace) -> int:
    from autograder.grading.assurance.doctor import main as doctor_main

    return doctor_main(brief=args.brief)


def _demo(args: argparse.Namespace) -> int:
    from autograder.grading.assurance.demo import main as demo_main

    return demo_main(args.workspace)


class UsageError(Exception):
    """Bad input on the command line: printed as one line, exit status 2."""


def _course(root: Path, *assignments: str):
    """The course at ``root``, refusing a folder that is not one or an unknown assignment."""
    from autograder.grading.pipeline.autograde import AutogradeError, load_course

    try:
        course = load_course(root)
    except AutogradeError as error:
        raise UsageError(str(error)) from error
    for assignment in assignments:
        if not (course.source / assignment).is_dir():
            known = sorted(p.name for p in course.source.glob("*") if p.is_dir())
            raise UsageError(
                f"unknown assignment {assignment!r} in {course.source}; known: {known}"
            )
    return course


@contextlib.contextmanager
def _exclusive(course, args: argparse.Namespace) -> Iterator[None]:
    """Hold the course root's lock meanwhile: a second command on it is bad input (exit 2)."""
    from autograder.grading.course.course_lock import CourseBusy, course_lock, pid_alive

    with contextlib.ExitStack() as stack:
        try:
            left = stack.enter_context(course_lock(course.root, args.command_line))
        except CourseBusy as error:
            raise UsageError(str(error)) from None
        if left is not None:
            now = "its pid is now another process's" if pid_alive(left.pid) else "no longer running"
            print(
                f"note: taking over the lock left by {left.describe()}: it ended without "
                f"releasing it (killed?), {now}",
                file=sys.stderr,
            )
        yield


def _require_submissions(course, assignment: str) -> None:
    from autograder.grading.course.course_root import handed_in

    if not any(handed_in(course, assignment)):
        raise UsageError(
            f"no submissions of {assignment}: {course.submitted}/<student>/{assignment}/ "
            "is empty or missing (collect them first, or pass --zip)"
        )


def _autograde(args: argparse.Namespace) -> int:
    course = _course(args.root, args.assignment)
    with _exclusive(course, args):
        return _autograde_course(course, args)


def _autograde_course(course, args: argparse.Namespace) -> int:
    from autograder.grading.pipeline.autograde import AutogradeError, autograde, collect_zip

    try:
        if args.zip:
            collection = collect_zip(course, args.assignment, args.zip)
            _print_collection(collection, args.zip)
        _require_submissions(course, args.assignment)
        run = autograde(
            course,
            args.assignment,
            workers=args.workers,
            students=args.student,
            force=args.force,
            cell_timeout=args.cell_timeout,
            memory_limit_mb=args.memory_limit or None,
            submission_timeout=args.submission_timeout,
            verdicts=args.verdicts,
            sandbox=not args.no_sandbox,
            scheduler=args.scheduler,
        )
    except AutogradeError as error:
        raise UsageError(str(error)) from error
    except KeyboardInterrupt:
        print("\ninterrupted: jobs cancelled, grades recorded so far kept", file=sys.stderr)
        return 130
    counts = Counter(record.status for record in run.records)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"{args.assignment}: {summary or 'nothing to grade'} in {run.wall_seconds:.0f} s")
    for record in run.failures:
        print(f"  {record.student}: {record.status}: {record.message}")
    for record in run.with_status(Status.GRADED):
        if record.message:  # a note on the hand-in (its timestamp), not a failure
            print(f"  {record.student}: note: {record.message}")
    errored = run.with_status(Status.ERROR)
    attempted = [r for r in run.records if r.status != Status.SKIPPED]
    if errored and len(errored) == len(attempted):
        # Nothing was graded: a fault of the grading itself (worker, gradebook), not of
        # the students' code; no scan of notebooks that were not graded.
        print(
            f"error: every submission failed to grade ({len(errored)} of {len(attempted)}), "
            f"{errored[0].student}: {(errored[0].message.splitlines() or [''])[0]}",
            file=sys.stderr,
        )
        return 1
    _scan(course, args.assignment, args.zero_flagged)
    odd = run.with_status(Status.BAD_ID)
    if odd:
        print(
            f"error: {len(odd)} hand-in(s) not graded, their folder names are not ids nbgrader "
            "can take (above); rename each folder and run autograde again",
            file=sys.stderr,
        )
    if errored:
        print(
            f"error: {len(errored)} of {len(attempted)} submissions failed to grade (status "
            "error, 0 for now); the others are recorded; running autograde again grades them",
            file=sys.stderr,
        )
    return 1 if errored or odd else 0


def _print_collection(collection, zip_path: Path) -> None:
    """What collecting a zip did: how many were collected, each refused upload in one line."""
    refused = collection.refused
    print(
        f"collected {len(collection.collected)} submissions from {zip_path}"
        + (f"; {len(refused)} refused (collect_log.json)" if refused else ""),
        file=sys.stderr,
    )
    for refusal in refused:
        student = refusal.student if refusal.student.isprintable() else repr(refusal.student)
        print(f"  {student or '(no student)'}: {refusal.reason}", file=sys.stderr)


def _scan(course, assignment: str, zero_flagged: bool) -> None:
    """The integrity scan after grading: flags to integrity.json, zeroing if configured."""
    from autograder.grading.pipeline.integrity import (
        FLAGS_NAME,
        scan_assignment,
        zero_flagged_setting,
    )

    zero = zero_flagged or zero_flagged_setting(course.config)
    flags, zeroed = scan_assignment(course, assignment, zero=zero)
    students = sorted({flag.student for flag in flags})
    print(
        f"integrity scan: {len(flags)} flags on {len(students)} students "
        f"({course.root / FLAGS_NAME}); {len(zeroed)} test grades set to 0"
        + ("" if zero else " (zeroing is off: c.CourseIntegrity.zero_flagged_exercises)")
    )
    for flag in flags:
        print(f"  {flag.student}: {flag.cell}, line {flag.line}: {flag.rule}: {flag.detail}")


def _redteam(args: argparse.Namespace) -> int:
    from autograder.grading.assurance.redteam import main as redteam_main

    return redteam_main(args.workspace)


def _mutate(args: argparse.Namespace) -> int:
    from autograder.grading.assurance.mutation.grading import GradingOptions, MutationError
    from autograder.grading.assurance.mutation.report import markdown_table
    from autograder.grading.assurance.mutation.run import (
        MutateSettings,
        UnknownMutantError,
        run_mutation,
    )

    unknown = sorted(set(args.assignment) - set(assignments()))
    if unknown:
        raise UsageError(f"unknown assignment(s) {unknown}; known: {assignments()}")
    settings = MutateSettings(
        assignments=tuple(args.assignment),
        sample=args.sample,
        seed=args.seed,
        out=args.out,
        # a run of chosen mutants is no measure of the whole: the score table stays
        readme=None if args.no_readme or args.mutant else MutateSettings.readme,
        mutants=tuple(args.mutant or ()),
        options=GradingOptions(
            workers=args.workers, cell_timeout=args.cell_timeout, batch_size=args.batch
        ),
    )
    try:
        report = run_mutation(settings)
    except UnknownMutantError as error:
        raise UsageError(str(error)) from None
    except MutationError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.mutant:
        for row in report.rows:
            print(
                f"{row.mutant.id} ({row.mutant.assignment}/{row.mutant.cell}): {row.verdict}"
                f" ({row.outcome.status}, {row.outcome.score:g}/{row.outcome.max_score:g};"
                f" lost {', '.join(row.outcome.lost) or 'nothing'})"
            )
    else:  # the table measures whole notebooks, not a few chosen mutants
        print(markdown_table(report))
    print(f"report: {args.out / 'report.html'}, {args.out / 'report.json'}")
    return 0


def _extension(args: argparse.Namespace) -> int:
    from autograder.grading.authoring.reveals import course_reveal_map
    from autograder.grading.course.course_root import AutogradeError
    from autograder.grading.course.term import TermError
    from autograder.grading.course.term_gradebook import course_term, grant

    course = _course(args.root, args.assignment)
    try:
        with _exclusive(course, args):
            granted = grant(course, args.assignment, args.student, args.hours, args.until)
        term = course_term(course)
    except (AutogradeError, TermError) as error:
        raise UsageError(str(error)) from None
    if granted.hours:
        print(
            f"{granted.student} has until {granted.until:%Y-%m-%d %H:%M %Z} for "
            f"{granted.assignment} ({granted.hours:g} h past its due date)"
        )
    else:
        print(f"{granted.student} has no extension on {granted.assignment}")
    reveals = course_reveal_map(course.source, course.release)
    shown_by = [r for r in reveals.assignments if granted.assignment in reveals.revealed_by(r)]
    if shown_by:
        print(
            f"note: {', '.join(shown_by)} show(s) {granted.assignment}'s answers: no kit or "
            f"release holds them before {term.closes_at(granted.assignment):%Y-%m-%d %H:%M %Z} "
            "for anyone (due date + late window + longest extension)"
        )
    return 0


def _feedback(args: argparse.Namespace) -> int:
    from autograder.grading.course.nbgrader_workspace import run_nbgrader
    from autograder.grading.pipeline.feedback_exporter import exporter_options

    course = _course(args.root, args.assignment)
    command = ["generate_feedback", args.assignment, "--force", *exporter_options(course.config)]
    if args.student:
        # One word with "=": an id starting with "-" is not taken for an option.
        command.append(f"--student={args.student}")
    with _exclusive(course, args):
        run_nbgrader(course.workdir, *command)
    print(f"feedback written under {course.feedback}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from nbgrader.api import Gradebook

    from autograder.grading.course.nbgrader_workspace import run_nbgrader
    from autograder.grading.pipeline.lms_export import (
        EXPORTERS,
        RosterError,
        check_roster,
        read_roster,
    )

    course = _course(args.root)
    name = "grades.csv" if args.format == "csv" else f"grades-{args.format}.csv"
    target = (args.to or course.root / name).resolve()
    options = []
    if args.format != "csv":
        roster_path = (args.roster or course.root / "roster.csv").resolve()
        try:  # checked here first, so that a bad roster writes nothing
            roster = read_roster(roster_path)
            with Gradebook(course.db_url) as gradebook:
                students = {student.id for student in gradebook.students}
            check_roster(roster, students, roster_path)
        except RosterError as error:
            raise UsageError(str(error)) from None
        plugin = EXPORTERS[args.format].rsplit(".", 1)[1]
        options.append(f"--{plugin}.roster={roster_path}")
    with _exclusive(course, args):
        # nbgrader's export with this package's writers: quoted, formulas neutralised.
        exporter = f"--exporter={EXPORTERS[args.format]}"
        run_nbgrader(course.workdir, "export", exporter, *options, "--to", str(target))
    print(f"grades exported to {target} ({args.format})")
    return 0


def _report(args: argparse.Namespace) -> int:
    from autograder.grading.pipeline.report.gather import write_report

    course = _course(args.root, *args.assignment)
    out_dir = args.out or course.root / "report"
    for path in write_report(course, args.assignment, out_dir):
        print(path)
    return 0


def _similarity(args: argparse.Namespace) -> int:
    from autograder.grading.pipeline.similarity.run import SimilarityError, run_similarity
    from autograder.grading.pipeline.similarity.settings import Settings

    course = _course(args.root)
    settings = Settings(
        noise=args.noise,
        guarantee=max(args.guarantee, args.noise),
        threshold=args.threshold,
        min_overlap=args.min_overlap,
        structure_threshold=args.structure_threshold,
        min_shapes=args.min_shapes,
        top=args.top,
        detail=max(args.detail, args.top),
    )
    try:
        run = run_similarity(course, args.assignment, args.against or [], settings)
    except SimilarityError as error:
        raise UsageError(str(error)) from None
    for skipped in run.skipped:
        print(f"  skipped {skipped.author}: {skipped.reason}")
    if note := run.alone_note():
        print(f"  note: {note}")
    flagged = [pair for pair in run.pairs if pair.flagged(settings)]
    for pair in flagged:
        print(
            f"  {pair.a} ~ {pair.b} ({pair.kind}): {pair.score:.2f}, structure {pair.structure:.2f}"
        )
    print(
        f"{args.assignment}: {len(flagged)} flagged pairs of {len(run.pairs)} that share code "
        f"(evidence for a person; no grade changed): {', '.join(map(str, run.written))}"
    )
    return 0


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, not {value}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("."),
        help="nbgrader course root holding nbgrader_config.py (default: current folder)",
    )


def _add_grading_commands(commands) -> None:
    """The commands of grading a cohort and of proving the grader, one function each."""
    for add in (
        _add_autograde_command,
        _add_feedback_command,
        _add_export_command,
        _add_report_command,
        _add_similarity_command,
        _add_redteam_command,
        _add_mutate_command,
    ):
        add(commands)


def _add_autograde_command(commands) -> None:
    """The autograde command: grading a cohort, its limits, sandbox and verdicts."""
    grade = commands.add_parser(
        "autograde",
        help="grade every submission with nbgrader autograde, in parallel, with limits",
        description="Grade submitted/<student>/ASSIGNMENT/ with the real nbgrader autograde, "
        "on a Dask cluster (local worker processes, or --scheduler), a fresh kernel per "
        "submission, N at a time. A submission that loops, runs "
        "out of memory or kills its kernel is recorded in autograde_log.json and graded 0 "
        "where nothing was graded; the others are unaffected. A file nbgrader cannot grade "
        "(not a notebook, unknown grade ids) is that student's 0, status invalid-notebook "
        "with the reason. Submissions graded before "
        "and unchanged since are skipped unless --force. Exit status 0 when every "
        "submission has its grade (a student's timeout, memory, dead kernel or invalid "
        "notebook is one: 0, flagged); 1 when any failed to grade (status error, the "
        "grader's fault: every one, or some, the others then recorded and scanned); 2 for "
        "bad input.",
    )
    grade.add_argument("assignment", help="assignment id, a folder of the course's source/")
    _add_root(grade)
    grade.add_argument(
        "--workers",
        type=_positive,
        default=1,
        help=f"worker processes of the local Dask cluster (cores: {os.cpu_count()})",
    )
    grade.add_argument(
        "--no-sandbox",
        action="store_true",
        help="grade with kernels outside bubblewrap (student code can then read the job's "
        "files and reach the network); without it, a machine where the sandbox cannot run "
        "is refused",
    )
    grade.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="grade on this existing Dask cluster instead of a local one (see docs/scaling.md)",
    )
    grade.add_argument(
        "--student",
        action="extend",
        nargs="+",
        metavar="S",
        help="grade (again) only these students (an id starting with '-': --student=-ID)",
    )
    grade.add_argument("--force", action="store_true", help="regrade submissions graded before")
    grade.add_argument(
        "--cell-timeout", type=_positive, metavar="S", help="seconds per cell (default: config)"
    )
    grade.add_argument(
        "--memory-limit",
        type=int,
        default=4096,
        metavar="MB",
        help="address-space limit per submission, kernel included (0: none; default 4096)",
    )
    grade.add_argument(
        "--submission-timeout",
        type=float,
        default=1800.0,
        metavar="S",
        help="wall-clock seconds per submission before it is killed (0: none; default 1800)",
    )
    grade.add_argument(
        "--verdicts",
        choices=("trusted", "kernel"),
        default="trusted",
        help="where test cells run: a second, trusted kernel that reaches the student's "
        "objects only through a narrow channel, so the student's code cannot change a "
        "verdict (default), or the student's own kernel (nbgrader's way)",
    )
    grade.add_argument(
        "--zip", type=Path, metavar="FILE", help="first collect submissions from this zip"
    )
    grade.add_argument(
        "--zero-flagged",
        action="store_true",
        help="set flagged exercises' tests to 0, as c.CourseIntegrity.zero_flagged_exercises",
    )
    grade.set_defaults(run=_autograde)


def _add_feedback_command(commands) -> None:
    """The feedback command."""
    feedback = commands.add_parser(
        "feedback", help="generate feedback HTML with nbgrader generate_feedback"
    )
    feedback.add_argument("assignment", help="assignment id")
    _add_root(feedback)
    feedback.add_argument(
        "--student",
        metavar="S",
        help="only this student (default: all; an id starting with '-': --student=-ID)",
    )
    feedback.set_defaults(run=_feedback)


def _add_export_command(commands) -> None:
    """The export command."""
    export = commands.add_parser(
        "export",
        help="export the gradebook with nbgrader export, as CSV safe to open in a spreadsheet "
        "(nbgrader's columns, or Canvas's or Moodle's gradebook import)",
    )
    _add_root(export)
    export.add_argument(
        "--to", type=Path, metavar="CSV", help="default: ROOT/grades.csv (grades-FORMAT.csv)"
    )
    export.add_argument(
        "--format",
        choices=("csv", "canvas", "moodle"),
        default="csv",
        help="csv: nbgrader's columns (default); canvas, moodle: their import, one row per "
        "student through --roster",
    )
    export.add_argument(
        "--roster",
        type=Path,
        metavar="CSV",
        help="nbgrader id -> LMS ids (columns student, name, lms_id, sis_user_id, sis_login_id, "
        "section, email); default: ROOT/roster.csv",
    )
    export.set_defaults(run=_export)


def _add_report_command(commands) -> None:
    """The report command."""
    report = commands.add_parser("report", help="write the grading report of assignments")
    report.add_argument("assignment", nargs="+", help="assignment ids")
    _add_root(report)
    report.add_argument("--out", type=Path, metavar="DIR", help="default: ROOT/report")
    report.set_defaults(run=_report)


def _add_redteam_command(commands) -> None:
    """The redteam command."""
    redteam = commands.add_parser(
        "redteam", help="grade cheating and honest submissions together; print what each got"
    )
    redteam.add_argument("--workspace", type=Path, default=Path("build/redteam"))
    redteam.set_defaults(run=_redteam)


def _add_mutate_command(commands) -> None:
    """The mutate command: mutation testing of the graders."""
    mutate = commands.add_parser(
        "mutate",
        help="mutation testing of the graders: grade mutants of every exercise's solution",
        description="Mutate each exercise's reference solution (one classic mistake per "
        "mutant), grade every mutant with the real nbgrader through autograde, and report "
        "per exercise how many lost points (killed) and which kept full marks (survived, "
        "with their diffs). Outcomes are cached per mutant: a rerun grades only new ones.",
    )
    mutate.add_argument("assignment", nargs="*", help="assignment ids (default: all)")
    mutate.add_argument(
        "--sample", type=_positive, metavar="N", help="grade a seeded sample of N per notebook"
    )
    mutate.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    mutate.add_argument("--workers", type=_positive, default=1, help="grading workers")
    mutate.add_argument(
        "--cell-timeout", type=_positive, default=60, metavar="S", help="seconds per cell"
    )
    mutate.add_argument(
        "--batch", type=_positive, default=24, help="mutants graded per autograde run"
    )
    mutate.add_argument(
        "--mutant",
        action="append",
        metavar="ID",
        help="grade only this mutant (generated or by hand; repeatable); the score table stays",
    )
    mutate.add_argument("--out", type=Path, default=Path("build/mutation"))
    mutate.add_argument(
        "--no-readme",
        action="store_true",
        help="do not rewrite the score table in docs/grading-design.md",
    )
    mutate.set_defaults(run=_mutate)


def _add_similarity_command(commands) -> None:
    from autograder.grading.pipeline.similarity.settings import Settings

    defaults = Settings()
    similarity = commands.add_parser(
        "similarity",
        help="find copied code: each submission against the cohort, the reference and archives",
        description="Compare what each student wrote in the solution cells (not the given "
        "code) with every other student, the reference solution and earlier cohorts' "
        "submissions, with copydetect's winnowing over normalised tokens (renamed "
        "identifiers, comments and blank lines change nothing). Writes "
        "ROOT/similarity/ASSIGNMENT/pairs.json and report.html. Evidence for a person: no "
        "grade is changed.",
    )
    similarity.add_argument("assignment", help="assignment id")
    _add_root(similarity)
    similarity.add_argument(
        "--against",
        action="append",
        type=Path,
        metavar="DIR",
        help="an earlier cohort's submissions, laid out as submitted/ (repeatable)",
    )
    similarity.add_argument(
        "--threshold",
        type=_fraction,
        default=defaults.threshold,
        help=f"flag a pair whose score (share of one side's code found in the other) "
        f"reaches this (default {defaults.threshold})",
    )
    similarity.add_argument(
        "--min-overlap",
        type=int,
        default=defaults.min_overlap,
        metavar="N",
        help="...and that shares at least N characters of normalised code, so agreeing "
        f"on a two-line answer is never flagged (default {defaults.min_overlap})",
    )
    similarity.add_argument(
        "--structure-threshold",
        type=float,
        default=defaults.structure_threshold,
        metavar="S",
        help="also flag two students whose expression shapes (every name the same; order "
        f"and loop or comprehension do not matter) score S or more (default "
        f"{defaults.structure_threshold})",
    )
    similarity.add_argument(
        "--min-shapes",
        type=int,
        default=defaults.min_shapes,
        metavar="N",
        help=f"...over at least N shared expression shapes (default {defaults.min_shapes})",
    )
    similarity.add_argument(
        "--top",
        type=_positive,
        default=defaults.top,
        metavar="N",
        help=f"pairs shown side by side in report.html (default {defaults.top})",
    )
    similarity.add_argument(
        "--detail",
        type=_positive,
        default=defaults.detail,
        metavar="N",
        help="locate the shared code of the N highest pairs (copydetect's exact score); the "
        f"others keep a quick fingerprint count and are never flagged (default {defaults.detail})",
    )
    similarity.add_argument(
        "--noise",
        type=_positive,
        default=defaults.noise,
        metavar="K",
        help=f"shortest match that counts, in normalised characters (default {defaults.noise})",
    )
    similarity.add_argument(
        "--guarantee",
        type=_positive,
        default=defaults.guarantee,
        metavar="G",
        help=f"a match this long is always found (default {defaults.guarantee})",
    )
    similarity.set_defaults(run=_similarity)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograd-course", description="Release and grade the autograd course with nbgrader."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    release = commands.add_parser(
        "release",
        help="regenerate course/ (and course-es/) from solutions/ with nbgrader "
        "generate_assignment",
    )
    release.add_argument("assignment", nargs="*", help="assignment ids (default: all)")
    release.add_argument("--workspace", type=Path, default=Path("build/release"))
    release.add_argument(
        "--edition",
        default="all",
        help="en, es or all (default): the Spanish edition's solutions-es/ is regenerated "
        "from solutions/ and i18n/es/ first",
    )
    release.set_defaults(run=_release)

    sync = commands.add_parser(
        "sync-engine", help="copy the reference engine's chunks into the solution notebooks"
    )
    sync.add_argument("--check", action="store_true", help="only report drift; exit 1 if any")
    sync.set_defaults(run=_sync_engine)

    translations = commands.add_parser(
        "translations",
        help="update the translation catalogs (i18n/) from solutions/ and the checks' messages",
    )
    translations.add_argument(
        "--check", action="store_true", help="exit 1 when an entry is untranslated or fuzzy"
    )
    translations.set_defaults(run=_translations)

    kit = commands.add_parser(
        "student-kit",
        help="write the student kit: the kernel-side wheel (no reference engine, no grading "
        "tools) and the release notebooks, one folder each",
        description="Write the student kit of a point in the term into an empty folder: the "
        "notebooks whose releases show no open assignment's answers (term.toml gives the due "
        "dates). Examples: `autograd-course student-kit --out build/kit`; "
        "`autograd-course student-kit --through 01-worked-example --edition es --out kit-es`.",
    )
    kit.add_argument("--edition", choices=("en", "es"), default="en", help="default: en")
    kit.add_argument("--out", type=Path, required=True, help="a new or empty folder for the kit")
    kit.add_argument(
        "--through",
        metavar="ASSIGNMENT",
        help="the kit up to ASSIGNMENT; assignments before it without a due date are taken as "
        "closed, and one still open by its dates refuses the kit",
    )
    kit.add_argument(
        "--at",
        type=_aware_time,
        metavar="DATE",
        help="judge the term at DATE (ISO 8601 with an offset, e.g. 2027-02-09T12:00+01:00) "
        "instead of now",
    )
    kit.add_argument("--term", type=Path, default=TERM_FILE, help="the term file (term.toml)")
    kit.add_argument(
        "--self-study",
        action="store_true",
        help="every notebook at once, for someone learning alone: it HOLDS ANSWERS",
    )
    kit.set_defaults(run=_student_kit)

    extension = commands.add_parser(
        "extension",
        help="give a student more time on an assignment (nbgrader's gradebook); --hours 0 "
        "takes it back",
    )
    extension.add_argument("assignment")
    extension.add_argument("student")
    _add_root(extension)
    more = extension.add_mutually_exclusive_group(required=True)
    more.add_argument("--hours", type=float, help="hours past the due date")
    more.add_argument("--until", type=_aware_time, metavar="DATE", help="ISO 8601, with offset")
    extension.set_defaults(run=_extension)

    release_one = commands.add_parser(
        "release-assignment",
        help="nbgrader release_assignment, refused while the release shows an open "
        "assignment's answers (term.toml in the course root)",
    )
    release_one.add_argument("assignment")
    _add_root(release_one)
    release_one.add_argument(
        "--force", metavar="REASON", help="release anyway; the reason is logged"
    )
    release_one.set_defaults(run=_release_assignment)

    refused = commands.add_parser(
        "refused-hand-ins",
        help="list (or --remove) the hand-ins collect set aside: made by another account than "
        "their student's, or with an unreadable timestamp",
    )
    _add_root(refused)
    refused.add_argument("--remove", action="store_true", help="remove them")
    refused.set_defaults(run=_refused_hand_ins)

    reveals = commands.add_parser(
        "reveals",
        help="which assignments' answers each release shows (the share of their solution lines)",
    )
    reveals.add_argument("--edition", choices=("en", "es", "all"), default="all")
    reveals.add_argument("--json", action="store_true", help="print JSON instead of a table")
    reveals.set_defaults(run=_reveals)

    demo = commands.add_parser(
        "demo", help="release, autograde the demo cohort, export and print the grade table"
    )
    demo.add_argument("--workspace", type=Path, default=Path("build/demo"))
    demo.set_defaults(run=_demo)

    doctor = commands.add_parser(
        "doctor",
        help="what this machine can do for the course: one line per capability, then whether "
        "it can grade safely (exit 0) or what blocks grading (exit 1)",
    )
    doctor.add_argument("--brief", action="store_true", help="print the one-line verdict only")
    doctor.set_defaults(run=_doctor)

    hub = commands.add_parser(
        "hub",
        help="the course on a local JupyterHub (127.0.0.1) for a trial, until Ctrl-C",
        description="As root: make Unix accounts for an instructor and N students (with "
        "passwords printed for this run), nbgrader's exchange, the students' kit-only "
        "environment and the instructor's course root, then start JupyterHub on 127.0.0.1 "
        "with its proxy (configurable-http-proxy, installed from npm into build/hub-node). "
        "Ctrl-C stops every process and removes the accounts. For a local trial only.",
    )
    hub.add_argument("--students", type=_positive, default=2, help="default: 2")
    hub.add_argument("--port", type=_positive, default=8000, help="default: 8000")
    hub.add_argument("--password", help="one password for every account (default: a new one each)")
    hub.add_argument(
        "--lti",
        type=Path,
        metavar="TOML",
        help="sign in by LTI 1.3 launches from Canvas or Moodle instead of passwords: the "
        "platform's issuer, client_id, authorize_url, jwks_endpoint, and the LMS user ids of "
        "the instructor and the students (docs/instructors.md)",
    )
    hub.set_defaults(run=_hub)

    _add_grading_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``autograd-course``."""
    if argv is None:  # a command, not a call from Python
        # `kill -USR1 PID` prints every thread's stack to stderr: where a run that seems stuck
        # is waiting, without stopping it.
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    args = build_parser().parse_args(argv)
    # Names this run to a second command on the same course root (course_lock).
    args.command_line = shlex.join(["autograd-course", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.run(args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (NbgraderError, FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
