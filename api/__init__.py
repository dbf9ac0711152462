"""Choreo's HTTP API: FastAPI, versioned under ``/v1``; see :func:`api.main.create_app`."""
