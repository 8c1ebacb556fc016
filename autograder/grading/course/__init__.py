"""The course model: a course's folders and gradebook (``course_root``), this repository's
paths, scores, JSON records, the course lock and the scratch nbgrader workspace. Every other
room of the grading wing reads a course through here; this room imports none of them."""
