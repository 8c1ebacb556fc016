"""The one nbgrader config template: a base config loaded, then the course moved."""

import nbformat
import pytest
from nbclient import NotebookClient
from traitlets.config.loader import PyFileConfigLoader

from autograder.grading.course.course_root import load_course
from autograder.grading.course.nbgrader_workspace import (
    copy_workspace,
    course_config,
    kernel_environment,
)


def load(path):
    return PyFileConfigLoader(path.name, str(path.parent)).load_config()


def test_the_config_loads_its_base_and_moves_the_course(tmp_path):
    base = tmp_path / "base_config.py"
    base.write_text('c = get_config()\nc.CourseDirectory.course_id = "autograd"\n')
    moved = tmp_path / "job" / "nbgrader_config.py"
    moved.parent.mkdir()
    moved.write_text(course_config(base, moved.parent, "sqlite:///g.db", submitted_directory="in"))
    config = load(moved).CourseDirectory
    assert config.course_id == "autograd"  # from the base
    assert config.root == str(moved.parent)
    assert config.submitted_directory == "in"
    assert config.db_url == "sqlite:///g.db"


def test_a_copied_workspace_points_at_the_copy(tmp_path):
    template = tmp_path / "template"
    (template / "source").mkdir(parents=True)
    (template / "nbgrader_config.py").write_text("stale")
    root = copy_workspace(template, tmp_path / "copy")
    course = load_course(root)
    assert course.root == root.resolve()
    assert course.db_url == f"sqlite:///{root.resolve() / 'gradebook.db'}"
    assert (course.source, course.release) == (root / "source", root / "release")


def test_grading_kernels_get_no_forced_matplotlib_backend(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    assert "MPLBACKEND" not in kernel_environment()


@pytest.mark.slow
def test_a_grading_kernel_records_a_figure_as_an_image(monkeypatch):
    # A shell's Agg would make plt.show() record nothing; the kernels nbgrader and nbval
    # start draw inline instead, headless, as image/png outputs.
    monkeypatch.setenv("MPLBACKEND", "Agg")
    source = "import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\nplt.show()\n"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    client = NotebookClient(notebook, timeout=120, kernel_name="python3")
    client.execute(env=kernel_environment())
    outputs = notebook.cells[0].outputs
    assert [o.output_type for o in outputs] == ["display_data"], outputs
    assert outputs[0].data["image/png"]
