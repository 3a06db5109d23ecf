"""API keys: their format, storage, permissions, IP allow-lists and rate limits (D3–D7); the cookies and
CSRF checks of the web pages' forms (csrf)."""
