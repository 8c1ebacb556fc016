"""What comes in before grading: an LMS zip collected and vetted, the hand-in times read, and
the submitted files nbgrader could not grade found before any job is sent."""
