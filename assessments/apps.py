from django.apps import AppConfig


class AssessmentsConfig(AppConfig):
    name = "assessments"
    verbose_name = "Assessments"

    def ready(self) -> None:
        # Importing the service modules registers their job handlers (services.jobs.handler), and importing the
        # tasks registers the Celery tasks that services hand jobs to by name (services.job_queue), in every
        # process: the web's as well as the worker's.
        from assessments import tasks  # noqa: F401
        from assessments.services import (
            jobs,  # noqa: F401
            pooling,  # noqa: F401
        )
        from assessments.services.imports import (
            images,  # noqa: F401
            qrels,  # noqa: F401
            uploads,  # noqa: F401
        )
