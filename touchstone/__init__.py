"""The project package. Its Celery app is touchstone.celery, which `celery -A touchstone` finds by that name; it is
not imported here, so that a process that never queues a job (most commands) does not load Celery."""
