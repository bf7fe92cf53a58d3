"""The files under pass/ and fail/ are input for the type checkers
(tests/test_typing.py), not tests: pytest, including its doctest
collection, must not import them."""

collect_ignore_glob = ["pass/*.py", "fail/*.py"]
