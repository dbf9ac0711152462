"""Celery workers: ``celery -A worker.app worker -Q cpu`` and ``-Q gpu``."""
