"""filesystem tools under hostile input: patterns are searched by a linear-time engine, trees of any depth are
walked without recursion, and a replacement's size is known before it is made. Tools are called directly on a
seeded world (``tests/servers/test_hostile_inputs.py`` sweeps every tool over MCP with a hang detector)."""

from __future__ import annotations

import pytest

from servers.filesystem.tools_change import cp, mkdir, mv, replace_in_file, rm, write_file
from servers.filesystem.tools_inspect import du, find, get_disk_usage, grep, stat
from servers.kit import InvalidArgument
from servers.registry import world


@pytest.fixture
def w():
    return world("filesystem", 0)


def test_grep_answers_a_catastrophic_backtracking_pattern(w):
    write_file(w, "redos.txt", "a" * 40 + "!\n" + "b" * 40 + "\n")
    assert grep(w, r"(a+)+$", "redos.txt").total == 0  # a backtracking engine needs 2^40 steps here
    assert [m.line for m in grep(w, r"^(\w+\s?)*$", "redos.txt").matches] == ["b" * 40]


def test_grep_refuses_backtracking_only_constructs_with_a_named_error(w):
    for pattern, shown in [(r"(a)\1", "backreferences"), (r"a(?=b)", "lookahead"), (r"a++", "possessive")]:
        with pytest.raises(InvalidArgument, match="cannot be searched in linear time") as e:
            grep(w, pattern, ".")
        assert shown in str(e.value) and repr(pattern) in str(e.value)


def test_grep_keeps_python_syntax_errors_and_end_of_text(w):
    with pytest.raises(InvalidArgument, match="is not a valid regular expression: unterminated character set"):
        grep(w, "[", ".")
    write_file(w, "end.txt", "the end of text\n")
    assert grep(w, r"text\Z", "end.txt").total == 1
    assert grep(w, "END OF", "end.txt", ignore_case=True).total == 1


def test_trees_deeper_than_the_recursion_limit_are_walked_copied_and_removed(w):
    mkdir(w, "/".join(["d"] * 500), parents=True)
    mkdir(w, "/".join(["e"] * 500), parents=True)
    mv(w, "e", "/".join(["d"] * 499))  # 1,000 levels: deeper than Python's default recursion limit
    write_file(w, "/".join(["d"] * 499 + ["e"] * 500 + ["leaf.txt"]), "leaf\n")
    assert du(w, "d").size == len(b"leaf\n") and get_disk_usage(w).username == w.user
    assert find(w, "d", kind="directory").total > 0  # find descends a bounded number of levels
    copied = cp(w, "d", "d2", recursive=True)
    assert copied.files_copied == 1
    assert rm(w, "d2", recursive=True).removed_count == 1001
    assert stat(w, "d").kind == "directory"


def test_a_replacement_that_would_outgrow_any_file_is_refused_before_it_is_built(w):
    shared = "/home/shared/team-handbook.md"  # another user's file, writable through the staff group
    assert stat(w, shared).owner != w.user
    grown = replace_in_file(w, shared, "e", "e" * 10_000)  # about 90,000 e's now
    with pytest.raises(InvalidArgument, match="over the largest file this filesystem holds"):
        replace_in_file(w, shared, "e", "x" * 3_000)  # would be about 270 MB: refused before it is built
    assert stat(w, shared).size == grown.size
