"""Does the student kit hold the checks and the release, and no answer in any form? Is bad
input one line, exit 2, with nothing written?"""

import io
import json
import marshal
import shutil
import tarfile
import zipfile

import pytest

from autograder.grading.authoring.i18n.edition import Edition, edition
from autograder.grading.authoring.kit_leaks import answer_lines, find_leaks
from autograder.grading.authoring.student_kit import KitError, request
from autograder.grading.cli import main
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    SOLUTIONS_DIR,
    assignments,
    notebook_path,
)

WHEEL = "autograd_course_kit-0.1.0-py3-none-any.whl"


@pytest.fixture(scope="module")
def secrets():
    return answer_lines()


@pytest.fixture(scope="module")
def kits(tmp_path_factory):
    """The self-study kit of every assignment, per edition (one build each: every
    assignment's kit is the same wheel and its own release folder, checked below against its
    own number)."""
    built = {}
    for language in ("en", "es"):
        out = tmp_path_factory.mktemp("kit") / language
        assert main(["student-kit", "--self-study", "--edition", language, "--out", str(out)]) == 0
        built[language] = out
    return built


def leak_places(leaks):
    return {(leak.where.split("!")[-1], leak.secret.line) for leak in leaks}


@pytest.mark.parametrize("language", ["en", "es"])
def test_the_kit_holds_the_wheel_and_one_release_folder_per_assignment(kits, language):
    files = sorted(p.relative_to(kits[language]).as_posix() for p in kits[language].rglob("*"))
    folders = [name for name in files if "/" not in name and not name.endswith(".whl")]
    assert folders == assignments()
    assert WHEEL in files
    for assignment in assignments():
        kit_notebook = kits[language] / assignment / f"{assignment}.ipynb"
        assert (
            kit_notebook.read_bytes()
            == notebook_path(edition(language).course, assignment).read_bytes()
        )


def test_the_wheel_holds_the_checks_wing_only_and_needs_no_grading_tools(kits):
    with zipfile.ZipFile(kits["en"] / WHEEL) as wheel:
        names = wheel.namelist()
        metadata = wheel.read("autograd_course_kit-0.1.0.dist-info/METADATA").decode()
    packages = {name.rsplit("/", 1)[0] for name in names if name.startswith("autograder")}
    assert packages == {
        "autograder",
        "autograder/checks",
        "autograder/checks/messages",
        "autograder/checks/templates",  # the checks' HTML fragments
    }
    assert not [name for name in names if name.endswith(".pyc")]
    requires = sorted(
        line.split()[1] for line in metadata.splitlines() if line.startswith("Requires-Dist")
    )
    assert requires == ["ipython>=8", "jinja2>=3.1", "matplotlib>=3.8", "numpy>=1.26", "torch>=2.6"]


@pytest.mark.parametrize("language", ["en", "es"])
def test_no_kit_carries_an_answer_line(kits, secrets, language):
    assert leak_places(find_leaks(kits[language], secrets)) == set()


def test_the_answer_lines_cover_both_editions_solutions_and_hidden_tests(secrets):
    origins = {secret.origin.split("/")[0] + " " + secret.origin.split()[-1] for secret in secrets}
    assert {"solutions solution", "solutions test"} <= origins
    assert {secret.answers for secret in secrets} == set(range(len(assignments())))
    # the Spanish solutions give answer lines of their own edition too (mostly the same code)
    spanish = answer_lines([edition("es")])
    assert len(spanish) > 500 and {
        s.origin.split("/")[0] for s in spanish if s.answers is not None
    } == {"solutions-es"}


# A line planted in the kit, each way an answer could travel: in the wheel's source, in a
# compiled module inside a tarball, in an earlier notebook's release.
def planted_kit(kits, tmp_path):
    kit = tmp_path / "kit"
    shutil.copytree(kits["en"], kit)
    return kit


def a_secret(secrets, answers, origin_end="solution"):
    return next(s for s in secrets if s.answers == answers and s.origin.endswith(origin_end))


def test_a_solution_line_planted_in_the_wheels_source_is_reported(kits, secrets, tmp_path):
    kit = planted_kit(kits, tmp_path)
    secret = a_secret(secrets, 1)
    wheel = kit / WHEEL
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("autograder/checks/helpers.py", f"def helper():\n    {secret.line}\n")
    leaks = find_leaks(kit, secrets)
    print("\n".join(str(leak) for leak in leaks))
    assert (f"{WHEEL}!autograder/checks/helpers.py", secret.line) in {
        (leak.where, leak.secret.line) for leak in leaks
    }


def test_a_hidden_test_line_compiled_into_a_tarball_is_reported(kits, secrets, tmp_path):
    kit = planted_kit(kits, tmp_path)
    secret = a_secret(secrets, 4, "hidden test")
    code = compile(f"x = {secret.line!r}\n", "planted.py", "exec")
    data = bytes(16) + marshal.dumps(code)  # a .pyc: 16-byte header, then the code object
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("cache/planted.cpython-311.pyc")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    (kit / "extras.tar.gz").write_bytes(buffer.getvalue())
    leaks = find_leaks(kit, secrets)
    assert ("extras.tar.gz!cache/planted.cpython-311.pyc", secret.line) in {
        (leak.where, leak.secret.line) for leak in leaks
    }


def test_a_later_notebooks_answer_in_an_earlier_release_is_reported(kits, secrets, tmp_path):
    kit = planted_kit(kits, tmp_path)
    later, earlier = a_secret(secrets, 3), a_secret(secrets, 1)
    path = kit / "02-how-it-works" / "02-how-it-works.ipynb"
    notebook = json.loads(path.read_text())
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    notebook["cells"].append({**cell, "source": [f"{later.line}\n", f"{earlier.line}\n"]})
    path.write_text(json.dumps(notebook))
    found = {
        leak.secret.line
        for leak in find_leaks(kit, secrets)
        if leak.where == path.relative_to(kit).as_posix()
    }
    assert found == {later.line}  # 03's answer leaks in 02; 01's is 02's given engine


def test_a_solution_notebook_in_the_kit_is_reported_many_times(kits, secrets, tmp_path):
    kit = planted_kit(kits, tmp_path)
    shutil.copy(notebook_path(SOLUTIONS_DIR, "05-common-pitfalls"), kit / "notes.ipynb")
    assert len([leak for leak in find_leaks(kit, secrets) if leak.where == "notes.ipynb"]) > 20


def run_cli(capsys, *args):
    code = main(["student-kit", *args])
    return code, capsys.readouterr().err.strip().splitlines()


def test_an_unknown_assignment_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys):
    code, err = run_cli(capsys, "--through", "09-nope", "--out", str(tmp_path / "kit"))
    assert (code, len(err)) == (2, 1) and "--through 09-nope: unknown assignment" in err[0]
    assert not (tmp_path / "kit").exists()


def test_a_non_empty_out_folder_is_one_line_exit_2_and_left_alone(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    code, err = run_cli(capsys, "--out", str(tmp_path))
    assert (code, len(err)) == (2, 1) and "not an empty folder" in err[0]
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_a_release_older_than_its_solutions_is_refused(tmp_path):
    root = tmp_path / "repo"
    for source, folder in ((SOLUTIONS_DIR, "solutions"), (COURSE_DIR, "course")):
        shutil.copytree(source / "00-recipe", root / folder / "00-recipe")
    solution = notebook_path(root / "solutions", "00-recipe")
    notebook = json.loads(solution.read_text())
    notebook["cells"][0]["source"] = "# a title changed after the release\n"
    solution.write_text(json.dumps(notebook))
    stale = Edition("en", root / "solutions", root / "course", None)
    with pytest.raises(KitError, match=r"00-recipe.ipynb is stale .* cell 1"):
        request(stale, tmp_path / "kit", term_file=tmp_path / "no-term.toml")
    assert not (tmp_path / "kit").exists()


def test_a_stale_release_is_one_line_exit_2_from_the_command(tmp_path, capsys, monkeypatch):
    from autograder.grading.authoring import student_kit

    monkeypatch.setattr(student_kit, "stale_cells", lambda solution, release: ["cell 3 (setup)"])
    code, err = run_cli(capsys, "--out", str(tmp_path / "kit"))
    assert (code, len(err)) == (2, 1) and "is stale" in err[0] and "cell 3 (setup)" in err[0]
    assert not (tmp_path / "kit").exists()
