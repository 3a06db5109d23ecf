"""vpx: an open, self-hostable Contact and Intent Signal API."""

__version__ = "0.1.0"
