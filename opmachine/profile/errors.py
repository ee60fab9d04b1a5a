"""The error a profile that cannot be used raises: one line naming the profile and what is wrong."""
from __future__ import annotations

from simdmodel.errors import InputError

__all__ = ["ProfileError", "ProfileKindError", "one_line"]


def one_line(text: str) -> str:
    """`text` with its line breaks turned into spaces (every profile error is one line)."""
    return text.replace("\r", " ").replace("\n", " ")


class ProfileError(InputError):
    """A profile that cannot be used: message `profile NAME: what is wrong`, on one line."""

    def __init__(self, profile: str, message: str):
        self.profile = str(profile)
        self.reason = message
        super().__init__(one_line(f"profile {self.profile}: {message}"))


class ProfileKindError(ProfileError):
    """A GPU profile given where a CPU profile is needed, or the other way round."""

    def __init__(self, profile: str, kind: str, wanted: str):
        self.profile = str(profile)
        self.kind = kind
        self.wanted = wanted
        self.reason = f"is a {kind} profile"
        message = f"profile {profile} is a {kind} profile; --{wanted} needs a {wanted} profile"
        InputError.__init__(self, one_line(message))
