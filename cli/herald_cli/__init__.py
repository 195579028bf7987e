"""The operator CLI ``herald``: tenants and their keys, against the local stack or a deployed one."""
