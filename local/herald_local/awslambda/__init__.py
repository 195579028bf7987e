"""AWS Lambda: each function of the template in execution environments of its own, runner
processes that set the function up as the Python runtime does and serve the Invoke API
(``runner``), started and scaled as Lambda scales them and invoked through that API
(``functions``)."""
