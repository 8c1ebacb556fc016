"""Sign-in from the LMS: an LTI 1.3 launch from Canvas or Moodle logs a student in to the
class's account.

The launch is checked by ``jupyterhub-ltiauthenticator`` (the OIDC login initiation, the
platform's signed id_token checked against its JWKS, the state and nonce); this module adds
the class: the token's ``sub`` (the LMS's user id) is mapped to the class's Unix account
through ``accounts``, and anyone the class does not list is refused. The settings come from
a TOML file (``autograd-course hub --lti FILE``)::

    issuer = "https://canvas.instructure.com"
    client_id = "10000000000042"
    authorize_url = "https://canvas.example.edu/api/lti/authorize_redirect"
    jwks_endpoint = "https://canvas.example.edu/api/lti/security/jwks"
    instructor = "lms-id-of-the-instructor"
    students = ["lms-id-1", "lms-id-2"]      # onto the class's students, in order
"""

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ltiauthenticator.lti13.auth import LTI13Authenticator
from traitlets import Dict

SETTINGS = ("issuer", "client_id", "authorize_url", "jwks_endpoint")


class LtiError(ValueError):
    """LTI settings that cannot be used: one line naming the problem."""


@dataclass(frozen=True)
class LtiPlatform:
    """The LMS the hub takes launches from, and which of its users is which account."""

    issuer: str
    client_id: str
    authorize_url: str
    jwks_endpoint: str
    accounts: dict[str, str] = field(default_factory=dict)  # LMS user id -> account

    def config_lines(self) -> list[str]:
        """The jupyterhub_config.py lines that take launches from this platform."""
        return [
            f"c.JupyterHub.authenticator_class = {AUTHENTICATOR!r}",
            f"c.LTI13Authenticator.issuer = {self.issuer!r}",
            f"c.LTI13Authenticator.client_id = {{{self.client_id!r}}}",
            f"c.LTI13Authenticator.authorize_url = {self.authorize_url!r}",
            f"c.LTI13Authenticator.jwks_endpoint = {self.jwks_endpoint!r}",
            'c.LTI13Authenticator.username_key = "sub"',
            f"c.ClassLTI13Authenticator.accounts = {self.accounts!r}",
        ]


AUTHENTICATOR = "autograder.grading.authoring.hub.lti.ClassLTI13Authenticator"


def read_lti(path: Path, instructor: str, students: list[str]) -> LtiPlatform:
    """The platform of the settings file ``path``, its users mapped onto the class."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LtiError(f"{path}: cannot be read as TOML ({error})") from None
    missing = [key for key in SETTINGS if not str(raw.get(key, "")).strip()]
    if missing:
        raise LtiError(f"{path}: missing {missing}")
    lms_students = [str(each) for each in raw.get("students", [])]
    if len(lms_students) > len(students):
        raise LtiError(f"{path}: {len(lms_students)} students for {len(students)} accounts")
    accounts = dict(zip(lms_students, students, strict=False))
    if raw.get("instructor"):
        accounts[str(raw["instructor"])] = instructor
    return LtiPlatform(*(str(raw[key]) for key in SETTINGS), accounts)


class ClassLTI13Authenticator(LTI13Authenticator):
    """LTI 1.3 launches, each onto the class account of its LMS user; nobody else."""

    accounts = Dict(help="the LMS's user id (the id_token's sub) -> the class account").tag(
        config=True
    )

    async def authenticate(self, handler, data=None):  # noqa: ANN001, ANN201 (JupyterHub's)
        """The class account of the launch's user, or None (refused) for anyone else."""
        lms_id = (data or {}).get("sub", "")
        account = self.accounts.get(lms_id)
        if account is None:
            self.log.warning("LTI launch by %r, who is not in the class: refused", lms_id)
            return None
        return {"name": account, "auth_state": data}
