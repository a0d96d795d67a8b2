"""The corpus's near-duplicate gate reads the reference column as the dedup stage's shingles need it (call names
only, unless the shingles take the arguments)."""

import json

import polars as pl
import pyarrow as pa

from pipeline.core.similarity import reference_shingles, similar_pairs
from pipeline.corpus.columns import reference_of

REF = [
    [{"name": "list_accounts", "arguments": {"customer_id": "CUS-0001"}, "depends_on": []}],
    [
        {"name": "get_account", "arguments": {"account_id": "ACC-0002"}, "depends_on": [0]},
        {"name": "close_account", "arguments": {"account_id": "ACC-0002", "reason": "move"}, "depends_on": [1]},
    ],
]


CALL = pa.struct([("name", pa.string()), ("arguments", pa.string()), ("depends_on", pa.list_(pa.int64()))])


def _nested(ref):
    """The value the nested Parquet column gives back through polars (arguments as JSON text)."""
    value = [[{**c, "arguments": json.dumps(c["arguments"])} for c in turn] for turn in ref]
    return pl.from_arrow(pa.array([value], type=pa.list_(pa.list_(CALL)))).to_list()[0]


def test_names_only_give_the_shingles_of_the_whole_reference_in_every_form_it_is_stored_in():
    for stored in (json.dumps(REF), _nested(REF), json.dumps(REF[1]), []):
        assert reference_shingles(reference_of(stored, arguments=False)) == reference_shingles(reference_of(stored))
    assert reference_shingles(reference_of(_nested(REF), arguments=False)) == {
        "list_accounts",
        "get_account",
        "close_account",
        "list_accounts>get_account",
        "get_account>close_account",
    }


def test_the_same_calls_with_other_arguments_are_near_duplicates_by_name():
    other = [[{**c, "arguments": {"account_id": "ACC-0009"}} for c in turn] for turn in REF]
    items = [
        (cid, reference_shingles(reference_of(_nested(r), arguments=False))) for cid, r in (("a", REF), ("b", other))
    ]
    assert similar_pairs(items, 0.9)
