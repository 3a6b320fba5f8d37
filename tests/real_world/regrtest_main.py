"""Runs CPython's regression test driver (what `python3 -m test` runs) after removing the names
listed in HEAPKIT_RW_UNSET_IN_CHILDREN from os.environ. The interpreter running this file was
started with them (so it is leak-checked), but the interpreters the tests spawn are not: many
tests require a child's stderr to be empty, and a child's own leak report would break them.
"""
import os

if __name__ == "__main__":  # multiprocessing's forkserver/spawn children import this file too
    for name in os.environ.pop("HEAPKIT_RW_UNSET_IN_CHILDREN", "").split():
        os.environ.pop(name, None)

    from test.libregrtest.main import main

    main()
