"""What every service of the sandbox shares, and all it may import of the sandbox: the records and
their store, the failures recipients choose, outages, the email providers' send flow, checkouts, the
small HTTP pieces and the ``Service`` each package exposes."""
