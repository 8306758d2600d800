"""Layer 11 of 12. May import: core. Imported by every layer above.

Targets: what is tested. Parsing target specs, device facts, safety checks, purge methods.

Public functions (the runner, the engines and the CLI call these):
  parse_target(spec[, elsewhere])     -> Target          (spec.py; elsewhere: read for another machine)
  device_facts(path)                  -> DeviceFacts     (facts.py; read-only, safe on any device)
  claim(target) / release(target)     one run per target at a time (lock.py)
  check_safe_to_write(target, allow_unsafe, allow_system_disk)
                                      -> overridden checks, or RefusedError   (safety.py)
  prepare_file(target)                -> what was done   (files.py: create/extend a file target, marked as iolab's)
  purge(target, method[, progress])   -> PurgeOutcome    (purge.py; method: one of PURGE_METHODS)
  set_write_cache(target, enabled)    -> what was done, for the manifest   (cache.py)
  restore_write_cache(target)         -> the drive's setting from before the run put back, or None
  unheld_write_cache(target)          -> why the setting this process made did not hold, or None

Each target kind (block, file, nbd, sim) is registered with its hooks for these (kinds.py,
registry.py); a target of an unregistered kind is refused. Everything that touches the host
(external tools, sysfs, /proc, exclusive opens) goes through host.py, the one place unit tests
fake.
"""

from iolab.targets import registry as _registry  # noqa: F401  (registers the built-in kinds)
from iolab.targets.cache import restore_write_cache, set_write_cache, unheld_write_cache
from iolab.targets.facts import device_facts, parse_hdparm_identify, parse_nvme_id_ctrl, parse_smartctl_info
from iolab.targets.files import MARK_XATTR, created_by_iolab, mark_created, prepare_file
from iolab.targets.host import CommandResult, run_command
from iolab.targets.kinds import KINDS, Kind, kind_of, register
from iolab.targets.lock import claim, held, release
from iolab.targets.model import (
    ALLOW_SYSTEM_DISK,
    ALLOW_UNSAFE,
    DeviceFacts,
    Elsewhere,
    Problem,
    PurgeOutcome,
    Target,
    TargetKind,
)
from iolab.targets.purge import PURGE_METHODS, AtaSecurity, parse_ata_security, parse_sanitize_log, purge
from iolab.targets.safety import check_safe_to_write
from iolab.targets.spec import parse_target

__all__ = [
    "ALLOW_SYSTEM_DISK",
    "ALLOW_UNSAFE",
    "KINDS",
    "MARK_XATTR",
    "PURGE_METHODS",
    "AtaSecurity",
    "CommandResult",
    "DeviceFacts",
    "Elsewhere",
    "Kind",
    "Problem",
    "PurgeOutcome",
    "Target",
    "TargetKind",
    "check_safe_to_write",
    "claim",
    "created_by_iolab",
    "device_facts",
    "held",
    "kind_of",
    "mark_created",
    "parse_ata_security",
    "parse_hdparm_identify",
    "parse_nvme_id_ctrl",
    "parse_sanitize_log",
    "parse_smartctl_info",
    "parse_target",
    "prepare_file",
    "purge",
    "register",
    "release",
    "restore_write_cache",
    "run_command",
    "set_write_cache",
    "unheld_write_cache",
]
