"""The pipeline engine: the worker that runs queued jobs and applies their results."""
