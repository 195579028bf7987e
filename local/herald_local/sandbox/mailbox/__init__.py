"""What the sandbox saw: the JSON views, the switches and the HTML mailbox page."""
