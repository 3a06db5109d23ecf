"""Customers' own mailboxes (D34): sending over SMTP, reading replies and bounces over IMAP."""
