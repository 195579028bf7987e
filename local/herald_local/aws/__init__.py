"""The emulated AWS account every other service stands on: moto in server mode (``server``), with
DynamoDB made as atomic as DynamoDB's (``atomic_dynamodb``), the runtime's own clients of it
(``clients``), region facts (``regions``), and every AWS SDK call of a process observed at botocore
(``sdk_calls``): recorded per function and failed on purpose (``function_calls``), or counted and
metered by the benchmarks."""
