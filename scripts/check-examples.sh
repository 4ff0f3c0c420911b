#!/usr/bin/env bash
# The main job: install GradGuard into .venv and check the bundled training scripts.
# Exit status is the checker's: 1 here, because examples/*_leaky.py have their mistakes on purpose.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt -e .
exec .venv/bin/gradguard check examples/
