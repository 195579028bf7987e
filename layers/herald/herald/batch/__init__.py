"""The workers' edge: SQS batch events in, partial batch failures out (beside ``herald.http``)."""
