"""Herald core: domain logic, data access, providers and crypto shared by every function."""

__version__ = "0.1.0"
USER_AGENT = f"Herald/{__version__}"
