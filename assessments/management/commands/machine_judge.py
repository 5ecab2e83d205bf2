"""Label a campaign's pool with a machine judge: the command-line twin of the machine judges page's run."""

from assessments.management.base import BaseCommand
from assessments.management.progress import campaign_or_fail, fail, progress_bar
from assessments.models import MachineJudge
from assessments.services import machine_judges


class Command(BaseCommand):
    help = (
        "Label the pool of a campaign with a machine judge: an OpenAI-compatible chat-completions endpoint "
        "(--endpoint URL --model NAME, its key in the environment variable --key-env names) or the local "
        "sentence-embedding model (--local, a weak judge calibrated on judged topics). The judge is made on first use "
        "and reused by --name. Machine labels are kept apart from the assessors' and never shown to them. Prints the "
        "cost estimate, then runs; --estimate prints it only."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="the campaign's slug")
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--endpoint", metavar="URL", help="base URL of an OpenAI-compatible API (…/v1)")
        where.add_argument("--local", action="store_true", help="the local embedding model (CPU, no service)")
        parser.add_argument("--model", default="", help="the model the endpoint runs")
        parser.add_argument("--name", help="the judge's name in the campaign (default: the model's, or 'local')")
        parser.add_argument("--key-env", default="", metavar="NAME", help="environment variable holding the endpoint's key")
        parser.add_argument("--kind", action="append", default=[], metavar="DIMENSION",
                            help="a dimension to label (repeatable; default: every dimension the judge can ask)")
        parser.add_argument("--topic", help="only this topic (its number)")
        parser.add_argument("--unjudged", action="store_true", help="only documents no assessor has judged (holes)")
        parser.add_argument("--in-flight", type=int, default=4, help="calls at once (default 4; a new judge)")
        parser.add_argument("--per-minute", type=int, default=0, help="calls started per minute (default: no limit; a new judge)")
        parser.add_argument("--calibrate", action="store_true", help="--local: fit the thresholds to the human labels again first")
        parser.add_argument("--estimate", action="store_true", help="print the calls and tokens a run would cost; change nothing")

    def handle(self, *args, slug: str, endpoint: str | None, local: bool, model: str, name: str | None, key_env: str,
               kind: list[str], topic: str | None, unjudged: bool, in_flight: int, per_minute: int, calibrate: bool,
               estimate: bool, **options) -> None:
        campaign = campaign_or_fail(self, slug)
        name = name or ("local" if local else "-".join(model.split("/")[-1].split())[:64])
        judge = MachineJudge.objects.filter(campaign=campaign, name=name).first()
        try:
            if judge is None:
                if not (endpoint or local):
                    fail(self, f"campaign {slug} has no judge named {name!r}: give --endpoint URL --model NAME, or --local")
                judge = machine_judges.add_judge(
                    campaign=campaign, name=name, kind="local" if local else "endpoint", model=model, base_url=endpoint or "",
                    key_name=key_env, in_flight=in_flight, per_minute=per_minute, by=None,
                )
                self.stdout.write(f"added judge {judge.name} ({judge.get_kind_display()})")
            if calibrate:
                found = machine_judges.recalibrate(judge=judge, dimensions=kind)
                for dimension, cuts in found.items():
                    self.stdout.write(f"{dimension}: " + ", ".join(
                        f"{value} from {threshold:.3f}" if threshold is not None else f"{value} never" for threshold, value in cuts
                    ))
            plan = machine_judges.plan(judge=judge, dimensions=kind, topic=topic, only_unjudged=unjudged).as_estimate()
            self.stdout.write(
                f"estimate: {plan['calls']} calls ({', '.join(f'{k} {v}' for k, v in plan['by_dimension'].items())}), "
                f"about {plan['prompt_tokens']:,} prompt and {plan['completion_tokens']:,} completion tokens"
            )
            if estimate:
                return
            with progress_bar(desc=f"judging ({judge.name})", unit="label", stream=self.stderr) as bar:
                result = machine_judges.run_judge(judge=judge, dimensions=kind, topic=topic, only_unjudged=unjudged, progress=bar)
        except machine_judges.MachineJudgeError as exc:
            fail(self, exc)
        for warning in result["warnings"]:
            self.stderr.write(f"warning: {warning}")
        self.stdout.write(self.style.SUCCESS(
            f"{result['summary']}; {result['prompt_tokens']:,} prompt and {result['completion_tokens']:,} completion tokens used"
        ))
