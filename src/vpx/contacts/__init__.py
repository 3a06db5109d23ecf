"""The contact catalogue: search, previews, reveals."""
