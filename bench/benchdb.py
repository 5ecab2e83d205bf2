"""The benchmarks' own PostgreSQL databases: each script drops and recreates one, and points Django at it.

Call `use_database` before importing Django, so the settings read the benchmark's DATABASE_URL.
"""

import os
import sys
from pathlib import Path

import psycopg2

SERVER = os.environ.get("BENCH_SERVER_URL", "postgres://postgres@127.0.0.1:5432")
ROOT = Path(__file__).resolve().parent.parent


def use_database(name: str) -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = f"{SERVER}/{name}"
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "touchstone.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")


def recreate_database(name: str) -> None:
    conn = psycopg2.connect(f"{SERVER}/postgres")
    conn.autocommit = True
    with conn.cursor() as cursor:
        # The database is the benchmark's alone: FORCE ends a killed earlier run's sessions.
        cursor.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        cursor.execute(f"CREATE DATABASE {name}")
    conn.close()


def bench_campaign(name: str, *, topics: int, first: int = 51):
    """(campaign, its topics) in a new database `name`, migrated: what the evaluation and qrels benches start from.
    Topics are numbered from `first`, as Touché's 2021 ones from 51."""
    recreate_database(name)
    use_database(name)
    import django

    django.setup()
    from django.core.management import call_command

    from assessments.models import Topic
    from assessments.services import campaigns

    call_command("migrate", verbosity=0)
    campaign = campaigns.create_campaign(slug="bench", name="Bench", preset="touche-2021-task2")
    made = Topic.objects.bulk_create(
        [Topic(campaign=campaign, number=str(first + i), title=f"Topic {first + i}", position=i) for i in range(topics)]
    )
    return campaign, made
