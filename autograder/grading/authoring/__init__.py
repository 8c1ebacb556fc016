"""Authoring and handing out: the release, the engine sync, the translated editions, the
student lab and the student kit (its wheel and its leak check)."""
