"""Reading template.yaml and translating it from SAM to plain CloudFormation, offline.

samtranslator is the translator CloudFormation itself runs for ``Transform: AWS::Serverless``; it
needs no AWS account when given the bundled managed-policy map instead of an IAM client.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import boto3
import yaml
from samtranslator.internal.managed_policies import get_bundled_managed_policy_map
from samtranslator.model.exceptions import InvalidDocumentException
from samtranslator.parser.parser import Parser
from samtranslator.translator.translator import Translator
from samtranslator.utils.py27hash_fix import to_py27_compatible_template, undo_mark_unicode_str_in_template
from samtranslator.yaml_helper import intrinsics_multi_constructor

from herald_local.aws.regions import partition_name

# Local code folders are handed to samtranslator as objects of this made-up bucket (it accepts only
# S3 locations, as `sam validate` does) and read back from the translated Code/Content properties.
LOCAL_CODE_BUCKET = "herald-local-code"
_LOCAL_PATH_PROPERTIES = ("CodeUri", "ContentUri")

Template = dict[str, Any]


class TemplateError(ValueError):
    """template.yaml cannot be read or translated; the message says where."""


class _CloudFormationLoader(yaml.SafeLoader):
    """SafeLoader plus the short intrinsic tags (!Ref, !Sub, !GetAtt ...), without patching SafeLoader."""


_CloudFormationLoader.add_multi_constructor("!", intrinsics_multi_constructor)


def load_template(path: Path) -> Template:
    try:
        with path.open(encoding="utf-8") as stream:
            loaded = yaml.load(stream, Loader=_CloudFormationLoader)  # noqa: S506 - a SafeLoader subclass
    except (OSError, yaml.YAMLError) as exc:
        raise TemplateError(f"cannot read {path}: {exc}") from exc
    if not isinstance(loaded, dict) or not isinstance(loaded.get("Resources"), dict):
        raise TemplateError(f"{path} is not a CloudFormation template (no Resources)")
    return loaded


def _bundled_policies(partition: str) -> Callable[[], dict[str, str]]:
    """The managed-policy map samtranslator would otherwise list from IAM."""
    return lambda: get_bundled_managed_policy_map(partition) or {}


def _as_s3_location(properties: dict[str, Any]) -> None:
    for name in _LOCAL_PATH_PROPERTIES:
        value = properties.get(name)
        if isinstance(value, str) and not value.startswith("s3://"):
            properties[name] = f"s3://{LOCAL_CODE_BUCKET}/{value}"


def translate(sam_template: Template, parameter_values: Mapping[str, str], region: str) -> Template:
    """The CloudFormation template CloudFormation would run for ``sam_template``."""
    prepared = copy.deepcopy(sam_template)
    for resource in prepared["Resources"].values():
        _as_s3_location(resource.get("Properties") or {})
    for section in (prepared.get("Globals") or {}).values():
        _as_s3_location(section)
    if "Transform" not in prepared:
        return prepared
    parameters = dict(parameter_values)
    to_py27_compatible_template(prepared, parameters)
    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=region))
    policies = _bundled_policies(partition_name(region))
    try:
        translated = translator.translate(prepared, parameters, get_managed_policy_map=policies)
    except InvalidDocumentException as exc:
        raise TemplateError(f"samtranslator refused the template: {exc}") from exc
    result: Template = undo_mark_unicode_str_in_template(translated)
    return result


def local_folder(location: Any, root: Path) -> Path:
    """The project folder behind a translated ``Code``/``Content`` property."""
    if isinstance(location, dict) and location.get("S3Bucket") == LOCAL_CODE_BUCKET:
        return (root / str(location["S3Key"])).resolve()
    raise TemplateError(f"only local code folders can run locally, got {location!r}")
