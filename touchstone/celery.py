"""The Celery app. Tasks take ids and call services; their progress is stored on Job rows."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "touchstone.settings")

app = Celery("touchstone")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
