"""The test-run timeline's arithmetic: seconds with N phases at once, files' spans."""

from timeline import by_file, concurrency


def test_concurrency_counts_the_seconds_with_each_number_running():
    phases = [
        {"worker": "gw0", "test": "a.py::t1", "start": 0.0, "stop": 10.0},
        {"worker": "gw1", "test": "b.py::t1", "start": 5.0, "stop": 8.0},
        {"worker": "gw0", "test": "a.py::t2", "start": 12.0, "stop": 13.0},
    ]
    assert concurrency(phases) == {0: 2.0, 1: 8.0, 2: 3.0}
    assert by_file(phases) == [("a.py", "gw0", 0.0, 13.0), ("b.py", "gw1", 5.0, 8.0)]
