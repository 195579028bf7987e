"""What invokes functions besides the HTTP API: SQS event source mappings played as Lambda's pollers
play them (``pollers``), SNS subscriptions of functions (``sns_bridge``), and EventBridge rules and
Scheduler schedules fired on their cadence (``schedules``, ``schedule_expressions``)."""
