"""The outbound guard (D26): whether the service may reach an address a customer, a publisher or the
operator names, for every path that goes out: webhook deliveries, mailboxes (IMAP, SMTP) and the
sequences sent through them, the service's own mail, enrichment providers, DROP, and the sources'
downloads with each redirect.

- ``addresses``: whether one address may be reached, and how a refusal is worded;
- ``resolver``: how a name is resolved (once: the caller connects to what was checked);
- ``guard``: a URL or a host checked whole (``check_target``, ``check_host``);
- ``transport``: an httpx transport that asks the guard about each request's host.

What each path admits: customers' webhook URLs and mail hosts reach public addresses only, unless
``VPX_WEBHOOK_ALLOW_PRIVATE=1`` or ``VPX_MAILBOX_ALLOW_PRIVATE=1`` (development and tests) admits
loopback and private ones; destinations the operator sets (their own SMTP server, the providers' and
DROP's API roots) may be on the operator's network; where a publisher sends a run (a redirect, a
link) is judged by where its source is (vpx.sources.egress; the source's own URL, the operator's
choice, is reached wherever it points). Link-local and cloud-metadata addresses are refused on every
path the guard judges.
"""
