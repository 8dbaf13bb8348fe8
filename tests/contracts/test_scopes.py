"""Write scopes: allowed shapes, path meaning, and a sound overlap test."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runners.contracts.scopes import path_in_scope, scopes_overlap, write_scope_problem

OVERLAP = [
    ("src/a/**", "src/b/**", False),
    ("src/a", "src/a/x.py", True),
    ("src/a/", "src/a/x.py", True),
    (
        "src/**/*.py",
        "src/a/b.md",
        True,
    ),  # src/**/*.py covers src/a/b.md/x.py if b.md is a directory
    ("docs/*.md", "docs/x.py", False),
    ("docs/*.md", "src/x.md", False),
    ("**", "anything/at/all", True),
    ("a/*/c", "a/b/d", False),
    ("a/*/c", "a/b/c/d", True),
    ("tests/test_a.py", "tests/test_b.py", False),
    ("src/{a,b}.py", "src/a.py", True),  # brace alternatives in some dialects
    ("src/[ab].py", "src/c.py", True),  # classes are only known by their affixes
    ("src/A.py", "src/a.py", True),  # case-insensitive file systems
    ("a/b*", "a/c*", False),
    ("a/b*", "a/bc*", True),
    ("*.py", "*.md", False),
    ("x/**/y", "x/z", True),
    ("x/**/y.py", "x/q.md", True),
]


@pytest.mark.parametrize(("left", "right", "expected"), OVERLAP)
def test_overlap_table(left: str, right: str, expected: bool) -> None:
    assert scopes_overlap(left, right) is expected
    assert scopes_overlap(right, left) is expected


PROBLEMS = [
    ("", "empty"),
    (" src", "whitespace"),
    ("/etc", "absolute"),
    ("~/x", "absolute"),
    ("C:/x", "absolute"),
    ("..", "'..'"),
    ("a/../b", "'..'"),
    ("./a", "'.'"),
    ("a//b", "empty path segments"),
    ("a\\b", "backslashes"),
    ("a\nb", "control"),
    ("!a", "negated"),
    ("a/**b", "whole path segment"),
    ("a/" * 40, "segments"),
    ("a" * 201, "longer"),
]


@pytest.mark.parametrize(("pattern", "words"), PROBLEMS)
def test_bad_scopes(pattern: str, words: str) -> None:
    problem = write_scope_problem(pattern)
    assert problem is not None and words in problem


@pytest.mark.parametrize("pattern", ["src/**", "src/app/", "README.md", "**/*.py", "a/[bc]?/d*"])
def test_good_scopes(pattern: str) -> None:
    assert write_scope_problem(pattern) is None


PATHS = [
    ("src/a/x.py", "src/a", True),
    ("src/a/x.py", "src/*.py", False),
    ("src/x.py", "src/*.py", True),
    ("src/a/b/c.py", "src/**/*.py", True),
    ("src/c.py", "src/**/*.py", True),
    ("Src/X.py", "src/x.py", True),
    ("src/b.py", "src/a.py", False),
]


@pytest.mark.parametrize(("path", "pattern", "expected"), PATHS)
def test_path_in_scope(path: str, pattern: str, expected: bool) -> None:
    assert path_in_scope(path, pattern) is expected


# A small alphabet so random patterns and paths collide often.
segment_patterns = st.sampled_from(
    ["a", "b", "ab", "A", "*", "**", "a*", "*b", "?", "[ab]", "{a,b}", "a?b", "*a*"]
)
segments = st.sampled_from(["a", "b", "ab", "ba", "A", "aab", "x", "{a,b}", "[ab]"])
patterns = st.lists(segment_patterns, min_size=1, max_size=4).map("/".join)
paths = st.lists(segments, min_size=1, max_size=5).map("/".join)


@settings(max_examples=400, deadline=None)
@given(patterns, patterns, paths)
def test_overlap_is_sound(left: str, right: str, path: str) -> None:
    """If one path lies inside both patterns, the two must be reported as overlapping."""
    if path_in_scope(path, left) and path_in_scope(path, right):
        assert scopes_overlap(left, right)


@settings(max_examples=200, deadline=None)
@given(patterns, patterns)
def test_overlap_is_symmetric_and_reflexive(left: str, right: str) -> None:
    assert scopes_overlap(left, right) == scopes_overlap(right, left)
    assert scopes_overlap(left, left)
