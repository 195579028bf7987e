"""The receiver of Herald's outbound webhooks, with their signature checks."""
