"""Herald's local runtime: the Docker-free stand-in for AWS and the email providers."""
