# The two commands a new user needs (README): `make demo` and `make test`. Both set up what they need.
.PHONY: setup demo test lint clean

setup:
	bash scripts/setup_env.sh

demo: setup
	bash scripts/demo.sh

test:
	bash scripts/run_tests.sh

lint: setup
	. scripts/env.sh && ruff check .

clean:
	rm -rf build install log log-colcon.txt build-jazzy install-jazzy log-jazzy log-colcon-jazzy.txt out
