# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""The sync client: the source the sync client (`_blocking`) is generated from."""
