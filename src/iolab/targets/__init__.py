"""Targets: what is tested. Parsing target specs, device facts, safety checks, purge methods.

Public functions (the runner, the engines and the CLI call these):
  parse_target(spec)                  -> Target          (spec.py)
  device_facts(path)                  -> DeviceFacts     (facts.py; read-only, safe on any device)
  check_safe_to_write(target, allow)  -> overridden checks, or RefusedError   (safety.py)
  prepare_file(target)                -> what was done   (files.py: create/extend a file target, marked as iolab's)
  purge(target, method[, progress])   -> PurgeOutcome    (purge.py; method: one of PURGE_METHODS)
  set_write_cache(target, enabled)    -> what was done, for the manifest   (cache.py)

Everything that touches the host (external tools, sysfs, /proc) goes through host.py, the one
place unit tests fake.
"""

from .cache import set_write_cache
from .facts import DeviceFacts, device_facts, parse_hdparm_identify, parse_nvme_id_ctrl, parse_smartctl_info
from .files import MARK_XATTR, created_by_iolab, mark_created, prepare_file
from .host import CommandResult, run_command
from .purge import PURGE_METHODS, AtaSecurity, PurgeOutcome, parse_ata_security, parse_sanitize_log, purge
from .safety import check_safe_to_write
from .spec import Target, TargetKind, parse_target

__all__ = [
    "MARK_XATTR", "PURGE_METHODS", "AtaSecurity", "CommandResult", "DeviceFacts", "PurgeOutcome", "Target",
    "TargetKind", "check_safe_to_write", "created_by_iolab", "device_facts", "mark_created", "parse_ata_security",
    "parse_hdparm_identify", "parse_nvme_id_ctrl", "parse_sanitize_log", "parse_smartctl_info", "prepare_file",
    "purge", "run_command", "set_write_cache",
]
