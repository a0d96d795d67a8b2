"""What SFT sees: every example once, those where no call is right ``sft_no_call_repeat`` times."""

from training.config import TrainConfig
from training.data import load_tasks
from training.fixture import build_fixture_corpus
from training.train import sft_tasks


def test_examples_where_no_call_is_right_are_repeated_and_the_rest_seen_once(tmp_path):
    tasks = load_tasks(build_fixture_corpus(tmp_path / "c", n=40, seed=1), "train")
    declines = [t for t in tasks if t.abstain]
    assert declines and len(declines) < len(tasks)
    seen = sft_tasks(tasks, TrainConfig(sft_no_call_repeat=3))
    assert len(seen) == len(tasks) + 2 * len(declines)
    assert all(seen.count(t) == (3 if t.abstain else 1) for t in tasks)
    assert sft_tasks(tasks, TrainConfig(sft_no_call_repeat=1)) == tasks
