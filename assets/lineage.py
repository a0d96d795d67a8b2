"""One record's whole lineage on request, in Dagster itself: ``lineage_job`` takes a rejection id (or an example or
conversation id) in the launchpad and its run's output is the story (the rule, where it came from, the request,
every call with its result or error), as ``prove lineage ID`` prints it. The rejections asset carries one such story
per rule already (its ``lineage_<stage>_<reason>`` entries).

The launchpad opens valid, on the one field to fill in (``record_id``, empty); a run launched with it empty fails
with a message that says what to enter there."""

import json

import dagster as dg
from pydantic import Field

from assets.resources import ProveSettings
from pipeline.corpus.lineage import lineage, story_markdown

RECORD_ID = "ops.look_up_lineage.config.record_id"


class LineageRequest(dg.Config):
    record_id: str = Field(
        default="",
        description="a rejection id (rej-...; `prove rejected` lists them), an example id or a conversation id",
    )
    version: str | None = Field(default=None, description="the corpus version to look in first (default: the latest)")


def no_record_id(data_dir: str) -> str:
    """What a run launched without a record id says: what to enter, where, and where to find one."""
    return (
        f"no record id given: enter a rejection id (rej-...), an example id or a conversation id as {RECORD_ID} in "
        "the launchpad. The rejections asset's samples show rejection ids, and `prove rejected` lists them "
        f"(corpus versions under {data_dir})."
    )


@dg.op(
    description="Finds the record in the corpus versions and writes its whole lineage as the run's output.",
    out=dg.Out(dg.Nothing, description="nothing to store: the story is the output's metadata and the run's log"),
)
def look_up_lineage(context: dg.OpExecutionContext, config: LineageRequest, settings: ProveSettings) -> None:
    data_dir = settings.build_config().data_dir
    record_id = config.record_id.strip()
    if not record_id:
        raise dg.Failure(description=no_record_id(data_dir))
    found = lineage(data_dir, record_id, config.version)
    if found is None:
        raise dg.Failure(description=f"no rejection or example {record_id!r} in any corpus version under {data_dir}")
    if found["type"] == "rejection":
        md = story_markdown(found)
    else:
        whole = json.dumps(found, indent=2, default=str)
        md = f"**{found['id']}** ({found['kind']}, {found['server']})\n\n```json\n{whole}\n```"
    context.log.info(md)
    context.add_output_metadata({"lineage": dg.MetadataValue.md(md), "version": found.get("version") or ""})


@dg.job(
    description=f"The whole lineage of one rejection or example: give its id in the launchpad ({RECORD_ID}); "
    "the run's output holds the story.",
    # the launchpad opens on the field to fill in, valid as it is (a run without an id says what to enter)
    config={"ops": {"look_up_lineage": {"config": {"record_id": ""}}}},
)
def lineage_job():
    look_up_lineage()
