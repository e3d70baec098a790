import sys

if sys.argv[1:2] == ["triton-run"]:
    # The judge and the seal before anything heavy is imported (sealed.py): Landlock seals the calling thread and
    # the threads it starts later, and numpy's BLAS starts threads when it is imported. The ephemeral seed's
    # descriptor (--ephemeral-fd) goes to the judge and is closed here, before the kernel is imported.
    from . import sealed

    sealed.start(ephemeral_fd=sealed.ephemeral_fd_in(sys.argv[2:]))

from .cli import main  # noqa: E402

sys.exit(main())
