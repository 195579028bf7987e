"""Benchmarks of Herald's budgets: AWS calls per request and per delivery, KMS calls, latency."""
