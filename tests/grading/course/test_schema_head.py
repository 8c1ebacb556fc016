"""A new gradebook gets nbgrader's schema version without running the ``alembic`` program."""

import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from nbgrader.api import Gradebook
from nbgrader.dbutil import _temp_alembic_ini

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
