"""Test and benchmark harness: the whole service started as local processes.

Lives outside the installed packages (``[tool.setuptools.packages.find]`` ships
``choreo``, ``api``, ``worker``, ``engines`` and ``exporters`` only), so a wheel
carries no test machinery. The service tests import it as ``tests.harness`` (the
repository root is on ``sys.path`` under pytest, as for ``tests.service.helpers``),
and the bench scripts do the same after putting the repository root first on
``sys.path``.
"""
