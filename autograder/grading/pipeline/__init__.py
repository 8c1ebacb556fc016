"""The grading pipeline: autograde (jobs, workers, the sandbox), trusted verdicts, the
integrity scan, nbgrader preprocessors and the feedback exporter, the report and the
similarity check. Reads the course model; never the authoring or assurance rooms."""
