"""Credit balances and the append-only ledger (D8, D11)."""
