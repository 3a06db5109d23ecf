"""Consumers' privacy requests made directly to the operator: to know, delete, correct or opt out."""
