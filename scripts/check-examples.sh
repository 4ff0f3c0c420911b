#!/usr/bin/env bash
# The main job: install GradGuard into .venv and check the bundled training scripts.
# Exit status is the checker's: 1 here, because examples/*_leaky.py have their mistakes on purpose.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -c constraints.txt -e .
status=0
.venv/bin/gradguard check examples/ || status=$?
if [ "$status" -eq 1 ]; then
  echo "check-examples: exit status 1, as intended: the findings are the mistakes planted in examples/train_leaky.py and examples/rnn_leaky.py (examples/*_fixed.py have none)" >&2
fi
exit "$status"
