"""Report rows whose unchecked foreign keys point nowhere (see assessments.selectors.integrity)."""

from assessments.management.base import BaseCommand
from assessments.management.progress import fail
from assessments.selectors.integrity import orphans


class Command(BaseCommand):
    help = (
        "Check the foreign keys the database does not enforce (kept off for the speed of bulk writes) and list rows "
        "that point at nothing. Exits with status 1 when there are any."
    )

    def handle(self, *args, **options):
        found = orphans()
        for relation in found:
            if relation.count:
                more = " …" if relation.count > len(relation.sample) else ""
                ids = ", ".join(map(str, relation.sample)) + more
                self.stdout.write(f"{relation.relation}: {relation.count} orphan rows (ids {ids})")
            else:
                self.stdout.write(f"{relation.relation}: ok")
        broken = [relation for relation in found if relation.count]
        if broken:
            fail(self, f"{sum(r.count for r in broken)} orphan rows in {len(broken)} of {len(found)} unchecked relations")
        self.stdout.write(self.style.SUCCESS(f"no orphan rows in {len(found)} unchecked relations"))
