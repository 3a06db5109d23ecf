"""The operator's HTTP API under /api/v1/admin, behind X-Admin-Token: evidence ingestion (D36) and
account management."""
