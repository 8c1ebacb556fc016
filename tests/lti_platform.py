"""A test LMS for LTI 1.3 launches: its own RSA key, its JWKS served on loopback, and the
platform's side of a launch (the login initiation, then the signed id_token posted back),
as Canvas or Moodle would do it."""

import contextlib
import http.server
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlparse

import jwt
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER = "https://lms.example.edu"
CLIENT_ID = "autograd-course-test-tool"
DEPLOYMENT = "deployment-1"
KID = "test-platform-key"
LTI = "https://purl.imsglobal.org/spec/lti/claim/"


@dataclass
class Platform:
    """The platform's key and where its JWKS is served."""

    key: rsa.RSAPrivateKey
    jwks_url: str
    authorize_url: str

    def id_token(self, sub: str, nonce: str, target: str, **changes: object) -> str:
        """A signed LtiResourceLinkRequest id_token for the LMS user ``sub``."""
        now = int(time.time())
        claims = {
            "iss": ISSUER, "aud": CLIENT_ID, "sub": sub, "iat": now, "exp": now + 300,
            "nonce": nonce, "name": f"Student {sub}", "email": f"{sub}@lms.example.edu",
            LTI + "message_type": "LtiResourceLinkRequest", LTI + "version": "1.3.0",
            LTI + "deployment_id": DEPLOYMENT, LTI + "target_link_uri": target,
            LTI + "resource_link": {"id": "autograd-course"},
            LTI + "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
        }  # fmt: skip
        claims.update(changes)
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": KID})


class _Jwks(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args) -> None:  # quiet
        pass


@contextlib.contextmanager
def test_platform() -> Iterator[Platform]:
    """A platform whose JWKS is served on 127.0.0.1 meanwhile."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    handler = type("Jwks", (_Jwks,), {"body": json.dumps({"keys": [jwk | {"kid": KID,
                   "alg": "RS256", "use": "sig"}]}).encode()})  # fmt: skip
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        yield Platform(key, f"{base}/jwks", f"{base}/authorize")
    finally:
        server.shutdown()


def launch(platform: Platform, hub_url: str, sub: str, tamper: bool = False) -> requests.Response:
    """The browser's part of a launch by ``sub``: initiation at the hub, the hub's redirect to
    the platform (answered here with a signed id_token), the token posted to the hub. With
    ``tamper``, the token's payload names someone else after it was signed."""
    browser = requests.Session()
    target = f"{hub_url}/hub/home"
    started = browser.post(
        f"{hub_url}/hub/lti13/oauth_login",
        data={"iss": ISSUER, "login_hint": sub, "target_link_uri": target,
              "client_id": CLIENT_ID, "lti_message_hint": str(uuid.uuid4())},
        allow_redirects=False, timeout=30,
    )  # fmt: skip
    assert started.status_code == 302, started.text
    asked = parse_qs(urlparse(started.headers["Location"]).query)
    assert started.headers["Location"].startswith(platform.authorize_url)
    token = platform.id_token(sub, asked["nonce"][0], target)
    if tamper:
        header, payload, signature = token.split(".")
        claims = jwt.decode(token, options={"verify_signature": False})
        forged = jwt.utils.base64url_encode(json.dumps(claims | {"sub": "someone-else"}).encode())
        token = ".".join((header, forged.decode(), signature))
    return browser.post(
        asked["redirect_uri"][0], data={"id_token": token, "state": asked["state"][0]},
        allow_redirects=True, timeout=60,
    )  # fmt: skip
