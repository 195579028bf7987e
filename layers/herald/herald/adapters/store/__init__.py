"""Data access: the PynamoDB models of the table and the repositories that use them."""
