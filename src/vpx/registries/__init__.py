"""Contacts from government registries: importers, entity resolution, decision-makers, SEC companies.

See docs/registries.md. Sources are listed in vpx.registries.sources.SOURCE_MODULES.
"""
