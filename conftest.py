"""Project-wide pytest settings (every test path: tests/, plugins/*/tests, examples/).

Hypothesis: no per-example deadline. The suite runs on shared, noisy machines, where a
timing deadline fails a correct property at random; the properties check values, not speed
(speed is measured under bench/, never asserted in tests).
"""

from hypothesis import settings

settings.register_profile("assay", deadline=None, print_blob=True)
settings.load_profile("assay")
