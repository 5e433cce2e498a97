"""The one exception type for input a user can get wrong."""


class HandError(ValueError):
    """Bad input: the message is one sentence a player can act on."""
