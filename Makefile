# Two commands do all set-up: `make demo` (the main job) and `make test` (the test suite).
# Each creates .venv from requirements.lock when it is missing or out of date.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Kernels come from this environment, never from a python3 kernelspec in the user's home.
export JUPYTER_PREFER_ENV_PATH := 1
# No MPLBACKEND: kernels (lab, nbval, nbgrader) draw figures inline as image/png outputs,
# which needs no display; the grading report draws on matplotlib's Agg canvas itself.
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: demo doctor test lint bytecode release sync-engine kit lab work formgrader hub lock clean bench gpu-check

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=23.2"
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# The doctor's one-line verdict first (whether this machine can grade safely); the demo
# itself refuses unsafe grading, so it runs either way and says why it stops.
demo: $(STAMP) bytecode
	-$(BIN)/autograd-course doctor --brief
	$(BIN)/autograd-course demo

# What this machine can do for the course, one line per capability (exit 1: cannot grade).
doctor: $(STAMP)
	$(BIN)/autograd-course doctor

# Three test processes on two cores: many tests wait on kernels, servers and browsers, and a
# third process fills those waits (measured: 17 min 1 s against 18 min 15 s with two, both
# quiet; 21 min 28 s beside a full-time CPU hog, every test passing). Four were slower on
# 2026-12-07: 14 min 22 s against 13 min 16 s with three, the machine's CPU busy throughout
# (vmstat: under 1% idle), so a fourth process only adds contention.
#
# One BLAS/OpenMP thread per process: three test processes already share two cores, and
# OpenMP's threads spin while they wait (measured: the notebooks under nbval took 91.6
# CPU-seconds with torch's default threads, 65.5 with one; grading sets its kernels' own).
test: $(STAMP) lint bytecode
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
	$(BIN)/pytest -n 3 --dist loadfile --no-loadscope-reorder --durations=30 tests solutions solutions-es --nbval-lax --nbval-current-env

# The package's bytecode, written even where PYTHONDONTWRITEBYTECODE is set (our development
# machines set it): every kernel, trusted kernel and grading worker imports the package, and
# a sandboxed kernel cannot write it, so without this each one compiles it again (measured:
# 12 submissions of 01 and 05 graded in 60.2 and 52.5 CPU-seconds, 57.1 and 50.7 with it).
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q autograder

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

release: $(STAMP)
	$(BIN)/autograd-course release

sync-engine: $(STAMP)
	$(BIN)/autograd-course sync-engine

# The student kit of EDITION (en, es) in KIT_OUT: the kernel-side wheel and the release
# notebooks the term allows today (term.toml's due dates), or up to THROUGH; no release in it
# shows an open assignment's answers. The command refuses a folder that is not empty.
KIT_OUT ?= build/kit-$(EDITION)
THROUGH ?=
kit: $(STAMP)
	$(BIN)/autograd-course student-kit --edition $(EDITION) --out $(KIT_OUT) \
		$(if $(THROUGH),--through $(THROUGH))

# JupyterLab for students: copies the notebooks work/ lacks from course/ (never overwriting
# one), then opens work/ with the student profile student-lab/ (no nbgrader instructor tools,
# no news prompt), dropping a MPLBACKEND of the user's shell so figures show inline.
# EDITION=es: the Spanish edition (course-es/, copied into work-es/). More options: LAB_ARGS.
EDITION ?= en
lab: $(STAMP)
	env -u MPLBACKEND $(BIN)/python -m autograder.grading.authoring.student_lab --edition $(EDITION) $(LAB_ARGS)

# Only the copy step of `make lab`: new notebooks arrive, edited ones are kept and listed.
work: $(STAMP)
	$(BIN)/python -m autograder.grading.authoring.student_lab --edition $(EDITION) --copy-only

# JupyterLab for instructors at the repo root, on nbgrader's formgrader (all nbgrader tools).
formgrader: $(STAMP)
	env -u MPLBACKEND $(BIN)/jupyter lab --ServerApp.default_url=/formgrader $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# The course as a class on a local JupyterHub (127.0.0.1:8000), as root: an instructor and
# HUB_STUDENTS students with per-run passwords, nbgrader's exchange; Ctrl-C removes it all.
HUB_STUDENTS ?= 2
hub: $(STAMP)
	$(BIN)/autograd-course hub --students $(HUB_STUDENTS) $(HUB_ARGS)

lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | sed 's/+cpu$$//' > requirements.lock.new
	@echo "review requirements.lock.new, keep its header comment, then move it over requirements.lock"

clean:
	rm -rf build .pytest_cache .ruff_cache .hypothesis

# Benchmarks: tables on stdout, JSON in build/bench/. OpenBLAS's kernel is left to detect
# the CPU here (a pinned OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE would time a slower kernel).
bench: $(STAMP)
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/python -m benchmarks.run $(BENCH_ARGS)

# The check suite and every solution notebook with torch on CUDA (float32 with TF32 off,
# float64), with a per-device summary; without CUDA it says why and exits 0.
gpu-check: $(STAMP)
	$(BIN)/python -m autograder.grading.assurance.gpu_check
