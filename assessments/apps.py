from django.apps import AppConfig


class AssessmentsConfig(AppConfig):
    name = "assessments"
    verbose_name = "Assessments"
    # Nothing is imported when the app is ready: job handlers are loaded when a job is first queued or run
    # (services.jobs), and the Celery app and its tasks when a job is first dispatched (services.job_queue) or by
    # the worker (touchstone.celery), so a command starts without the services and libraries it does not use.
