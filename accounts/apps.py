from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from axes.signals import user_locked_out

        from .throttle import log_lockout

        user_locked_out.connect(log_lockout, dispatch_uid="touchstone-login-locked-out")
