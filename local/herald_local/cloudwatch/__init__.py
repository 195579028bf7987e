"""Amazon CloudWatch: the metrics Lambda and API Gateway publish, counted where the local stack plays
those services (``metrics``), and the template's alarms evaluated on them or on the queues' depth in
moto, notifying their SNS actions (``alarms``)."""
