"""Reading grades back: nbgrader's CSV export, and per-cell scores from the gradebook."""

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry


@dataclass(frozen=True)
class Score:
    """Points earned out of points possible."""

    score: float
    max_score: float

    def __str__(self) -> str:
        return f"{self.score:g}/{self.max_score:g}"

    @classmethod
    def total(cls, scores: "Iterable[Score]") -> "Score":
        """The sum of several scores: points earned out of points possible."""
        scores = list(scores)
        return cls(sum(s.score for s in scores), sum(s.max_score for s in scores))


def read_export(csv_path: Path) -> dict[tuple[str, str], Score]:
    """(student, assignment) -> score, from the CSV that ``nbgrader export`` wrote."""
    with csv_path.open(newline="") as handle:
        return {
            (row["student_id"], row["assignment"]): Score(
                float(row["score"]), float(row["max_score"])
            )
            for row in csv.DictReader(handle)
        }


def cell_scores(db_url: str, student: str, assignment: str) -> dict[str, Score]:
    """grade_id -> score of every graded cell in one student's autograded assignment."""
    with Gradebook(db_url) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry as error:
            raise KeyError(
                f"no submission of {assignment} by {student} in the gradebook"
            ) from error
        return {
            grade.name: Score(grade.score, grade.max_score)
            for notebook in submission.notebooks
            for grade in notebook.grades
        }
