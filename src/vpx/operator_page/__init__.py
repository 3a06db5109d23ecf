"""The operator page at /operator: sources' freshness and the data-quality figures, read-only, for
whoever holds an admin token (docs/operator-guide.md, "The operator page")."""
