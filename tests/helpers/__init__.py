"""Helpers shared by the test packages (``from helpers.pairs import ...``): ``pairs`` builds
target/draft pairs for check and the engine models, ``convert`` tiny drafts and targets for
convert, ``report`` bench files for report, ``fixtures`` the public fixture configs. The
``tests`` folder is on ``sys.path`` through ``tests/conftest.py``; nothing here is a test."""
