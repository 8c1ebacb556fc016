"""Check results as HTML in a Jupyter kernel, unchanged plain text everywhere else."""

import re

import nbformat
import numpy as np
import pytest
import torch
from nbclient import NotebookClient

from autograder import check_array, check_flags, check_parity, check_raises_like
from autograder.checks import display, tracebacks
from autograder.checks.compare import compare_arrays
from autograder.engine.tensor import Tensor

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def kernel_display(monkeypatch):
    """Pretend to be in a Jupyter kernel; collect what would be displayed as (plain, html)."""
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(display, "in_kernel", lambda: True)
    monkeypatch.setattr(display, "_display", lambda plain, rich: shown.append((plain, rich)))
    return shown


def message_of(call) -> str:
    with pytest.raises(AssertionError) as caught:
        call()
    return str(caught.value)


def test_outside_a_kernel_a_match_prints_its_line_and_nothing_else(capsys):
    assert not display.in_kernel()
    check_array("ones", np.ones(3), np.ones(3))
    assert capsys.readouterr().out == "ones: matches torch (float64)\n"


def test_in_a_kernel_a_match_is_a_green_line_with_the_same_plain_text(kernel_display, capsys):
    check_array("ones", np.ones(3), np.ones(3))
    assert capsys.readouterr().out == ""
    [(plain, rich)] = kernel_display
    assert plain == "ones: matches torch (float64)"
    assert 'class="autograder-check autograder-pass"' in rich
    assert "#1a7f37" in rich and "ones: matches torch (float64)" in rich


def test_parity_flags_and_raises_use_the_green_line_too(kernel_display):
    check_parity(lambda a: a * a, {"a": np.arange(3.0)}, tensor_type=Tensor, devices=["cpu"])
    check_flags({"t": Tensor(np.ones(2))}, {"t": torch.ones(2)}, flags=("requires_grad",))
    check_raises_like(lambda: 1 / 1, lambda: 1 / 1, what="division")
    assert [plain for plain, _ in kernel_display] == [
        "forward and 1 gradient match torch on cpu (float64)",
        "flags requires_grad agree with torch for 't'",
        "'division' raises nothing in both",
    ]
    assert all("autograder-pass" in rich for _, rich in kernel_display)


def test_a_failure_shows_the_table_then_raises_the_same_message(kernel_display, monkeypatch):
    expected = np.array([1.0, 2.0, 3.0])
    got = expected * 2

    def call():
        compare_arrays("result", got, expected, device="cpu")

    in_kernel = message_of(call)
    [(plain, rich)] = kernel_display
    monkeypatch.setattr(display, "in_kernel", lambda: False)
    assert message_of(call) == in_kernel == plain  # the text nbgrader records is unchanged
    assert in_kernel.startswith("result does not match torch (cpu, float64): wrong values")
    assert 'class="autograder-check autograder-fail"' in rich
    for text in ("index", "expected (torch)", "got (yours)", "abs error", "(2,)", "6.0"):
        assert f">{text}<" in rich, text
    assert "3 of 3 elements differ" in rich and "max absolute error 3" in rich
    assert "is something added twice?" in rich
    assert len(rich) < 4000


def test_shape_and_dtype_failures_tabulate_expected_against_got(kernel_display):
    message_of(
        lambda: compare_arrays(
            "grad of input 'b'", np.ones((4, 3)), np.ones(3), device="cpu", gradient=True
        )
    )
    message_of(lambda: compare_arrays("x", np.ones(3), np.ones(3, np.float32), device="cpu"))
    shape_html, dtype_html = (rich for _, rich in kernel_display)
    assert ">(3,)<" in shape_html and ">(4, 3)<" in shape_html and "unbroadcast" in shape_html
    assert ">float32<" in dtype_html and ">float64<" in dtype_html


def test_flag_and_raise_failures_have_their_own_tables(kernel_display):
    engine = {"t": Tensor(np.ones(2), requires_grad=False)}
    message_of(lambda: check_flags(engine, {"t": torch.ones(2, requires_grad=True)}))
    message_of(
        lambda: check_raises_like(lambda: None, lambda: 1 / 0, what="divide by zero", quiet=True)
    )
    flags_html, raises_html = (rich for _, rich in kernel_display)
    assert ">tensor<" in flags_html and ">requires_grad<" in flags_html
    assert "a result requires grad when any input" in flags_html
    assert ">torch<" in raises_html and "ZeroDivisionError" in raises_html
    assert ">nothing<" in raises_html and "raise ZeroDivisionError" in raises_html


def test_errors_of_the_students_own_code_are_not_dressed_up(kernel_display):
    def broken(a):
        raise AssertionError("my own assert")

    assert message_of(lambda: check_parity(broken, {"a": np.ones(2)}, tensor_type=Tensor)) == (
        "my own assert"
    )
    assert kernel_display == []


def test_everything_is_escaped():
    view = display.FailureView(
        title="<script>alert(1)</script>",
        facts=("a & b",),
        columns=("<th>",),
        rows=(("'quoted' \"x\"",),),
        hints=("<b>bold</b>",),
    )
    rich = display.failure_html(view)
    assert "<script>" not in rich and "&lt;script&gt;" in rich
    assert "a &amp; b" in rich and "&lt;th&gt;" in rich and "&lt;b&gt;bold" in rich
    assert "&#39;quoted&#39; &#34;x&#34;" in rich
    assert "<script" not in display.pass_html("<script>") and "http" not in rich


def test_silenced_checks_neither_print_nor_display(kernel_display, capsys):
    with display.silenced():
        check_array("ones", np.ones(3), np.ones(3))
        message_of(lambda: check_array("ones", np.zeros(3), np.ones(3)))
    assert kernel_display == [] and capsys.readouterr().out == ""


def test_a_plain_message_becomes_a_view():
    view = display.view_from_message(
        "flags disagree\n  some fact\n  hint (is_leaf): leaves are made by users\n  hint: other"
    )
    assert view.title == "flags disagree"
    assert view.facts == ("some fact",)
    assert view.hints == ("(is_leaf): leaves are made by users", "other")


def run_in_kernel(source: str) -> list:
    """The outputs of ``source`` run as one cell in a real Jupyter kernel (errors kept)."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    NotebookClient(notebook, timeout=120, allow_errors=True, kernel_name="python3").execute()
    return notebook.cells[0].outputs


@pytest.mark.slow
def test_in_a_real_kernel_html_comes_first_and_the_error_is_recorded_as_text(tmp_path):
    source = (
        "import numpy as np\n"
        "from autograder import check_array\n"
        "check_array('ones', np.ones(2), np.ones(2))\n"
        "check_array('ones', np.zeros(2), np.ones(2))\n"
    )
    outputs = run_in_kernel(source)
    assert [o.output_type for o in outputs] == ["display_data", "display_data", "error"]
    assert outputs[0].data["text/plain"] == "ones: matches torch (float64)"
    assert "autograder-pass" in outputs[0].data["text/html"]
    assert "autograder-fail" in outputs[1].data["text/html"]
    error = outputs[2]
    assert error.ename == "AssertionError"
    assert error.evalue == outputs[1].data["text/plain"]
    assert error.evalue.startswith("ones does not match torch (cpu, float64): wrong values")
    traceback = ANSI.sub("", "\n".join(error.traceback))
    # The student's cell and the message, without the check library's own frames.
    assert "Cell In[1], line 4" in traceback and "check_array('ones', np.zeros(2)" in traceback
    assert "autograder" not in traceback.replace("from autograder import", "")
    assert traceback.endswith(error.evalue)


@pytest.mark.slow
def test_in_a_real_kernel_other_errors_keep_their_whole_traceback():
    source = (
        "import numpy as np\n"
        "from autograder import check_array, check_parity\n"
        "from autograder.engine.tensor import Tensor\n"
        "try:\n"
        "    check_array('ones', np.zeros(2), np.ones(2))\n"
        "except AssertionError:\n"
        "    pass\n"
        "def forward(a):\n"
        "    raise NotImplementedError('my forward')\n"
        "check_parity(forward, {'a': np.ones(2)}, tensor_type=Tensor, torch_fn=lambda a: a)\n"
    )
    error = run_in_kernel(source)[-1]
    assert error.ename == "NotImplementedError"
    traceback = ANSI.sub("", "\n".join(error.traceback))
    assert "raise NotImplementedError('my forward')" in traceback  # the student's frame stays


# --- the quiet traceback handler, without a kernel -------------------------------------


def failed_check() -> AssertionError:
    try:
        check_raises_like(lambda: None, lambda: 1 / 0, what="divide by zero", quiet=True)
    except AssertionError as error:
        return error
    raise RuntimeError("the planted check did not fail")


def frame_modules(tb) -> list[str]:
    modules = []
    while tb is not None:
        modules.append(tb.tb_frame.f_globals["__name__"])
        tb = tb.tb_next
    return modules


class FakeShell:
    """Records what IPython would be asked to show, and any handler installed."""

    kernel = object()

    def __init__(self, custom_exceptions=()):
        self.custom_exceptions = custom_exceptions
        self.CustomTB = None
        self.shown = []

    def showtraceback(self, exc_tuple, tb_offset=None):
        self.shown.append(exc_tuple)

    def set_custom_exc(self, exc_tuple, handler):
        self.custom_exceptions = exc_tuple
        self.CustomTB = handler


def test_a_failed_checks_traceback_loses_only_the_libraries_frames():
    error = failed_check()
    assert "autograder.checks.behaviour" in frame_modules(error.__traceback__)
    shell = FakeShell()
    tracebacks.show_quietly(shell, AssertionError, error, error.__traceback__)
    [(etype, value, tb)] = shell.shown
    assert value is error and frame_modules(tb) == [__name__]  # this test's frame only


def test_other_assertion_errors_are_shown_as_they_are():
    try:
        check_array(None, np.ones(1), np.ones(1))  # a TypeError inside the package...
    except TypeError as error:
        caught = error
    plain = AssertionError("a plain assert")
    plain.__traceback__ = caught.__traceback__  # ...whose frames must stay for a plain error
    shell = FakeShell()
    tracebacks.show_quietly(shell, AssertionError, plain, plain.__traceback__)
    modules = frame_modules(shell.shown[0][2])
    assert modules == [__name__, "autograder.checks.array"]


def test_the_handler_is_installed_once_and_never_over_someone_elses(monkeypatch):
    import IPython

    shell = FakeShell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    assert tracebacks.install_quiet_tracebacks() is True
    assert shell.custom_exceptions == (AssertionError, NotImplementedError)
    assert shell.CustomTB is tracebacks.show_quietly
    assert tracebacks.install_quiet_tracebacks() is True  # already ours

    def theirs(*args, **kwargs):
        return None

    other = FakeShell(custom_exceptions=(KeyError,))
    other.CustomTB = theirs
    monkeypatch.setattr(IPython, "get_ipython", lambda: other)
    assert tracebacks.install_quiet_tracebacks() is False
    assert other.CustomTB is theirs


def test_outside_a_kernel_nothing_is_installed(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert tracebacks.install_quiet_tracebacks() is False
