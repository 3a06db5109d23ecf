"""Publishers (D17): contributed contacts, their validation and deduplication, and revenue share."""
