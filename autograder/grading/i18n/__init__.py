"""Old import path of the translated editions' nbgrader pieces, for existing courses'
nbgrader_config.py (they live in ``autograder.grading.authoring.i18n``)."""
