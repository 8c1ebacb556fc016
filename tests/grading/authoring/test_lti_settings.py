"""Are the hub's LTI settings read as written, mapped onto the class, and refused in one line
when they cannot be used? (The launch itself: test_hub.py, on a real hub.)"""

import pytest

from autograder.grading.authoring.hub.lti import LtiError, read_lti

GOOD = (
    'issuer = "https://lms.example.edu"\nclient_id = "42"\n'
    'authorize_url = "https://lms.example.edu/auth"\n'
    'jwks_endpoint = "https://lms.example.edu/jwks"\n'
    'instructor = "t-1"\nstudents = ["s-1", "s-2"]\n'
)


def test_the_lms_users_are_mapped_onto_the_class_in_order(tmp_path):
    path = tmp_path / "lti.toml"
    path.write_text(GOOD)
    platform = read_lti(path, "ag-teach", ["ag-stu1", "ag-stu2", "ag-stu3"])
    assert platform.accounts == {"s-1": "ag-stu1", "s-2": "ag-stu2", "t-1": "ag-teach"}
    lines = "\n".join(platform.config_lines())
    assert "c.LTI13Authenticator.client_id = {'42'}" in lines
    assert 'c.LTI13Authenticator.username_key = "sub"' in lines


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace('client_id = "42"\n', ""), "missing ['client_id']"),
        (GOOD.replace('["s-1", "s-2"]', '["s-1", "s-2", "s-3", "s-4"]'), "4 students for 3"),
        ("issuer = [", "cannot be read as TOML"),
    ],
)
def test_settings_that_cannot_be_used_are_one_line(tmp_path, text, message):
    path = tmp_path / "lti.toml"
    path.write_text(text)
    with pytest.raises(LtiError) as raised:
        read_lti(path, "ag-teach", ["ag-stu1", "ag-stu2", "ag-stu3"])
    assert message in str(raised.value) and "\n" not in str(raised.value)
