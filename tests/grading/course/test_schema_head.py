"""A new gradebook gets nbgrader's schema version without running the ``alembic`` program."""

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from nbgrader.api import Gradebook
from nbgrader.dbutil import _temp_alembic_ini

from autograder.grading.course import nbgrader_program
from autograder.grading.course.schema_head import read_schema_head_in_process, schema_head


def test_the_head_is_what_alembic_heads_prints(tmp_path):
    alembic = Path(sys.executable).parent / "alembic"
    with _temp_alembic_ini(f"sqlite:///{tmp_path / 'any.db'}") as ini:
        printed = subprocess.run(
            [str(alembic), "-c", ini, "heads"], capture_output=True, text=True, check=True
        ).stdout
    assert printed.split()[0] == schema_head()


def test_a_new_gradebook_needs_no_alembic_program(tmp_path, monkeypatch):
    read_schema_head_in_process()
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    db = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{db}") as book:
        book.add_student("ada")
    with sa.create_engine(f"sqlite:///{db}").connect() as connection:
        version = connection.execute(sa.text("select version_num from alembic_version")).all()
    assert version == [(schema_head(),)]


def migration(folder: Path, revision: str, down: str | None) -> None:
    (folder / f"{revision}_step.py").write_text(
        f'"""A step."""\nrevision = {revision!r}\ndown_revision = {down!r}\n'
    )


def test_the_head_is_the_revision_nothing_builds_on_and_two_heads_are_refused(tmp_path):
    chain = tmp_path / "chain"
    chain.mkdir()
    for revision, down in [("b2", "a1"), ("a1", None), ("c3", "b2")]:
        migration(chain, revision, down)
    assert schema_head(chain) == "c3"
    forked = tmp_path / "forked"
    forked.mkdir()
    for revision, down in [("a1", None), ("b2", "a1"), ("x9", "a1")]:
        migration(forked, revision, down)
    with pytest.raises(RuntimeError, match=r"2 heads, not one: \['b2', 'x9'\]"):
        schema_head(forked)


def test_the_nbgrader_command_run_from_here_needs_no_alembic_program(tmp_path):
    # An `alembic` that fails comes first on PATH: plain `python -m nbgrader` runs it for the
    # new gradebook and fails; the command the project runs (run_nbgrader) does not.
    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "alembic").write_text("#!/bin/sh\necho 'alembic was run' >&2\nexit 3\n")
    (programs / "alembic").chmod(0o755)
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    env = {"PATH": f"{programs}:/usr/bin:/bin", "HOME": str(tmp_path)}
    add = ["db", "student", "add", "ada"]

    def nbgrader(module: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", module, *add]
        return subprocess.run(command, cwd=course, env=env, capture_output=True, text=True)

    plain = nbgrader("nbgrader")
    assert plain.returncode != 0 and "alembic was run" in plain.stderr
    (course / "gradebook.db").unlink(missing_ok=True)
    ours = nbgrader(nbgrader_program.__name__)
    assert ours.returncode == 0, ours.stderr
    assert "alembic was run" not in ours.stderr
    with sa.create_engine(f"sqlite:///{course / 'gradebook.db'}").connect() as connection:
        version = connection.execute(sa.text("select version_num from alembic_version")).all()
    assert version == [(schema_head(),)]
