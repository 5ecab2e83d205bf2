"""How the API answers errors that are not the client's: JSON with a status a client can act on."""

from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.views import exception_handler as drf_exception_handler

from assessments.services.job_queue import JobNotQueued


class ServiceUnavailable(APIException):
    """503; DRF's handler turns `wait` into the Retry-After header, as it does for throttled requests."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "service_unavailable"

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.wait = retry_after


def exception_handler(exc, context):
    """DRF's handler, after translating service errors that mean "try again later" into a 503."""
    if isinstance(exc, JobNotQueued):
        exc = ServiceUnavailable(str(exc), retry_after=exc.retry_after)
    return drf_exception_handler(exc, context)
