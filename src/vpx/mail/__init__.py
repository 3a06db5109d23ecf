"""The service's own email, sent through the operator's SMTP server (VPX_SMTP_URL): password resets
(``vpx.mail.outbox``). Customers' own mailboxes, for sequences, are another matter (``vpx.mailboxes``)."""
