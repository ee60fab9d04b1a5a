"""One registry type for every kind of plug-in (strategies, algorithms): objects with a `name`."""
from __future__ import annotations

from .errors import InputError


class Registry(dict):
    """Plug-ins of one kind by name: `register` refuses a second object under a taken name, `get`
    answers an unknown name with an InputError that lists the known ones."""

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def register(self, plugin):
        if plugin.name in self and self[plugin.name] is not plugin:
            raise ValueError(f"a {self.kind} named {plugin.name!r} is already registered")
        self[plugin.name] = plugin
        return plugin

    def unregister(self, name: str) -> None:
        self.pop(name, None)

    def get_plugin(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise InputError(f"unknown {self.kind} {name!r} (choose from {', '.join(self)})") from None
