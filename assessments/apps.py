from django.apps import AppConfig


class AssessmentsConfig(AppConfig):
    name = "assessments"
    verbose_name = "Assessments"

    def ready(self) -> None:
        # Importing the service modules registers their job handlers (services.jobs.handler).
        from assessments.services import (
            jobs,  # noqa: F401
            pooling,  # noqa: F401
            qrels_import,  # noqa: F401
        )
        from assessments.services.imports import uploads  # noqa: F401
