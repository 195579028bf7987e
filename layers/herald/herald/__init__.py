"""Herald core: domain logic, data access, providers and crypto shared by every function."""

import gc
import os

__version__ = "0.1.0"
USER_AGENT = f"Herald/{__version__}"
# Set by Lambda while it initialises an environment: on-demand, provisioned-concurrency or snap-start.
INITIALIZATION_TYPE = "AWS_LAMBDA_INITIALIZATION_TYPE"

# While Lambda initialises an environment, the collector waits for the handler module's import to
# finish (herald.composition.startup.finish): what an import makes lives as long as the process, so
# a collection during it walks every object of the process to free next to nothing.
if INITIALIZATION_TYPE in os.environ:
    gc.disable()
