"""The ``choreo`` command line: one module per verb."""
