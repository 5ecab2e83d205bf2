import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "touchstone.settings")
application = get_wsgi_application()

# What a web process loads before its first request (Django, every view through the URL patterns) lives as long as
# the process. Frozen out of the garbage collector, it is never walked again: collections look only at what
# requests create (a full one walked some 140,000 objects in each worker, a few times a minute at 200 assessors).
get_resolver().url_patterns  # noqa: B018  (imports the views now rather than on the first request)
gc.freeze()
