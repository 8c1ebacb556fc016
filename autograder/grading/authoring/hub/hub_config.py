"""The JupyterHub configuration of a trial class: 127.0.0.1 only, PAM logins for the class's
Unix accounts (or LTI 1.3 launches onto them, ``lti.py``), each user's server started as
that user from their own environment.

Students' servers run the kit-only environment with a profile that keeps nbgrader's
Assignments tab and Validate and switches the formgrader, the course list and Create
Assignment off; the instructor's runs the full environment on the course root, formgrader on.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.grading.authoring.hub.lti import LtiPlatform

# The students' Jupyter profile (JUPYTER_CONFIG_PATH, read before the environment's own).
STUDENT_SERVER_EXTENSIONS = {
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.course_list": False,
    "nbgrader.server_extensions.assignment_list": True,
    "nbgrader.server_extensions.validate_assignment": True,
}
STUDENT_DISABLED_LAB_PLUGINS = {
    "@jupyter/nbgrader:formgrader": True,
    "@jupyter/nbgrader:create-assignment": True,
    "@jupyter/nbgrader:course-list": True,
    "@jupyterlab/apputils-extension:announcements": True,
}
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class UserServer:
    """How one user's single-user server starts: its environment and its folder."""

    environment: Path  # a venv
    root_dir: Path
    profile: Path | None = None  # a Jupyter config folder read first (students)
    library_path: str = ""  # LD_LIBRARY_PATH its python needs, if any

    def settings(self) -> dict:
        env = {
            "PATH": f"{self.environment / 'bin'}:{SYSTEM_PATH}",
            "JUPYTER_PREFER_ENV_PATH": "1",  # the environment's kernel, not one in the home
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        if self.library_path:
            env["LD_LIBRARY_PATH"] = self.library_path
        if self.profile is not None:
            env["JUPYTER_CONFIG_PATH"] = str(self.profile)
        python = str(self.environment / "bin" / "python")
        return {
            "cmd": [python, "-m", "jupyterhub.singleuser"],
            "root_dir": str(self.root_dir),
            "environment": env,
        }


def write_student_profile(folder: Path) -> Path:
    """The students' Jupyter profile folder: nbgrader's student tools only, no news prompt."""
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    server = {"ServerApp": {"jpserver_extensions": STUDENT_SERVER_EXTENSIONS}}
    (folder / "jupyter_server_config.json").write_text(json.dumps(server, indent=2) + "\n")
    page = {"disabledExtensions": STUDENT_DISABLED_LAB_PLUGINS}
    (folder / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=2) + "\n")
    return folder


@dataclass(frozen=True)
class HubSettings:
    """Where the hub listens and keeps its files, and who may log in to start which server."""

    state: Path  # root-only: the hub's database, cookie secret, logs
    port: int
    hub_port: int
    proxy_api_port: int
    proxy: Path
    users: dict[str, UserServer]
    lti: "LtiPlatform | None" = None  # sign-in by LTI 1.3 launches instead of passwords

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def write_hub_config(settings: HubSettings) -> Path:
    """jupyterhub_config.py (and the users' servers, as JSON) in the hub's state folder."""
    users = settings.state / "user_servers.json"
    users.write_text(
        json.dumps({name: server.settings() for name, server in settings.users.items()}, indent=2)
    )
    config = settings.state / "jupyterhub_config.py"
    config.write_text(
        f"""# Written by autograd-course hub for a local trial: 127.0.0.1 only.
from autograder.grading.authoring.hub.hub_config import start_each_user_from

c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {settings.port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {settings.hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{settings.proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{str(settings.proxy)!r}]
c.ConfigurableHTTPProxy.pid_file = {str(settings.state / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{settings.state / "jupyterhub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(settings.state / "cookie_secret")!r}
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every user's server
c.Authenticator.allowed_users = {set(settings.users)!r}
c.PAMAuthenticator.open_sessions = False
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.pre_spawn_hook = start_each_user_from({str(users)!r})
"""
        + "".join(line + "\n" for line in (settings.lti.config_lines() if settings.lti else []))
    )
    return config


def start_each_user_from(path: str):
    """A pre-spawn hook giving each user's server the command, folder and environment that
    ``path`` (written by write_hub_config) names for them."""
    servers = json.loads(Path(path).read_text())

    def apply(spawner) -> None:
        server = servers[spawner.user.name]
        spawner.cmd = server["cmd"]
        spawner.notebook_dir = server["root_dir"]
        spawner.environment.update(server["environment"])

    return apply
