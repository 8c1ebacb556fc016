"""The verdict channel and its proxies, over a real socket pair: the student's side serves
in a thread of this process, the trusted side uses the proxies as a test cell would."""

import pickle
import re
import socket
import struct
import threading
import time

import numpy as np
import pytest
import torch

from autograder.checks import check_array, check_flags, check_raises_like
from autograder.checks.exact import _fetchers, register_fetcher
from autograder.grading.course.repo_paths import REPO_ROOT
from autograder.grading.pipeline.verdicts.cells import free_names
from autograder.grading.pipeline.verdicts.proxy import (
    SESSION,
    Remote,
    RemoteClass,
    fetch,
    global_value,
    handle_callback,
)
from autograder.grading.pipeline.verdicts.trusted import end
from autograder.kernel import wire
from autograder.kernel.channel import Channel
from autograder.kernel.serve import ObjectTable, Server
from autograder.kernel.values import Codec

PACKAGE = REPO_ROOT / "autograder"
# Both sides of the channel: the trusted side, and the kernel wing's channel modules.
CHANNEL_FILES = (
    *sorted((PACKAGE / "grading" / "pipeline" / "verdicts").glob("*.py")),
    *(PACKAGE / "kernel" / f"{name}.py" for name in ("wire", "values", "channel", "serve")),
)

STUDENT_CODE = '''
import functools
import time
import numpy as np

class Tensor:
    def __init__(self, data, requires_grad=False):
        self.data = np.asarray(data, dtype=float)
        self.requires_grad = requires_grad
        self.grad = None
    def __mul__(self, other):
        other = other if isinstance(other, Tensor) else Tensor(other)
        return Tensor(self.data * other.data)
    __rmul__ = __mul__
    def is_inference(self):
        return False

class EngineError(ValueError):
    pass

def fail():
    raise EngineError("shapes (2,) and (3,) do not broadcast")

def apply(f, x):
    return f(x) + 1

def keep_name(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper

def slow():
    time.sleep(3)

class Liar(np.ndarray):
    """Wrong numbers that claim to equal anything and to be true."""
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __bool__(self):
        return True
    def __array__(self, dtype=None, copy=None):
        return np.zeros(self.shape)

class Flag:
    def __eq__(self, other):
        return True
    def __bool__(self):
        return True

liar = np.asarray([1.0, 2.0]).view(Liar)
flagged = Tensor([1.0])
flagged.requires_grad = Flag()
'''


@pytest.fixture
def student():
    """A student namespace served over a socket pair; the trusted side's session open."""
    namespace: dict = {}
    exec(STUDENT_CODE, namespace)
    trusted_end, student_end = socket.socketpair()
    server = Server(ObjectTable(), namespace)
    channel = Channel(student_end, server.handle, None)
    server.channel_ref[0] = channel
    namespace["_channel"] = channel  # for a cheat that calls the trusted side itself
    thread = threading.Thread(target=channel.serve, daemon=True)
    thread.start()
    SESSION.channel = Channel(trusted_end, handle_callback, 2.0)
    register_fetcher(Remote, fetch)
    yield namespace
    end()
    thread.join(5)
    _fetchers.pop(Remote, None)


def test_values_round_trip_by_value():
    codec = Codec()
    value = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::-1],
        "n": [1, 2.5, True, None, "x", b"raw", (np.int64(3), np.bool_(True))],
        "s": slice(1, None, 2),
        "g": np.random.default_rng(7),
    }
    segments: list[bytes] = []
    data = codec.encode(value, segments)
    back = codec.decode(data, segments)
    assert type(back["a"]) is np.ndarray and back["a"].dtype == np.float32
    assert np.array_equal(back["a"], value["a"])
    assert back["n"][:6] == [1, 2.5, True, None, "x", b"raw"]
    assert type(back["n"][6]) is tuple and type(back["n"][6][0]) is np.int64
    assert back["s"] == slice(1, None, 2)
    assert back["g"].standard_normal() == np.random.default_rng(7).standard_normal()


@pytest.mark.parametrize(
    "bad",
    [
        ["a", "|O8", [1], 0],  # object dtype: would hold arbitrary Python objects
        ["a", "<f8", [3], 0],  # 3 doubles announced, 8 bytes given
        ["a", "<f8", [-1], 0],
        ["i", 1.5],
        ["q", 1],
    ],
)
def test_bad_values_are_refused(bad):
    with pytest.raises(wire.ChannelBroken):
        Codec().decode(bad, [b"\0" * 8])


def test_frames_carry_only_exact_builtin_json():
    class Sly(str):
        pass

    left, right = socket.socketpair()
    with pytest.raises(wire.ChannelBroken, match="Sly"):
        wire.send(left, {"x": Sly("a")})
    wire.send(left, {"x": [1, 2.0, "s", None, True]}, [b"abc"])
    assert wire.receive(right, 1) == ({"x": [1, 2.0, "s", None, True]}, [b"abc"])
    left.sendall(struct.pack("!II", 5, 0) + b"[1,2]")  # a list, not an object
    with pytest.raises(wire.ChannelBroken):
        wire.receive(right, 1)


def test_pickle_is_never_used(student, monkeypatch):
    assert len(CHANNEL_FILES) >= 10  # the search below must have something to read
    sources = "\n".join(path.read_text() for path in CHANNEL_FILES)
    assert "import socket" in sources and not re.search(
        r"import (c?pickle|marshal|dill)|(pickle|marshal)\.load", sources
    )

    def refuse(*args, **kwargs):
        raise AssertionError("pickle used")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    tensor = global_value("Tensor")(np.ones((2, 2)))
    assert np.array_equal(tensor.data, np.ones((2, 2)))


def test_proxies_call_operate_and_check_classes(student):
    tensor_class = global_value("Tensor")
    assert isinstance(tensor_class, RemoteClass) and isinstance(tensor_class, type)
    x = tensor_class(np.array([1.0, 2.0]), requires_grad=True)
    y = 3.0 * x
    assert isinstance(y, tensor_class) and not isinstance(np.ones(2), tensor_class)
    assert type(y.data) is np.ndarray and np.array_equal(y.data, [3.0, 6.0])
    assert x.requires_grad is True and x.grad is None
    assert global_value("apply")(lambda v: v * 2, 4) == 9  # a callback, called back
    nested = global_value("apply")(lambda v: global_value("apply")(lambda w: w * 10, v), 1)
    assert nested == 12  # reentrant: student -> trusted -> student -> trusted
    assert global_value("keep_name")(lambda t: t).__name__ == "<lambda>"  # wraps copies it
    check_flags({"x": x}, {"x": torch.ones(2, requires_grad=True)}, flags=("requires_grad",))


def test_student_exceptions_are_rebuilt_under_their_builtin_base(student):
    error_class = global_value("EngineError")
    assert error_class.__name__ == "EngineError" and issubclass(error_class, ValueError)
    with pytest.raises(error_class, match="do not broadcast"):
        global_value("fail")()
    check_raises_like(
        lambda: global_value("fail")(),
        lambda: torch.tensor([[1.0], [1.0, 2.0]]),  # ValueError: ragged
        what="bad broadcast",
        quiet=True,
    )


def test_lying_objects_cannot_pass(student):
    liar = global_value("liar")
    assert isinstance(liar, Remote)  # an ndarray subclass is the student's, not by value
    # NumPy compares the numbers fetched by value; the object's own __eq__ is never asked.
    assert not (liar == np.array([5.0, 5.0])).any()
    assert (liar != np.array([5.0, 5.0])).all()
    with pytest.raises(AssertionError, match="wrong values"):
        check_array("liar", liar, np.array([5.0, 5.0]), quiet=True)
    flagged = global_value("flagged")
    with pytest.raises(AssertionError, match="not a bool"):
        check_flags({"x": flagged}, {"x": torch.ones(1, requires_grad=True)}, quiet=True)
    flag = flagged.requires_grad
    assert isinstance(flag, Remote)
    assert (flag == True) is False  # noqa: E712 (the lie under test)
    with pytest.raises(TypeError, match="truth"):
        bool(flag)


def test_torch_values_are_refused(student):
    with pytest.raises(TypeError, match="torch"):
        global_value("Tensor")(torch.ones(2))
    with pytest.raises(TypeError, match="torch"):
        global_value("apply")(torch.nn.Linear(1, 1), 1)


def test_a_hanging_student_side_breaks_the_channel(student):
    started = time.monotonic()
    with pytest.raises(wire.ChannelBroken, match="timeout"):
        global_value("slow")()
    assert time.monotonic() - started < 2.9
    with pytest.raises(wire.ChannelBroken, match="closed"):
        global_value("Tensor")


def test_free_names_are_what_a_cell_reads_from_outside():
    source = (
        "from autograder import hidden_rng\n"
        "g = hidden_rng()\n"
        "def f(x):\n    return x * Scalar(2.0)\n"
        "check_parity(lambda y: y + offset, {'y': g.uniform()}, tensor_type=Scalar)\n"
        "print(len([z for z in range(3)]))\n"
    )
    assert free_names(source) == ["Scalar", "check_parity", "offset", "x", "y", "z"]


def test_in_student_kernel_asks_the_side_that_holds_the_objects(student):
    from autograder.checks.student_side import in_student_kernel, register_evaluator
    from autograder.grading.pipeline.verdicts.proxy import evaluate

    register_evaluator(evaluate)
    try:
        tensor = global_value("Tensor")(np.ones(3))
        # The fetched copies share nothing; the student's arrays do.
        assert not np.shares_memory(tensor.data, tensor.data)
        assert in_student_kernel("np.shares_memory(t.data, t.data)", t=tensor) is True
        kept = in_student_kernel("types.SimpleNamespace(data=t.data)", t=tensor)
        assert in_student_kernel("k.data is t.data", k=kept, t=tensor) is True
    finally:
        from autograder.checks import student_side

        student_side.unregister_trusted_side()
    # Without an evaluator (JupyterLab), the expression runs right here.
    array = np.ones(2)
    assert in_student_kernel("np.shares_memory(a, a[:1])", a=array) is True


def test_a_test_can_subclass_a_student_class(student):
    tensor_class = global_value("Tensor")
    seen = {}

    class Doubled(tensor_class):
        def __mul__(self, other):
            seen["called"] = True
            return tensor_class(np.asarray(self.data) * 2 * other)

        @staticmethod
        def kind():
            return "doubled"

    x = Doubled(np.ones(2))
    assert isinstance(x, tensor_class) and isinstance(x, Doubled)
    assert np.array_equal((x * 3.0).data, [6.0, 6.0]) and seen == {"called": True}
    assert Doubled.kind() == "doubled"


def test_the_student_kernels_setup_cell_loses_only_its_autograd_lines():
    from autograder.grading.pipeline.verdicts.cells import without_autograd

    setup = (
        "import numpy as np\n"
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from jax import grad as jax_grad\n"
        "from autograder import check_parity\n"
        "torch.manual_seed(0)\n"
        "activation = F.relu\n"
        "rng = np.random.default_rng(0)\n"
    )
    kept = without_autograd(setup).splitlines()
    assert kept == ["import numpy as np", "", "", "", "from autograder import check_parity"] + [
        "",
        "",
        "rng = np.random.default_rng(0)",
    ]
    namespace: dict = {}
    exec("\n".join(kept), namespace)  # runs without any autograd library
    assert "torch" not in namespace and "F" not in namespace and "rng" in namespace


# The student's side can write anything on its end of the channel: frames that announce
# more than the grader may hold, replies that never end, replies that are not replies,
# and calls of its own into the trusted side.


def test_a_frame_announcing_more_than_the_channel_allows_is_refused_before_it_is_read():
    left, right = socket.socketpair()
    header = struct.pack("!II", 2, 2) + b"{}"
    left.sendall(header + struct.pack("!Q", 1) + b"x" + struct.pack("!Q", wire.MAX_FRAME))
    started = time.monotonic()
    with pytest.raises(wire.ChannelBroken, match="larger than the channel allows"):
        wire.receive(right, 5)
    assert time.monotonic() - started < 1  # refused at the announcement, nothing awaited
    with pytest.raises(ValueError, match="too large together"):
        wire.send(left, {}, [b"\0" * (wire.MAX_FRAME // 2), b"\0" * (wire.MAX_FRAME // 2)])


def test_a_reply_that_never_ends_is_cut_at_the_timeout():
    left, right = socket.socketpair()
    left.sendall(struct.pack("!II", 1000, 0) + b'{"kind": ')

    def trickle():  # a byte now and then: never idle long, never done
        for _ in range(40):
            time.sleep(0.1)
            try:
                left.send(b" ")
            except OSError:
                return

    threading.Thread(target=trickle, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(wire.ChannelBroken, match="timeout"):
        wire.receive(right, 1.0)
    assert time.monotonic() - started < 1.5
    left.close()


@pytest.mark.parametrize(
    ("forged", "reason"),
    [
        ({"kind": "verdict", "passed": True}, "unknown message kind"),
        ({"kind": "reply", "error": ["x", "AssertionError", "Exception"]}, "bad error reply"),
        ({"kind": "reply", "value": {"proxy": 10**9}}, "bad value on the channel"),
    ],
    ids=["not-a-reply", "bad-error", "unknown-object"],
)
def test_forged_replies_break_the_channel_or_are_refused(forged, reason):
    trusted_end, student_end = socket.socketpair()
    SESSION.channel = Channel(trusted_end, handle_callback, 2.0)
    try:

        def forge():
            wire.receive(student_end, 2)  # the call, answered with a forged frame
            wire.send(student_end, forged)

        threading.Thread(target=forge, daemon=True).start()
        with pytest.raises(wire.ChannelBroken, match=reason):
            global_value("answer")
    finally:
        SESSION.channel = None
        student_end.close()


def test_the_student_side_may_call_only_the_callbacks_it_was_given(student):
    # A student function that calls into the trusted side in the middle of a request, on
    # the connection its side holds: an operation of its choosing, then a callback id it
    # was never given. Each is answered with PermissionError; nothing runs here.
    def call_home(message):
        reply, _ = student["_channel"].request(message, [])
        return reply["error"][1]

    student["call_home"] = call_home
    evaluate = {"op": "evaluate", "expression": "open('/etc/passwd').read()"}
    unknown = {"op": "callback", "id": 10**6, "args": [], "kwargs": {}}
    for message in (evaluate, unknown):
        assert global_value("call_home")(message) == "PermissionError"
