"""The test-run timeline's arithmetic: seconds with N phases at once, files' spans."""

from timeline import by_file, concurrency, cpu_by_file


def test_concurrency_counts_the_seconds_with_each_number_running():
    phases = [
        {"worker": "gw0", "test": "a.py::t1", "start": 0.0, "stop": 10.0},
        {"worker": "gw1", "test": "b.py::t1", "start": 5.0, "stop": 8.0},
        {"worker": "gw0", "test": "a.py::t2", "start": 12.0, "stop": 13.0},
    ]
    assert concurrency(phases) == {0: 2.0, 1: 8.0, 2: 3.0}
    assert by_file(phases) == [("a.py", "gw0", 0.0, 13.0), ("b.py", "gw1", 5.0, 8.0)]


def test_cpu_by_file_charges_each_file_what_its_process_spent_meanwhile():
    phases = [
        {"worker": "gw0", "test": "a.py::t1", "start": 0.0, "stop": 10.0, "cpu": 4.0},
        {"worker": "gw1", "test": "b.py::t1", "start": 5.0, "stop": 8.0, "cpu": 2.5},
        {"worker": "gw0", "test": "a.py::t2", "start": 12.0, "stop": 13.0, "cpu": 5.0},
        {"worker": "gw0", "test": "c.py::t1", "start": 13.0, "stop": 20.0, "cpu": 9.0},
        {"worker": "gw1", "test": "d.py::t1", "start": 1.0, "stop": 2.0},  # no cpu: left out
    ]
    assert cpu_by_file(phases) == {"a.py": 5.0, "b.py": 2.5, "c.py": 4.0}
