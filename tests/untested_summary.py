"""A pytest plugin (loaded by the conftest): the run's closing lines say what was not
tested here for want of a tool (Chromium, PostgreSQL, ...), how many tests that skipped,
and the command that brings the tool, so a newcomer sees at a glance what a green run
did not cover."""

from autograder.grading.course.system_tools import untested_lines


def pytest_unconfigure(config):
    """After pytest's own summary line: one line per missing tool (nothing when none)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or hasattr(config, "workerinput"):  # an xdist worker reports nothing
        return
    reasons = []
    for report in reporter.stats.get("skipped", []):
        if isinstance(report.longrepr, tuple):  # (file, line, "Skipped: reason")
            reasons.append(report.longrepr[2].removeprefix("Skipped: "))
    for line in untested_lines(reasons):
        reporter.write_line(line)
