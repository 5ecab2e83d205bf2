"""A backup of a whole install, as the README's "Backup and restore" gives it: pg_dump in custom format of the
database (qrels snapshots included: they live in it), pg_restore into a new, empty database. The restored install
exports the same qrels, keeps the same histories and audit trail, serves its snapshots after checking their
checksums, and refuses to rewrite the record as the original did: its triggers are restored, after the rows."""

import re
import subprocess

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from assessments.models import Campaign
from tests.assessments import archive_scenario
from tests.assessments.archive_scenario import fingerprint

# The rows must be committed for pg_dump, another session, to see them.
pytestmark = pytest.mark.django_db(transaction=True)


def major_version(tool: str) -> int:
    version = subprocess.run([tool, "--version"], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"\) (\d+)", version).group(1))


def test_the_client_tools_are_not_older_than_the_server(db):
    server = connection.pg_version // 10000
    for tool in ("pg_dump", "pg_restore"):
        # pg_dump refuses a newer server; a dump restores into the same or a newer major version only.
        assert major_version(tool) >= server, f"{tool} {major_version(tool)} is older than PostgreSQL {server}: install its client tools"


def test_a_restored_backup_is_the_same_install(tmp_path, scratch_database, connected_to):
    campaign = archive_scenario.build(tmp_path)
    before = fingerprint(campaign)
    dump = tmp_path / "touchstone.dump"
    subprocess.run(
        ["pg_dump", "--format=custom", f"--file={dump}", f"{scratch_database.url}/{connection.settings_dict['NAME']}"], check=True,
    )
    scratch_database.create()
    subprocess.run(
        ["pg_restore", "--exit-on-error", "--single-transaction", "--no-owner",
         f"--dbname={scratch_database.url}/{scratch_database.name}", str(dump)],
        check=True,
    )

    with connected_to(scratch_database.name):
        call_command("migrate", check_unapplied=True, verbosity=0)  # exits if the restored schema were behind the code
        after = fingerprint(Campaign.objects.get(slug="archived"))
        with connection.cursor() as cursor:
            for statement, refusal in (
                ("DELETE FROM assessments_judgmentevent", "judgment history is append-only: DELETE is refused"),
                ("TRUNCATE assessments_auditevent CASCADE", "the audit trail is append-only: TRUNCATE is refused"),
                ("UPDATE assessments_judgment SET labels = labels || '{\"relevance\": 0}'", "a change of labels needs a new revision"),
                ("UPDATE assessments_qrelssnapshotpart SET data = 'x'", "qrels snapshots never change after export"),
            ):
                with pytest.raises(DatabaseError, match=refusal), transaction.atomic():
                    cursor.execute(statement)
    assert after == before
    assert len(before["snapshots"]) == 2 and before["snapshots"][0][-1].startswith("2 0 ")
