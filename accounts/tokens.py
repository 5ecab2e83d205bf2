"""API tokens kept as digests, with an expiry, revoked by a change of password (models.ApiToken).

A key is 40 random hex characters, as Django REST framework's own tokens, so scripts written for them keep their
header (`Authorization: Token KEY`). Only its SHA-256 digest is stored: a lookup hashes the key sent, which costs
a microsecond; a slow password hash is not needed for a random key of 160 bits.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework import authentication, exceptions

from accounts.models import ApiToken, User

LAST_USE_PRECISION = timedelta(hours=1)  # a token's last use is written at most this often: not one write a request


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def password_fingerprint(user: User) -> str:
    return hashlib.sha256(user.password.encode()).hexdigest()


def create_token(user: User, *, days: int | None = None, replace: bool = False) -> tuple[ApiToken, str]:
    """A new token for `user` and its key, which is not stored and cannot be shown again. `replace` revokes the
    user's other tokens."""
    if replace:
        user.api_tokens.all().delete()
    key = secrets.token_hex(20)
    token = ApiToken.objects.create(
        user=user, digest=digest(key), prefix=key[:8], password_fingerprint=password_fingerprint(user),
        expires_at=timezone.now() + timedelta(days=days or settings.API_TOKEN_DAYS),
    )
    return token, key


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's `Token KEY` header, checked against the digests; an expired or revoked key is told why (401)."""

    def authenticate_credentials(self, key: str):
        token = ApiToken.objects.select_related("user").filter(digest=digest(key)).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        now = timezone.now()
        if token.expires_at <= now:
            raise exceptions.AuthenticationFailed(
                f"This token expired on {token.expires_at:%Y-%m-%d}: make a new one with `create_token {token.user.username}`."
            )
        if token.password_fingerprint != password_fingerprint(token.user):
            raise exceptions.AuthenticationFailed("This token was revoked when its user's password changed: make a new one.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if token.last_used_at is None or now - token.last_used_at > LAST_USE_PRECISION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token
