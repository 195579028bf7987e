"""A Slack incoming webhook, the local stack's alert channel."""
