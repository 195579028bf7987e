"""Herald's local runtime: the Docker-free stand-in for AWS and the email providers, laid out by
the service it emulates, as moto and LocalStack lay theirs out.

- The shell: ``python -m herald_local`` (``__main__``) starts the ``stack`` (every part below, in
  order) and sets up the ``demo`` tenant; ``invoke`` runs one function once, as ``sam local
  invoke`` does; ``state`` is the file through which tools find a running stack; ``config`` reads
  where it runs from the environment.
- ``cloudformation``: template.yaml translated, created in moto and resolved into the topology the
  other services play; ``awslambda``: the functions in runner processes; ``apigateway``: the HTTP
  API; ``event_sources``: SQS pollers, SNS subscriptions and schedules; ``cloudwatch``: metrics and
  alarms; ``aws``: moto itself, its clients and every AWS SDK call observed; ``host``: child
  processes and the console; ``sandbox``: the email providers and webhook receivers.

Each floor imports only those below it (``.importlinter``, contract ``local-floors``).
"""
