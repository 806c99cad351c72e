"""The one exception for a user's mistake.

The CLI turns a :class:`UserError` into its message on stderr and exit status
2, without a traceback. Anything else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """A mistake in the user's input. ``field`` names where it is, as a
    dotted path (``topology.bottleneck.rate``) when there is one."""

    exit_code = 2

    def __init__(self, message: str, field: str | None = None):
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)
