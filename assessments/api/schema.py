"""The OpenAPI schema's shared parts: who may call each operation, and the errors every operation can answer.

A script writer reads the schema to learn what comes back, so each operation lists every status it can answer,
with its JSON body. Most of those statuses follow from how the operation is built, not from what it does, so
`TouchstoneAutoSchema` derives them (settings: REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]) instead of each view
repeating them:

* 401 for every operation (every one needs a signed-in caller; the token authenticator comes first, so the answer
  carries ``WWW-Authenticate: Token``);
* 403 where the permission names a role (assessments.api.permissions), and for unsafe methods (a session client
  without its CSRF token is refused);
* 404 where the path names something (a campaign, an assignment, a job …) or the answer is paginated (a page past
  the last one);
* 400 where there is a body or a query (DRF's field errors, or ``{"detail": …}`` from a service; a NUL in a query
  parameter, touchstone.requests), and 415 where there is a body (an unsupported content type);
* 503 with Retry-After where an operation answers 202: a 202 means a job was queued, and queuing fails when the
  job queue is down (services.job_queue.JobNotQueued, assessments.api.errors).

An operation declares what only it knows (409 on a state conflict, 400 from a body-less DELETE) with
``extend_schema(responses=…)``, and may give its own examples for a derived status with ``OpenApiExample(…,
response_only=True, status_codes=["400"])``, listed before the generic ones; what it declares is kept as declared.
"""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent, build_examples_list
from drf_spectacular.utils import OpenApiExample
from rest_framework.permissions import AllowAny, IsAuthenticated

from assessments.services.job_queue import JobNotQueued
from touchstone.requests import NUL_REFUSED

from .serializers import ErrorSerializer

_SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
_ROLES: dict[type, str] = {IsAuthenticated: "any signed-in user (assessor, organiser or admin), about their own assignments only"}
# What a 404 says when the object a path parameter names is missing or not the caller's (assessments.access).
_NOT_FOUND = {
    "slug": ("Unknown campaign", "No such campaign"),
    "assignment_id": ("Unknown assignment", "No such assignment"),
    "entry_id": ("Document outside the assignment", "No such document in this assignment"),
    "job_id": ("Unknown job", "No such job"),
    "number": ("Unknown snapshot", "No such snapshot"),
    "older": ("Unknown snapshot", "No such snapshot"),
    "judge": ("Unknown machine judge", "No such machine judge"),
}

FIELD_ERRORS = ResolvedComponent(
    name="FieldErrors", type=ResolvedComponent.SCHEMA, object="FieldErrors",
    schema={
        "type": "object",
        "description": (
            "DRF's validation errors: each refused field of the body or query (non_field_errors: the request as a "
            "whole) with its messages; a list or object field nests its members' errors the same way, by index or key"
        ),
        "additionalProperties": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}]},
    },
)


def _example(name: str, value: dict, summary: str = "") -> OpenApiExample:
    return OpenApiExample(name, value=value, summary=summary, response_only=True)


# What an operation that aggregates labels answers to a rule or phase the caller may not use (access.check_rule).
RULE_REFUSED = OpenApiExample(
    "Training labels refused", response_only=True, status_codes=["403"],
    value={"detail": "training labels are shown to admins and the campaign's adjudicators until the training round "
                     "closes; the agreement page shows how the training goes"},
)


class TouchstoneAutoSchema(AutoSchema):
    """drf-spectacular's AutoSchema, with the caller's role in each description and every error answer listed
    (see the module docstring for the rules)."""

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        registry.register_on_missing(FIELD_ERRORS)
        # Here, not in get_description: extend_schema(description=…) replaces that method.
        if roles := self._roles():
            operation["description"] = f"**Who may call it:** {roles}.\n\n{operation.get('description', '')}".strip()
        responses = operation["responses"]
        for code, (description, examples, headers) in self._errors(operation).items():
            if code not in responses:
                responses[code] = self._error_response(code, description, examples, headers)
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def _permissions(self) -> list[type]:
        return list(getattr(self.view, "permission_classes", []))

    def _roles(self) -> str:
        return "; ".join(
            text for permission in self._permissions() if (text := getattr(permission, "roles", _ROLES.get(permission)))
        )

    def _errors(self, operation: dict) -> dict[str, tuple[str, list[OpenApiExample], dict]]:
        parameters = operation.get("parameters", [])
        path_names = [p["name"] for p in parameters if p["in"] == "path"]
        query_names = [p["name"] for p in parameters if p["in"] == "query"]
        has_body = "requestBody" in operation
        errors: dict[str, tuple[str, list[OpenApiExample], dict]] = {}
        if has_body or query_names:
            examples = []
            if query_names:
                examples.append(_example("NUL in a query parameter", {"detail": NUL_REFUSED}))
            if has_body and (required := self._first_required_field(operation["requestBody"])):
                examples.append(_example("A required field missing", {required: ["This field is required."]}))
            if has_body and "application/json" in operation["requestBody"]["content"]:
                examples.append(_example("Malformed JSON", {"detail": "JSON parse error - Expecting value: line 1 column 1 (char 0)"}))
            errors["400"] = ("The request is refused: its body or query is not valid, or the service says why not.", examples, {})
        if not any(permission is AllowAny for permission in self._permissions()):
            errors["401"] = (
                "No credentials, or a token that is unknown, expired or revoked (send `Authorization: Token KEY`).",
                [
                    _example("No credentials", {"detail": "Authentication credentials were not provided."}),
                    _example("Unknown token", {"detail": "Invalid token."}),
                ],
                {"WWW-Authenticate": {"schema": {"type": "string"}, "required": True,
                                      "description": "`Token`: the scheme to authenticate with"}},
            )
        role_limited = [permission for permission in self._permissions() if getattr(permission, "roles", None)]
        if role_limited or self.method not in _SAFE_METHODS:
            examples = []
            if role_limited:
                message = getattr(role_limited[0], "message", "You do not have permission to perform this action.")
                examples.append(_example("Role refused", {"detail": message}))
            if self.method not in _SAFE_METHODS:
                examples.append(_example("Session without CSRF token", {"detail": "CSRF Failed: CSRF token missing."},
                                         "a session (browser) client must send its CSRF token; token clients need none"))
            errors["403"] = ("Refused for this caller: see Who may call it.", examples, {})
        paginated = "page" in query_names
        if path_names or paginated:
            examples = [_example(label, {"detail": detail}) for label, detail in (_NOT_FOUND[n] for n in path_names if n in _NOT_FOUND)]
            if paginated:
                examples.append(_example("Past the last page", {"detail": "Invalid page."}))
            errors["404"] = (
                "Not found, or not the caller's to see (ids of other campaigns are not confirmed to exist).", examples, {},
            )
        if has_body:
            errors["415"] = (
                "The body's content type is not one the operation reads (see its request body).",
                [_example("Wrong content type", {"detail": 'Unsupported media type "text/plain" in request.'})], {},
            )
        if "202" in operation["responses"]:
            errors["503"] = (
                "The job queue is down: nothing was started or kept; try again after Retry-After seconds.",
                [_example("Job queue down", {"detail": str(JobNotQueued())})],
                {"Retry-After": {"schema": {"type": "integer"}, "required": True, "description": "seconds to wait"}},
            )
        return errors

    def _first_required_field(self, body: dict) -> str | None:
        for media in body["content"].values():
            ref = media["schema"].get("$ref", "")
            required = self.registry[(ref.rsplit("/", 1)[-1], ResolvedComponent.SCHEMA)].schema.get("required") if ref else None
            if required:
                return required[0]
        return None

    def _error_response(self, code: str, description: str, examples: list[OpenApiExample], headers: dict) -> dict:
        # An operation's own examples for this status come first, then the ones every such operation can meet.
        own = [
            example for example in self.get_examples()
            if example.response_only and code in {str(status) for status in example.status_codes or ()}
        ]
        error = self.resolve_serializer(ErrorSerializer, "response").ref
        schema = {"anyOf": [error, FIELD_ERRORS.ref]} if code == "400" else error
        content = {"schema": schema, "examples": build_examples_list([*own, *examples])}
        return {"description": description, "content": {"application/json": content}, **({"headers": headers} if headers else {})}
