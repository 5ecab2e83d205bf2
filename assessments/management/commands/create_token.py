"""Make an API token for a user and print its key, once."""

from django.conf import settings

from accounts.models import User
from accounts.tokens import create_token
from assessments.management.base import BaseCommand
from assessments.management.progress import fail


class Command(BaseCommand):
    help = (
        "Make an API token for USERNAME and print its key (alone on standard output, so TOKEN=$(... create_token "
        "olivia) keeps it). Only a digest is stored: the key cannot be shown again. It works until it expires "
        f"(--days, default {settings.API_TOKEN_DAYS}) or the user's password changes; --replace revokes the user's "
        "other tokens."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument("--days", type=int, help=f"how long it works (default {settings.API_TOKEN_DAYS}, API_TOKEN_DAYS)")
        parser.add_argument("--replace", action="store_true", help="revoke the user's other tokens")

    def handle(self, *args, username: str, days: int | None, replace: bool, **options) -> None:
        user = User.objects.filter(username=username).first()
        if user is None:
            fail(self, f"no user {username!r}")
        if user.is_source or not user.is_active:
            fail(self, f"{username} cannot sign in, so it gets no token")
        if days is not None and days < 1:
            fail(self, "--days must be 1 or more")
        token, key = create_token(user, days=days, replace=replace)
        self.stdout.write(key)
        self.stderr.write(f"token {token.prefix}… for {username}, works until {token.expires_at:%Y-%m-%d}; shown once, "
                          "kept only as a digest")
