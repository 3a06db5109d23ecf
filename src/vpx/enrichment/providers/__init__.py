"""Enrichment provider adapters, by name: those registered in the entry-point group
``vpx.enrichment_providers`` (vpx's own: hunter, pdl, apollo; a third party's package may add more)."""

from __future__ import annotations

import logging
from functools import lru_cache
from importlib.metadata import entry_points

from vpx.enrichment.providers.base import Provider

log = logging.getLogger("vpx.enrichment")
GROUP = "vpx.enrichment_providers"
# The built-in adapters, also when vpx runs from a source tree without installed metadata.
BUILT_IN = {
    "hunter": "vpx.enrichment.providers.hunter:Hunter",
    "pdl": "vpx.enrichment.providers.pdl:PeopleDataLabs",
    "apollo": "vpx.enrichment.providers.apollo:Apollo",
}


def _load(target: str) -> Provider:
    import importlib

    module_name, _, attribute = target.partition(":")
    provider = getattr(importlib.import_module(module_name), attribute)()
    if not isinstance(provider, Provider):
        raise TypeError(f"{target} is not an enrichment provider (vpx.enrichment.providers.base.Provider)")
    return provider


@lru_cache(maxsize=1)
def registered() -> dict[str, Provider]:
    """Every adapter by name: the built-in ones, then those of the entry-point group (a name the
    group registers again replaces the built-in one)."""
    found = {name: _load(target) for name, target in BUILT_IN.items()}
    for point in entry_points(group=GROUP):
        if point.value == BUILT_IN.get(point.name):
            continue
        try:
            found[point.name] = _load(point.value)
        except Exception:  # a broken third-party adapter is left out, said once, never the service's end
            log.exception("enrichment provider %r (%s) could not be loaded; it is left out", point.name, point.value)
    return found


def provider_names() -> list[str]:
    return sorted(registered())
