"""What the API and the workers share: settings, storage, keys and records.

Nothing in this package imports an engine or a pipeline stage, so the API can
use all of it while knowing the workers' tasks only by name.
"""
