"""A deterministic, bounded hypothesis profile for the normal test run
(`bench/fuzz.py` runs the same properties for longer, with fresh randomness)."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "gradguard-ci",
    max_examples=60,
    deadline=None,  # time is bounded per line in CPU seconds instead (properties.py)
    derandomize=True,  # the same examples on every run and machine
    database=None,  # no .hypothesis/ directory: nothing carried between runs
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("gradguard-ci")


# The CLI tests' fixtures: run the real `python -m gradguard` in tmp_path, write files there.
from cli.conftest import gradguard, write  # noqa: E402,F401
