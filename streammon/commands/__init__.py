"""The subcommands of the ``streammon`` command, one module each, and what they share (``common``)."""
