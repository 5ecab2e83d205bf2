"""Import sources: the accounts imported labels are kept under (qrels, a comments file's prior labels).

Imported labels never go under a person's name, where they would replace that person's own labels and be taken
for their work: each import names a source, an account with the source role that no one can sign in as.
"""

from __future__ import annotations

from django.contrib.auth.hashers import make_password

from accounts.models import Role, User
from accounts.usernames import lookalike_of, username_problem
from assessments.services.imports import ImportProblem


def check_source_name(name: str) -> None:
    """Refuse a name that is a person's account (ImportProblem): imported labels never go under a person's name,
    where they would replace that person's own labels and be taken for their work. A new name must be one a new
    account could take (accounts.usernames)."""
    existing = User.objects.filter(username=name).values_list("role", flat=True).first()
    if existing is None:
        problem = username_problem(name) or (
            f"a user {other!r} exists already: names that differ only in letter case are refused"
            if (other := lookalike_of(name)) else None
        )
        if problem:
            raise ImportProblem(f"assessor name {name!r}: {problem}")
    elif existing != Role.SOURCE:
        raise ImportProblem(
            f"assessor name {name!r} is a person's account ({existing}): imported labels are kept under an import source, "
            f"never in a person's name; choose a name no account has (e.g. {name}-qrels or the file's origin, such as touche2020)"
        )


def source_user(name: str) -> User:
    """The import source `name`, made if missing: inactive, with no usable password and the source role, so it owns
    the imported labels and is no one who can sign in. A person's account is refused (check_source_name)."""
    check_source_name(name)
    user, _ = User.objects.get_or_create(
        username=name, defaults={"role": Role.SOURCE, "is_active": False, "password": make_password(None)}
    )
    if user.role != Role.SOURCE:  # made a person's account in the meantime
        raise ImportProblem(f"assessor name {name!r} is a person's account ({user.role}): choose a name no account has")
    return user
