"""The common suite's checks of the registered ``spark`` executor, on the session's SparkContext.

``tests/testing/test_common_suite.py`` exempts ``spark`` so as not to start a second JVM;
here every executor check passes on the ``local[2,2]`` context of ``conftest.py``.
"""

from __future__ import annotations

from assay.plugins import get_plugin_system
from assay.testing.conformance import CHECKS_BY_KIND
from assay.testing.suite import assert_conforms, with_overrides


def test_the_spark_executor_conforms(sc):
    entry = with_overrides(get_plugin_system().registry("executor").get("spark"), context=sc)
    results = assert_conforms(entry)
    assert [r.check for r in results if r.status == "PASS"] == list(CHECKS_BY_KIND["executor"])
    assert not sc._jsc.sc().isStopped()  # the context given stays up for the other tests
