"""The async client: the source the sync client (`_blocking`) is generated from."""
