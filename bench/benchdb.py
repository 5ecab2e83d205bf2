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
