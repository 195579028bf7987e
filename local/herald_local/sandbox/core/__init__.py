"""What every service of the sandbox shares: the records and their store, the failures recipients
choose, outages, the send flow of the email providers and the small HTTP pieces."""
