"""Deliverability of the catalogue's emails: whether each address is well formed, whether its domain
has a mail exchanger (MX look-ups run by the worker, cached per domain for the record's TTL and paced
by a setting), whether a sequence saw it bounce, and the flags `disposable` and `role`. Nothing here
ever talks to a mail server: the DNS says where mail would go, and only real sends say it bounced.

- ``checks``: an address's syntax, domain and flags (pure functions, data files beside them);
- ``mx``: one domain's MX look-up through the operator's resolver, paced;
- ``service``: the worker's rounds over the contacts table, and ``mark_bounced`` for the sequences.
"""
