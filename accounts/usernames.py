"""Which names a new account (or a new import source) may take.

Django's own validator takes any Unicode letter, so `аlice` (a Cyrillic а) or `alice\u200b` would sit beside
`alice` in every list and qrels file looking like her. New names are plain ASCII letters, digits, `_`, `.` and
`-`, at most USERNAME_MAX_LENGTH characters, and not another account's name in other letter case. Accounts made
before this rule keep their names.
"""

import re
import unicodedata

USERNAME_MAX_LENGTH = 64
_ALLOWED = re.compile(r"[A-Za-z0-9_.-]+")
_SHOWN = 40  # characters of a refused name quoted in the message


def _shown(name: str) -> str:
    return repr(name if len(name) <= _SHOWN else name[:_SHOWN] + "…")


def _describe(char: str) -> str:
    try:
        what = unicodedata.name(char)
    except ValueError:
        what = "a control character"
    return f"U+{ord(char):04X} ({what})"


def username_problem(name: str) -> str | None:
    """Why `name` cannot be a new account's name, or None when it can."""
    if not name:
        return "a user name cannot be empty"
    if len(name) > USERNAME_MAX_LENGTH:
        return f"user name {_shown(name)} has {len(name)} characters; at most {USERNAME_MAX_LENGTH} are allowed"
    if not _ALLOWED.fullmatch(name):
        wrong = list(dict.fromkeys(c for c in name if not _ALLOWED.fullmatch(c)))
        listed = ", ".join(_describe(c) for c in wrong[:5]) + (" …" if len(wrong) > 5 else "")
        return (
            f"user name {_shown(name)} contains {listed}: use only the letters A-Z and a-z, digits, '_', '.' and '-' "
            "(a name of other letters can look like another person's)"
        )
    return None


def lookalike_of(name: str) -> str | None:
    """An existing account's name that differs from `name` only in letter case, if there is one."""
    from accounts.models import User

    return User.objects.filter(username__iexact=name).exclude(username=name).values_list("username", flat=True).first()
