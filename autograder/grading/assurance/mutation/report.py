"""The mutation report: per exercise and notebook counts, every survivor's diff.

Written as build/mutation/report.json and report.html, and as the score table between the
``mutation-score`` markers of docs/grading-design.md. Score = killed / (graded - equivalent),
where killed counts mutants that lost at least one point and those that timed out or crashed.
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.checks.templating import page_environment
from autograder.grading.assurance.mutation.by_hand import OPERATOR as BY_HAND
from autograder.grading.assurance.mutation.grading import Outcome
from autograder.grading.assurance.mutation.mutants import Mutant

TABLE_BEGIN = "<!-- mutation-score:begin (written by autograd-course mutate) -->"
TABLE_END = "<!-- mutation-score:end -->"


@dataclass
class Tally:
    """Counts of one exercise, one notebook or the whole course."""

    generated: int = 0  # mutants there are
    graded: int = 0  # of them, graded (all, or the sample)
    killed: int = 0  # lost at least one point (crashed ones included)
    crashed: int = 0  # timed out or crashed
    survived: int = 0  # full marks and not listed as equivalent
    equivalent: int = 0  # full marks and listed as equivalent

    def add(self, verdict: str) -> None:
        self.graded += 1
        if verdict in ("killed", "crashed"):
            self.killed += 1
            self.crashed += verdict == "crashed"
        elif verdict == "equivalent":
            self.equivalent += 1
        else:
            self.survived += 1

    @property
    def score(self) -> float | None:
        """Killed share of the non-equivalent graded mutants (None when none were graded)."""
        relevant = self.graded - self.equivalent
        return self.killed / relevant if relevant else None

    def score_text(self) -> str:
        return "n/a" if self.score is None else f"{100 * self.score:.1f}%"

    def merge(self, other: "Tally") -> None:
        for name in ("generated", "graded", "killed", "crashed", "survived", "equivalent"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class MutantRow:
    """One graded mutant in the report."""

    mutant: Mutant
    outcome: Outcome
    verdict: str  # killed, crashed, survived or equivalent
    reason: str = ""  # why it is equivalent

    def as_dict(self) -> dict:
        return {
            "id": self.mutant.id,
            "assignment": self.mutant.assignment,
            "cell": self.mutant.cell,
            "operator": self.mutant.operator,
            "what": self.mutant.what,
            "line": self.mutant.line,
            "verdict": self.verdict,
            "status": self.outcome.status,
            "score": self.outcome.score,
            "max_score": self.outcome.max_score,
            "lost": list(self.outcome.lost),
            "seconds": self.outcome.seconds,
            "equivalent_reason": self.reason,
            "diff": self.mutant.diff,
        }


@dataclass
class MutationReport:
    """Everything one mutation run found, with the totals per exercise and notebook."""

    rows: list[MutantRow]
    generated: dict[tuple[str, str], int]  # (assignment, cell) -> mutants there are
    wrongly_equivalent: list[str] = field(default_factory=list)  # listed, but killed
    sample: int | None = None
    seconds: float = 0.0

    def exercise_tallies(self) -> dict[tuple[str, str], Tally]:
        tallies = {key: Tally(generated=n) for key, n in self.generated.items()}
        for row in self.rows:
            tallies[(row.mutant.assignment, row.mutant.cell)].add(row.verdict)
        return tallies

    def notebook_tallies(self) -> dict[str, Tally]:
        notebooks: dict[str, Tally] = {}
        for (assignment, _), tally in self.exercise_tallies().items():
            notebooks.setdefault(assignment, Tally()).merge(tally)
        return notebooks

    def overall(self) -> Tally:
        total = Tally()
        for tally in self.notebook_tallies().values():
            total.merge(tally)
        return total

    def survivors(self) -> list[MutantRow]:
        return [row for row in self.rows if row.verdict == "survived"]


def classify(
    mutants: Iterable[Mutant], outcomes: dict[str, Outcome], equivalents: dict[str, str]
) -> tuple[list[MutantRow], list[str]]:
    """Each graded mutant's row; and the ids listed as equivalent that were killed."""
    rows, wrong = [], []
    for mutant in mutants:
        outcome = outcomes[mutant.id]
        verdict = outcome.verdict
        reason = equivalents.get(mutant.id, "")
        if verdict == "survived" and reason:
            verdict = "equivalent"
        elif reason:
            wrong.append(mutant.id)
        rows.append(MutantRow(mutant, outcome, verdict, reason))
    return rows, wrong


COLUMNS = ("generated", "graded", "killed", "crashed", "survived", "equivalent")


def tally_dict(tally: Tally) -> dict:
    return {**{name: getattr(tally, name) for name in COLUMNS}, "score": tally.score}


def write_json(report: MutationReport, path: Path) -> None:
    """report.json: the totals per notebook and exercise, and every graded mutant."""
    data = {
        "sample": report.sample,
        "seconds": round(report.seconds, 1),
        "overall": tally_dict(report.overall()),
        "notebooks": {a: tally_dict(t) for a, t in report.notebook_tallies().items()},
        "exercises": {f"{a}/{c}": tally_dict(t) for (a, c), t in report.exercise_tallies().items()},
        "listed_equivalent_but_killed": report.wrongly_equivalent,
        "mutants": [row.as_dict() for row in report.rows],
    }
    path.write_text(json.dumps(data, indent=1) + "\n")


def markdown_table(report: MutationReport) -> str:
    """The score table (docs/grading-design.md): one row per notebook, and the overall score."""
    header = "| notebook | " + " | ".join(COLUMNS) + " | score |"
    lines = [header, "|---" * (len(COLUMNS) + 2) + "|"]
    tallies = {**report.notebook_tallies(), "**overall**": report.overall()}
    for name, tally in tallies.items():
        counts = " | ".join(str(getattr(tally, column)) for column in COLUMNS)
        lines.append(f"| {name} | {counts} | {tally.score_text()} |")
    how = f"a seeded sample of {report.sample} per notebook" if report.sample else "every mutant"
    by_hand = sum(row.mutant.operator == BY_HAND for row in report.rows)
    if by_hand:
        how += f", with the {by_hand} hand-written ones (`by_hand.py`)"
    # With the cache a run's own time says little: the submissions' grading time, summed,
    # is what the table cost (one worker's time; N workers take about 1/N of it).
    summed = sum(row.outcome.seconds for row in report.rows) / 60
    lines.append("")
    lines.append(
        f"Graded: {how}; {summed:.0f} min of grading summed over the submissions (this run "
        f"{report.seconds / 60:.0f} min, the rest read from the cache). Score: killed / "
        "(graded - equivalent); killed includes mutants that timed out or crashed (`crashed`)."
    )
    return "\n".join(lines)


def rewrite_readme(readme: Path, table: str) -> bool:
    """Put ``table`` between the page's mutation-score markers; False if it has none."""
    text = readme.read_text()
    if TABLE_BEGIN not in text or TABLE_END not in text:
        return False
    before, rest = text.split(TABLE_BEGIN, 1)
    _, after = rest.split(TABLE_END, 1)
    readme.write_text(f"{before}{TABLE_BEGIN}\n{table}\n{TABLE_END}{after}")
    return True


def write_html(report: MutationReport, path: Path) -> None:
    """report.html: the totals, then every survivor with its diff, then the crashed ones."""
    sections = []
    for title, verdict in (
        ("Survivors", "survived"),
        ("Equivalent (hand-listed)", "equivalent"),
        ("Timed out or crashed (counted killed)", "crashed"),
    ):
        rows = [
            {
                "where": f"{row.mutant.assignment}/{row.mutant.cell} line {row.mutant.line}",
                "operator": row.mutant.operator,
                "what": row.mutant.what,
                "status": row.outcome.status if verdict == "crashed" else "",
                "id": row.mutant.id,
                "reason": row.reason,
                "diff": row.mutant.diff,
            }
            for row in report.rows
            if row.verdict == verdict
        ]
        sections.append((title, rows))
    page = page_environment("autograder.grading.assurance.mutation").get_template("report.html")
    path.write_text(
        page.render(
            overall=report.overall().score_text(),
            scope=f"sample of {report.sample} per notebook" if report.sample else "all mutants",
            minutes=f"{report.seconds / 60:.1f}",
            columns=COLUMNS,
            exercises=[
                (f"{assignment}/{cell}", [getattr(t, c) for c in COLUMNS], t.score_text())
                for (assignment, cell), t in report.exercise_tallies().items()
            ],
            sections=sections,
            wrongly_equivalent=report.wrongly_equivalent,
        )
    )
