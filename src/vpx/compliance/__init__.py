"""What the law asks of a data broker, as working features: California's DROP deletions, the
Do-Not-Call registry's flags on phones, consumers' privacy requests, and the audit trail of all of
them (docs/compliance.md)."""
