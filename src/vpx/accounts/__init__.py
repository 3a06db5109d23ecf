"""Accounts: who holds keys and credits."""
