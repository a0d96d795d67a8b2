"""One record's whole lineage on request, in Dagster itself: ``lineage_job`` takes a rejection id (or an example or
conversation id) in the launchpad and its run's output is the story (the rule, where it came from, the request,
every call with its result or error), as ``prove lineage ID`` prints it. The rejections asset carries one such story
per rule already (its ``lineage_<stage>_<reason>`` entries)."""

import json

import dagster as dg
from pydantic import Field

from assets.resources import ProveSettings
from pipeline.corpus.lineage import lineage, story_markdown


class LineageRequest(dg.Config):
    record_id: str = Field(description="a rejection id (rej-...), an example id or a conversation id")
    version: str | None = Field(default=None, description="the corpus version to look in first (default: the latest)")


@dg.op(
    description="Finds the record in the corpus versions and writes its whole lineage as the run's output.",
    out=dg.Out(dg.Nothing, description="nothing to store: the story is the output's metadata and the run's log"),
)
def look_up_lineage(context: dg.OpExecutionContext, config: LineageRequest, settings: ProveSettings) -> None:
    data_dir = settings.build_config().data_dir
    found = lineage(data_dir, config.record_id, config.version)
    if found is None:
        raise dg.Failure(
            description=f"no rejection or example {config.record_id!r} in any corpus version under {data_dir}"
        )
    if found["type"] == "rejection":
        md = story_markdown(found)
    else:
        whole = json.dumps(found, indent=2, default=str)
        md = f"**{found['id']}** ({found['kind']}, {found['server']})\n\n```json\n{whole}\n```"
    context.log.info(md)
    context.add_output_metadata({"lineage": dg.MetadataValue.md(md), "version": found.get("version") or ""})


@dg.job(
    description="The whole lineage of one rejection or example: give its id in the launchpad "
    "(ops.look_up_lineage.config.record_id); the run's output holds the story."
)
def lineage_job():
    look_up_lineage()
