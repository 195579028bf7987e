"""Cold start: each function's handler import in a fresh interpreter, as a ratio to a bare
``import boto3`` measured the same way in the same run (median CPU time of ``RUNS`` processes).

The function's folder and its layers are laid out as the build ships them: the layer's own
packages plus every distribution its requirements.txt pulls in (copied from this environment),
first on ``sys.path``, before the runtime's packages (boto3 and the standard library, which keep
their bytecode as Lambda's runtime does). Two layouts:
- ``source``: no ``__pycache__`` and the interpreter may not write one (``-B``), as on Lambda when
  the build ships no .pyc (/var/task and /opt are read-only): every import compiles its module;
- ``bytecode``: compiled with ``--invalidation-mode unchecked-hash``, as layers/herald/Makefile
  ships it; such .pyc files are used without comparing the source's timestamp.
The interpreter is the bench's own (Lambda runs the template's runtime): ratios travel better than
absolute times. ``python -X importtime`` of ApiFunction's handler adds where its import time goes.

"+ services" (compiled layout): the handler's import plus building the function's services, which
loads what its first request needs before any AWS call. The calls that build them are read from
the handler's source (its calls to what it imports from ``herald.composition``), so they follow the
code; every AWS endpoint points at a closed port, so a call to AWS would fail the probe.

"Libraries only" (compiled layout): ApiFunction's libraries imported from its layer without any
Herald module, each step adding to the one before: the floor its import cannot go below while it
keeps Powertools' request validation, measured like every other probe in the same run.

"after its libraries" (compiled layout): one process imports the floor's libraries first, untimed,
then ApiFunction's handler, timed: Herald's own part measured directly rather than as the difference
of two medians of separate processes, with the objects it adds to the process's heap.
"""

from __future__ import annotations

import ast
import compileall
import dataclasses
import json
import py_compile
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from herald_local.awslambda.functions import runner_environment
from herald_local.cloudformation.topology import FunctionSpec

RUNS = 9
LAYOUTS = ("source", "bytecode")
BASELINE = "import boto3"
SERVICES = " + services"
COMPOSITION = "herald.composition"
RUNTIME_PACKAGE = "boto3"
UNUSED_ENDPOINT = "http://127.0.0.1:9"
LIBRARIES_ONLY = "libraries only: "
AFTER_LIBRARIES = " after its libraries"
FLOOR_OF = "ApiFunction"
LIBRARY_FLOOR = (
    (
        "Powertools HTTP resolver with request validation",
        "from aws_lambda_powertools.event_handler import APIGatewayHttpResolver\n"
        "APIGatewayHttpResolver(enable_validation=True)",
    ),
    ("+ botocore's session and client", "import botocore.session, botocore.client"),
    # The email address validator is not in it: the API imports it for the first email it checks.
    (
        "+ PynamoDB, Logger and Metrics",
        "import pynamodb.models, pynamodb.transactions\nfrom aws_lambda_powertools import Logger, Metrics",
    ),
)
_NO_BYTECODE = shutil.ignore_patterns("__pycache__", "*.pyc")
# Runs in the fresh interpreter: the build's folders first, then the runtime, then what the probe
# imports first (untimed), then the import. The cyclic garbage collector's pauses in it are timed
# too (CPU, and how many were full collections), and the tracked objects it leaves on the heap counted.
_PROBE = """
import gc, json, sys, time
paths, runtime, module, services, first = json.loads(sys.argv[1])
sys.path[:0] = paths
sys.path.append(runtime)
exec(first, {})
# What a handler's import froze (herald.composition.startup) is out of gc.get_objects(), not gone.
def tracked():
    return len(gc.get_objects()) + gc.get_freeze_count()
objects = tracked()
collector = {"cpu": 0.0, "full": 0, "started": 0.0}
def timed(phase, info):
    if phase == "start":
        collector["started"] = time.process_time()
    else:
        collector["cpu"] += time.process_time() - collector["started"]
        collector["full"] += info["generation"] == 2
gc.callbacks.append(timed)
cpu, wall = time.process_time(), time.perf_counter()
handler = __import__(module)  # the import statement's path, which -X importtime reports
for call in services:
    eval(call, vars(handler))
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
gc.callbacks.remove(timed)
print(json.dumps({
    "cpu": cpu, "wall": wall, "gc": collector["cpu"], "full_collections": collector["full"],
    "modules": len(sys.modules), "xray": "aws_xray_sdk" in sys.modules,
    "objects": tracked(), "objects_added": tracked() - objects,
}))
"""
_IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")


def _requirements(path: Path) -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line]


def distributions(requirements: list[Requirement]) -> list[metadata.Distribution]:
    """The installed distributions these requirements pull in (extras and markers honoured)."""
    found: dict[str, metadata.Distribution] = {}
    pending = list(requirements)
    while pending:
        requirement = pending.pop()
        name = requirement.name.lower().replace("_", "-")
        if name in found:
            continue
        found[name] = distribution = metadata.distribution(requirement.name)
        for line in distribution.requires or ():
            needed = Requirement(line)
            extras = requirement.extras or {""}
            if needed.marker is None or any(needed.marker.evaluate({"extra": extra}) for extra in extras):
                pending.append(needed)
    return list(found.values())


def _installed_files(requirements: list[Requirement]) -> Iterator[tuple[metadata.PackagePath, Path]]:
    """Each file the distributions installed beside the packages, with where it lies here."""
    for distribution in distributions(requirements):
        for file in distribution.files or ():
            if file.parts[0] != "..":
                yield file, Path(str(distribution.locate_file(file)))


def _copy_layer(layer_dir: Path, target: Path) -> None:
    """The layer's own packages and its requirements' files, without bytecode."""
    for package in layer_dir.iterdir():
        if (package / "__init__.py").is_file():
            shutil.copytree(package, target / package.name, ignore=_NO_BYTECODE)
    for file, installed in _installed_files(_requirements(layer_dir / "requirements.txt")):
        if "__pycache__" not in file.parts and file.suffix != ".pyc":
            (target / file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(installed, target / file)


def _link_runtime(target: Path) -> None:
    """What Lambda's Python runtime has besides the standard library (compiled), as links."""
    target.mkdir(parents=True)
    for distribution in distributions([Requirement(RUNTIME_PACKAGE)]):
        for top in {file.parts[0] for file in distribution.files or () if file.parts[0] != ".."}:
            if not (target / top).exists():
                (target / top).symlink_to(Path(str(distribution.locate_file(top))))


def composition_calls(handler_source: str) -> tuple[str, ...]:
    """The handler's calls to what it imports from the composition package, as source text (each
    once): evaluated in the handler's module, they build the function's services."""
    tree = ast.parse(handler_source)
    roots = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(COMPOSITION)
        for alias in node.names
    }
    calls = (
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in roots
    )
    return tuple(dict.fromkeys(calls))


@dataclasses.dataclass(frozen=True)
class Import:
    """What a probe imports, with which folders first on ``sys.path`` and which environment, the
    calls it then makes in the imported module, and the code it runs untimed before the import."""

    label: str
    module: str
    paths: tuple[str, ...]
    runtime: str
    environment: Mapping[str, str]
    services: tuple[str, ...] = ()
    first: str = ""


class BuildLayouts:
    """The functions and layers copied once per layout into a temporary folder."""

    def __init__(self, functions: list[FunctionSpec], root: Path) -> None:
        self._functions = functions
        self._root = root

    def lay_out(self) -> None:
        source = self._root / "source"
        floor = source / "floor"
        floor.mkdir(parents=True)
        for step in range(len(LIBRARY_FLOOR)):
            statements = (code for _, code in LIBRARY_FLOOR[: step + 1])
            (floor / f"library_floor_{step}.py").write_text("\n".join(statements) + "\n")
        for spec in self._functions:
            shutil.copytree(spec.code_dir, source / "functions" / spec.logical_id, ignore=_NO_BYTECODE)
        for layer in sorted({layer for spec in self._functions for layer in spec.layer_dirs}):
            _copy_layer(Path(layer), source / "layers" / Path(layer).name)
        _link_runtime(self._root / "runtime")
        bytecode = self._root / "bytecode"
        shutil.copytree(source, bytecode)
        compileall.compile_dir(
            bytecode, quiet=2, workers=0, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
        )

    def imports(self, layout: str, region: str) -> list[Import]:
        base, runtime = self._root / layout, str(self._root / "runtime")
        probes = [
            Import(BASELINE, "boto3", (), runtime, {"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": region})
        ]
        for spec in self._functions:
            paths = (
                str(base / "functions" / spec.logical_id),
                *(str(base / "layers" / Path(layer).name) for layer in spec.layer_dirs),
            )
            environment = runner_environment(spec, UNUSED_ENDPOINT, region, UNUSED_ENDPOINT)
            module = spec.handler.rsplit(".", 1)[0]
            probe = Import(spec.logical_id, module, paths, runtime, environment)
            probes.append(probe)
            if layout == "bytecode":
                calls = composition_calls((Path(spec.code_dir) / f"{module}.py").read_text())
                probes.append(dataclasses.replace(probe, label=probe.label + SERVICES, services=calls))
            if layout == "bytecode" and spec.logical_id == FLOOR_OF:
                probes.extend(self._library_floor(probe, base))
                probes.append(after_libraries(probe))
        return probes

    @staticmethod
    def _library_floor(function: Import, base: Path) -> Iterator[Import]:
        """The function's layers and the floor's modules, without the function's own folder."""
        paths = (str(base / "floor"), *function.paths[1:])
        for step, (label, _) in enumerate(LIBRARY_FLOOR):
            yield dataclasses.replace(
                function, label=LIBRARIES_ONLY + label, module=f"library_floor_{step}", paths=paths
            )


def after_libraries(function: Import) -> Import:
    """The function's import in a process that has imported the floor's libraries already."""
    first = "\n".join(code for _, code in LIBRARY_FLOOR)
    return dataclasses.replace(function, label=function.label + AFTER_LIBRARIES, first=first)


def _run(probe: Import, *options: str) -> subprocess.CompletedProcess[str]:
    argument = json.dumps([list(probe.paths), probe.runtime, probe.module, list(probe.services), probe.first])
    with tempfile.TemporaryDirectory() as cwd:
        return subprocess.run(
            [sys.executable, "-I", "-S", "-B", *options, "-c", _PROBE, argument],
            env=dict(probe.environment),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )


def measure_import(probe: Import) -> dict[str, Any]:
    measured: dict[str, Any] = json.loads(_run(probe).stdout.splitlines()[-1])
    return measured


def import_profile(probe: Import, top: int = 12) -> dict[str, Any]:
    """``python -X importtime`` of the probe's module: its subtree, by package and by direct import."""
    lines = [_IMPORTTIME.match(line) for line in _run(probe, "-X", "importtime").stderr.splitlines()]
    entries = [(int(m[1]), int(m[2]), len(m[3]) // 2, m[4]) for m in lines if m]
    end = max(index for index, entry in enumerate(entries) if entry[3] == probe.module and entry[2] == 0)
    start = end
    while start > 0 and entries[start - 1][2] > 0:
        start -= 1
    subtree, total = entries[start:end], entries[end][1]
    by_package: defaultdict[str, int] = defaultdict(int)
    for self_us, _, _, name in subtree:
        by_package[name.split(".", 1)[0]] += self_us
    return {
        "module": probe.module,
        "total_ms": total / 1000,
        "self_ms": entries[end][0] / 1000,
        "by_package": _ranked(by_package, top),
        "direct_imports": _ranked(
            {name: cumulative for _, cumulative, depth, name in subtree if depth == 1}, top
        ),
    }


def _ranked(microseconds: Mapping[str, int], top: int) -> list[dict[str, Any]]:
    ranked = sorted(microseconds.items(), key=lambda pair: -pair[1])[:top]
    return [{"name": name, "ms": us / 1000} for name, us in ranked]


def _interleaved(probes: list[Import]) -> Iterator[Import]:
    """Round by round, so that drift in machine load touches every probe alike."""
    for _ in range(RUNS):
        yield from probes


def measure_cold_starts(
    functions: list[FunctionSpec], region: str, advance: Callable[[str], None]
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="herald-cold-start-") as folder:
        layouts = BuildLayouts(functions, Path(folder))
        layouts.lay_out()
        results: dict[str, Any] = {"runs": RUNS, "baseline": BASELINE, "layouts": {}}
        for layout in LAYOUTS:
            probes = layouts.imports(layout, region)
            samples: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
            for probe in _interleaved(probes):
                advance(f"{layout}: {probe.label}")
                samples[probe.label].append(measure_import(probe))
            results["layouts"][layout] = _summary(samples)
        api = next(probe for probe in layouts.imports("bytecode", region) if probe.label == "ApiFunction")
        advance("python -X importtime: ApiFunction")
        results["api_import_profile"] = import_profile(api)
    return results


def _median(runs: list[dict[str, Any]], measure: Callable[[dict[str, Any]], float]) -> float:
    return statistics.median(measure(sample) for sample in runs)


def _without_collector(sample: dict[str, Any]) -> float:
    return float(sample["cpu"] - sample["gc"])


def _summary(samples: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians per probe; ``*_without_gc``: the import's CPU less the collector's pauses in it. A full
    collection fires once a process's objects pass a threshold, in whichever import gets there."""
    baseline = _median(samples[BASELINE], lambda sample: sample["cpu"])
    baseline_without_gc = _median(samples[BASELINE], _without_collector)
    return {
        label: {
            "cpu_ms": 1000 * _median(runs, lambda sample: sample["cpu"]),
            "wall_ms": 1000 * _median(runs, lambda sample: sample["wall"]),
            "ratio_to_boto3": _median(runs, lambda sample: sample["cpu"]) / baseline,
            "gc_ms": 1000 * _median(runs, lambda sample: sample["gc"]),
            "full_collections": _median(runs, lambda sample: sample["full_collections"]),
            "ratio_to_boto3_without_gc": _median(runs, _without_collector) / baseline_without_gc,
            "modules": runs[-1]["modules"],
            "objects": _median(runs, lambda sample: sample["objects"]),
            "objects_added": _median(runs, lambda sample: sample["objects_added"]),
            "xray_sdk_loaded": runs[-1]["xray"],
        }
        for label, runs in samples.items()
    }


def cold_start_steps(functions: list[FunctionSpec]) -> int:
    """How many probes ``measure_cold_starts`` runs (for the progress bar)."""
    return RUNS * (len(LAYOUTS) * (len(functions) + 1) + len(functions) + len(LIBRARY_FLOOR) + 1) + 1
