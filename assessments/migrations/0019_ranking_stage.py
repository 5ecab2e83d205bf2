"""The staging table run imports COPY rankings into while they still read files (services.ranking_stage).

PostgreSQL only: the demo's SQLite imports keep their rankings in a spool file. UNLOGGED, since nothing in it needs
to survive a crash; the lists compressed with lz4 like assessments_ranking's, so moving them there keeps them as
they are.
"""

from django.db import migrations

_CREATE = """
CREATE UNLOGGED TABLE assessments_rankingstage (
    run_key bigint NOT NULL,
    topic_id bigint NOT NULL,
    length integer NOT NULL,
    docs text[] COMPRESSION lz4 NOT NULL,
    ranks integer[] COMPRESSION lz4 NOT NULL,
    scores double precision[] COMPRESSION lz4 NOT NULL,
    stances text[] COMPRESSION lz4,
    by_rank integer[] COMPRESSION lz4,
    by_single integer[] COMPRESSION lz4,
    staged_at timestamp with time zone NOT NULL DEFAULT now()
)
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_CREATE)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP TABLE assessments_rankingstage")


class Migration(migrations.Migration):

    dependencies = [
        ('assessments', '0018_campaign_settings'),
    ]

    operations = [
        migrations.RunPython(create, drop),
    ]
