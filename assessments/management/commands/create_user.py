"""Create an account, or update an existing one's role and password."""

import secrets

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.db import transaction

from accounts.models import HUMAN_ROLES, Role, User
from accounts.usernames import lookalike_of, username_problem
from assessments.formats.cofe import LANGUAGES
from assessments.management.base import BaseCommand


class Command(BaseCommand):
    help = (
        "Create a user with a role (assessor, organiser or admin). Without --password a random one is generated "
        "and printed once. For an existing user this updates the role, and the password only if --password or "
        "--new-password is given, so re-running to change a role never locks anyone out."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", choices=HUMAN_ROLES, required=True)
        parser.add_argument("--password", help="the password (default: generate one and print it)")
        parser.add_argument("--new-password", action="store_true", help="existing user: generate a new password")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--languages", metavar="CODES",
            help="the languages the person reads, ISO 639-1 codes such as de,fr,en: a classification campaign gives "
            "them only items in these (an empty string: none)",
        )

    @transaction.atomic
    def handle(
        self, *args, username: str, role: str, password: str | None, new_password: bool, email: str,
        languages: str | None, **options,
    ):
        existing = User.objects.select_for_update().filter(username=username).first()
        created = existing is None
        if existing is None:
            if problem := username_problem(username):
                raise CommandError(problem)
            if other := lookalike_of(username):
                raise CommandError(f"a user {other!r} exists already: names that differ only in letter case are refused")
        elif existing.role == Role.SOURCE:
            raise CommandError(
                f"{username} is an import source (the name imported qrels are kept under), not a person's account: "
                "choose another name"
            )
        user = User(username=username, email=email, role=role) if existing is None else existing
        generated = None
        if password is None and (created or new_password):
            generated = password = secrets.token_urlsafe(12)
        if password is not None:
            try:
                validate_password(password, user)
            except ValidationError as exc:
                raise CommandError(f"password refused: {' '.join(exc.messages)}") from None
            user.set_password(password)
        before = None if created else user.role
        user.role = role
        if email:
            user.email = email
        if languages is not None:
            codes = [code.strip() for code in languages.split(",") if code.strip()]
            if unknown := [code for code in codes if code not in LANGUAGES]:
                raise CommandError(f"unknown language code {', '.join(unknown)}: use ISO 639-1 codes ({', '.join(sorted(LANGUAGES))})")
            user.languages = list(dict.fromkeys(codes))
        user.save()

        if created:
            self.stdout.write(self.style.SUCCESS(f"created {username} ({role})"))
        else:
            change = f"role {before} → {role}" if before != role else f"role {role} (unchanged)"
            self.stdout.write(self.style.SUCCESS(f"updated {username}: {change}"))
            if password is None:
                self.stdout.write("password unchanged")
        if languages is not None:
            self.stdout.write(f"reads: {', '.join(user.languages) or 'no language given'}")
        if generated:
            self.stdout.write(f"password: {generated}")
        elif password is not None and not created:
            self.stdout.write("password changed")
