"""Where the local stack runs: ports, state folder and region, read from the environment once."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

LOOPBACK = "127.0.0.1"
# moto's default account: every ARN the local stack builds uses it, as moto does.
ACCOUNT_ID = "123456789012"
STACK_NAME = "herald-local"
DEFAULT_REGION = "us-east-1"
STATE_DIR_NAME = ".herald-local"
LOG_FILE_NAME = "herald-local.log"
# In the state folder: the AWS calls each function process made, and the calls to fail on purpose.
AWS_CALLS_DIR_NAME = "aws-calls"
FAULTS_FILE_NAME = "faults.json"
# Execution environments (runner processes) per function at most; see awslambda.functions.
DEFAULT_MAX_ENVIRONMENTS = 4
# The payment processors' platform secrets, plan keys and prices of the local stack: from the
# developer's environment, else these test-only values (no processor ever issued them;
# docs/local-stack.md). The sandbox's checkouts charge these prices.
PAYMENT_DEFAULTS: Mapping[str, str] = {
    "HERALD_PAYSTACK_SECRET_KEY": "sk_test_herald_local_only_paystack_key",
    "HERALD_POLAR_WEBHOOK_SECRET": "whsec_aGVyYWxkIGxvY2FsLW9ubHkgUG9sYXIgc2VjcmV0ISE=",
    "HERALD_POLAR_ACCESS_TOKEN": "polar_oat_herald_local_only_access_token",
    "HERALD_POLAR_PRODUCT_INDIE": "polar-local-product-indie",
    "HERALD_POLAR_PRODUCT_STARTUP": "polar-local-product-startup",
    "HERALD_PAYSTACK_PLAN_INDIE": "PLN_local_indie",
    "HERALD_PAYSTACK_PLAN_STARTUP": "PLN_local_startup",
    "HERALD_POLAR_PRICE_INDIE": "2900 USD",
    "HERALD_POLAR_PRICE_STARTUP": "9900 USD",
    "HERALD_PAYSTACK_PRICE_INDIE": "500000 NGN",
    "HERALD_PAYSTACK_PRICE_STARTUP": "1500000 NGN",
}
DEFAULT_ALARM_SECONDS = 10.0
# The sandbox's webhook receiver: the only paths on loopback a tenant's webhook may reach locally.
SANDBOX_HOOKS_PATH = "/hooks/"
# The variables that set the stack's ports; 0 takes any free port (the state file says which).
MOTO_PORT_VARIABLE = "HERALD_MOTO_PORT"
API_PORT_VARIABLE = "HERALD_API_PORT"
SANDBOX_PORT_VARIABLE = "HERALD_SANDBOX_PORT"


class ConfigError(RuntimeError):
    """The environment asks for something the local stack cannot do (bad value, port taken)."""


def project_root() -> Path:
    """The folder holding template.yaml: the package's repository when installed editable, else cwd."""
    candidate = Path(__file__).resolve().parents[2]
    if (candidate / "template.yaml").is_file():
        return candidate
    return Path.cwd()


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where a stack keeps its state: HERALD_LOCAL_DIR, else .herald-local in the repository."""
    env = os.environ if env is None else env
    return Path(env.get("HERALD_LOCAL_DIR") or project_root() / STATE_DIR_NAME)


def _port(env: Mapping[str, str], variable: str, default: int) -> int:
    raw = env.get(variable, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 0 <= int(raw) < 65536:
        raise ConfigError(f"{variable} must be a TCP port number (0-65535, 0: any free port), got {raw!r}")
    return int(raw)


def _count(env: Mapping[str, str], variable: str, default: int) -> int:
    raw = env.get(variable, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{variable} must be a whole number of at least 1, got {raw!r}")
    return int(raw)


def _seconds_text(env: Mapping[str, str], variable: str) -> str | None:
    """A whole number of seconds (at least 1) as set, or None when the variable is unset."""
    raw = env.get(variable, "").strip() or None
    if raw is not None and (not raw.isdigit() or int(raw) < 1):
        raise ConfigError(f"{variable} must be whole seconds (at least 1), got {raw!r}")
    return raw


@dataclass(frozen=True)
class LocalConfig:
    root: Path
    state_dir: Path
    region: str
    moto_port: int
    api_port: int
    sandbox_port: int
    # Overrides the template's RetryBaseDelaySeconds so tests see retries in seconds, not minutes.
    retry_base_delay: str | None = None
    max_environments: int = DEFAULT_MAX_ENVIRONMENTS
    # Round-robin over tenants within a queue, as SQS fair queues serve them; off only to measure
    # what fairness buys (HERALD_LOCAL_FAIR_SERVING=0).
    fair_serving: bool = True
    # PAYMENT_DEFAULTS' variables, with the developer's values where set.
    payments: Mapping[str, str] = field(default_factory=lambda: dict(PAYMENT_DEFAULTS))
    # Overrides the template's StuckJobSeconds (the sweeper's threshold), for the same reason.
    stuck_job_seconds: str | None = None
    # Override the template's BreakerCooldownSeconds and EndpointDisableAfterSeconds, so tests see
    # breakers probe and endpoints disabled in seconds.
    breaker_cooldown_seconds: str | None = None
    endpoint_disable_after_seconds: str | None = None
    # Off only to measure what the breakers buy (HERALD_LOCAL_CIRCUIT_BREAKERS=0).
    circuit_breakers: bool = True
    # Overrides the template's SignInCodesPerClientPerHour: on one machine every browser is the
    # same client (127.0.0.1), so a suite of browser tests is many people behind one address.
    signin_codes_per_client: int | None = None
    # Every schedule fires this often instead of on its own cadence (None: its own).
    schedule_seconds: float | None = None
    # How often alarms are evaluated (at most once per Period).
    alarm_seconds: float = DEFAULT_ALARM_SECONDS

    @property
    def template_path(self) -> Path:
        return self.root / "template.yaml"

    @property
    def log_path(self) -> Path:
        """Every line of every process of the stack (the console shows a summary unless verbose)."""
        return self.state_dir / LOG_FILE_NAME

    @property
    def moto_url(self) -> str:
        return f"http://{LOOPBACK}:{self.moto_port}"

    @property
    def gateway_url(self) -> str:
        return f"http://{LOOPBACK}:{self.api_port}"

    @property
    def sandbox_url(self) -> str:
        return f"http://{LOOPBACK}:{self.sandbox_port}"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LocalConfig:
        env = os.environ if env is None else env
        root = project_root()
        state_dir = default_state_dir(env)
        retry = _seconds_text(env, "HERALD_LOCAL_RETRY_BASE_DELAY")
        schedule = _seconds_text(env, "HERALD_LOCAL_SCHEDULE_SECONDS")
        alarm = _seconds_text(env, "HERALD_LOCAL_ALARM_SECONDS")
        return cls(
            root=root,
            state_dir=state_dir.resolve(),
            region=env.get("AWS_DEFAULT_REGION") or env.get("AWS_REGION") or DEFAULT_REGION,
            moto_port=_port(env, MOTO_PORT_VARIABLE, 5000),
            api_port=_port(env, API_PORT_VARIABLE, 3000),
            sandbox_port=_port(env, SANDBOX_PORT_VARIABLE, 3100),
            retry_base_delay=retry,
            max_environments=_count(env, "HERALD_LOCAL_MAX_ENVIRONMENTS", DEFAULT_MAX_ENVIRONMENTS),
            fair_serving=env.get("HERALD_LOCAL_FAIR_SERVING", "1").strip().lower()
            not in {"0", "false", "no"},
            payments={name: env.get(name, "").strip() or value for name, value in PAYMENT_DEFAULTS.items()},
            stuck_job_seconds=_seconds_text(env, "HERALD_LOCAL_STUCK_JOB_SECONDS"),
            breaker_cooldown_seconds=_seconds_text(env, "HERALD_LOCAL_BREAKER_COOLDOWN_SECONDS"),
            endpoint_disable_after_seconds=_seconds_text(env, "HERALD_LOCAL_ENDPOINT_DISABLE_AFTER_SECONDS"),
            circuit_breakers=env.get("HERALD_LOCAL_CIRCUIT_BREAKERS", "1").strip() != "0",
            signin_codes_per_client=_count(env, "HERALD_LOCAL_SIGNIN_CODES_PER_CLIENT", 0) or None,
            schedule_seconds=None if schedule is None else float(schedule),
            alarm_seconds=DEFAULT_ALARM_SECONDS if alarm is None else float(alarm),
        )

    def ports(self) -> dict[str, int]:
        """Each port by the variable that sets it."""
        return {
            MOTO_PORT_VARIABLE: self.moto_port,
            API_PORT_VARIABLE: self.api_port,
            SANDBOX_PORT_VARIABLE: self.sandbox_port,
        }

    def with_ports(self, ports: Mapping[str, int]) -> LocalConfig:
        """This configuration with the ports bound (by variable, as ``ports()`` names them)."""
        return replace(
            self,
            moto_port=ports[MOTO_PORT_VARIABLE],
            api_port=ports[API_PORT_VARIABLE],
            sandbox_port=ports[SANDBOX_PORT_VARIABLE],
        )


def port_in_use_message(port: int, variable: str) -> str:
    return f"port {port} is already in use; set {variable} to a free port"
