"""The instructor's tools: command line, autograde, integrity scan, report, demo cohort and
red team, release and engine sync, nbgrader preprocessors. Never imported by a kernel."""
