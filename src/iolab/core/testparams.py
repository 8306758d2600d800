"""A test's own parameters: what `iolab run TEST --set NAME=VALUE` may change.

Each test declares its parameters (`TestDef.params`) with a typed default, the text of its
help and where the default comes from; the values given on the command line travel in the
profile (`Profile.settings`, stored in the run's manifest and compared like the other profile
settings), and the test's plan builder reads them with `values(PARAMS, profile)`. A value
nobody declared, or one that does not parse, is refused before anything is written.

Where the default is a reviewer's choice or an UNVERIFIED reading of a specification, the
declaration says so (`source`), and `parameter_rows` prints the choice on the report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iolab.core.errors import IolabError
from iolab.core.percentages import SHARES, number, read_percent, refuse_fraction_like
from iolab.core.plan import MAX_CELL_SECONDS, MAX_MULTIPLE, MAX_ROUNDS
from iolab.core.units import GROUPED, duration, grouped_number, parse_duration, parse_size, share_text
from iolab.core.usertext import check_text
from iolab.core.workload import MAX_QUEUE_DEPTH, MAX_THREADS

if TYPE_CHECKING:
    from iolab.core.plan import Profile


@dataclass(frozen=True)
class Param:
    """One parameter of a test. `parse` turns command-line text into the typed value (raising
    ValueError with the reason); `show` prints a value for the report."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any]
    show: Callable[[Any], str] = str
    source: str = ""  # where the default comes from, e.g. "published reviews", "UNVERIFIED: impl."
    # The value a --quick run uses unless the parameter is set: a constant, or a function of the
    # profile and the values of the parameters declared before it. None: the default.
    quick: Any = None
    # (another parameter, its value): this one acts only with it (check_acting refuses it else)
    only_with: tuple[str, Any] | None = None

    def read(self, text: str, test: str) -> Any:
        try:
            return self.parse(text.strip())
        except (ValueError, IolabError) as e:
            # the parser's own sentence may end with its full stop: one, not two. The help is
            # written to follow a name, as `iolab tests TEST` lists it (many start in lower case,
            # some with a name such as fio): a sentence of its own begins with the parameter's.
            raise IolabError(
                f"{setting(self.name, text)} (test {test}): {str(e).rstrip('.')}. Parameter {self.name}: "
                f"{self.help} (default {self.show(self.default)}). Nothing was run or written."
            ) from None


# Parameters that have an option of their own beside --set: a refusal names both, as the user
# may have typed either.
OWN_OPTION = {"pe_cycles": "--pe-cycles", "warranty_years": "--warranty-years"}


def setting(name: str, text: str | None = None) -> str:
    """How a refusal names a setting: '--set NAME=VALUE', or for a parameter with an option of
    its own '--warranty-years VALUE (--set warranty_years)'."""
    value = f"={text!r}" if text is not None else ""
    own = OWN_OPTION.get(name)
    if own is None:
        return f"--set {name}{value}"
    return f"{own}{' ' + repr(text) if text is not None else ''} (--set {name}{value})"


# -- parsers: each raises ValueError saying what it needs -------------------------------------


# No count a test takes comes near it; beyond it numbers overflow the engines' integers.
MAX_WHOLE = 2**31 - 1


def whole(text: str, least: int = 1, most: int = MAX_WHOLE, zero: str = "") -> int:
    """A whole number from `least` to `most`, said in the refusal as the parameter takes it
    (`zero`: what 0 means, for a parameter where 0 is 'not given')."""
    s = text.strip()
    if not (re.fullmatch(r"[-+]?[0-9]+", s) or (re.fullmatch(r"[-+]?[0-9,_]+", s) and grouped_number(s) is not None)):
        # one value in ASCII digits: a list (1,32) is not read as its digits run together (132);
        # the grouping advice only for a value that has a comma or underscore to be told about
        advice = f" ({GROUPED}; one value, not a list)" if re.search(r"[,_]", s) else ""
        raise ValueError(f"give a whole number{advice}")
    v = int(s.replace(",", "").replace("_", ""))
    if not least <= v <= most:
        raise ValueError(f"give a whole number from {least:,}{f' ({zero})' if zero else ''} to {most:,}")
    return v


def _int(text: str) -> int:
    """One whole number of a list in ASCII digits (1_000 allowed): int() also read ٣ as 3."""
    if not re.fullmatch(r"[-+]?[0-9]+(?:_[0-9]+)*", text):
        raise ValueError(text)
    return int(text)


def positive_int(text: str) -> int:
    return whole(text)


# The cells one phase may plan: every cell is built, printed by `plan` and stored, so a count no
# test can mean (bursts=99999999) must be refused before the plan is built, not exhaust memory
# building it. An hour of one-second intervals, ten times the PTS's longest phase (360 bursts).
MAX_PHASE_CELLS = 3_600


def cell_count(text: str) -> int:
    """A count of one phase's cells (bursts, intervals of a round)."""
    return whole(text, 1, MAX_PHASE_CELLS)


def queue_depth(text: str) -> int:
    """A queue depth: at most what a workload takes (workload.MAX_QUEUE_DEPTH), refused here
    with the parameter's name rather than when the plan's workload is built."""
    return whole(text, 1, MAX_QUEUE_DEPTH)


def thread_count(text: str) -> int:
    return whole(text, 1, MAX_THREADS)


# Rated endurance and warranty, the inputs of TBW and DWPD: SLC flash is rated near 100,000 P/E
# cycles and drive warranties run 1-5 years; ten and twenty times those are no drive's rating
# but a slip (1e300 years printed a DWPD of 0 beside a real drive's figures).
MAX_PE_CYCLES = 1_000_000
MAX_WARRANTY_YEARS = 100.0


def count_or_zero(text: str) -> int:
    """A count where 0 means 'not given' (a flash's rated P/E cycles)."""
    return whole(text, 0, MAX_PE_CYCLES, zero="not given")


def number_or_zero(text: str) -> float:
    """A number of years above 0, or 0 for 'not given' (a warranty)."""
    need = f"give 0 (not given) or a number of years greater than 0 and at most {MAX_WARRANTY_YEARS:g}"
    try:
        v = number(text)
    except ValueError:
        raise ValueError(need) from None
    if v == 0:  # "0.0" is as much 0 as "0"
        return 0.0
    if not math.isfinite(v) or not 0 < v <= MAX_WARRANTY_YEARS:
        raise ValueError(need)
    return v


def depth_list(text: str) -> tuple[int, ...]:
    """Queue depths, each one a workload takes (bounded_list), ascending."""
    return bounded_list(text, 1, MAX_QUEUE_DEPTH, "queue depths")


def thread_list(text: str) -> tuple[int, ...]:
    """Thread counts, each one a workload takes (bounded_list), ascending."""
    return bounded_list(text, 1, MAX_THREADS, "thread counts")


def bounded_list(text: str, least: int, most: int, what: str) -> tuple[int, ...]:
    """Distinct whole numbers from `least` to `most`, low → high as int_list takes them or high →
    low (the order a test that runs them so prints its default in), returned ascending: the
    caller runs them in its own order. Every refusal says the one range, whichever rule the text
    broke (int_list's own "at least 0" would contradict a `least` of 1)."""
    values = _either_order(text.replace(" ", ""))
    if values is None:
        raise ValueError(
            f"give distinct {what} from {least:,} to {most:,}, separated by commas, low → high or high → low "
            "(or START:STEP:STOP)"
        )
    if values[0] < least or values[-1] > most:
        raise ValueError(f"give {what} from {least:,} to {most:,}")
    return values


def _either_order(text: str) -> tuple[int, ...] | None:
    """int_list of the text, or of its items high → low; None when it reads neither way."""
    for form in (text, ",".join(reversed(text.split(",")))):
        try:
            return int_list(form)
        except ValueError:
            pass
    return None


def round_count(text: str) -> int:
    """A test's number of rounds: bounded as --max-rounds is (plan.MAX_ROUNDS), for the same reason."""
    return whole(text, 1, MAX_ROUNDS)  # one range for 0 and for 1,001 alike


def positive_float(text: str) -> float:
    try:
        v = number(text)
    except ValueError:
        raise ValueError("give a number") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError("give a finite number greater than 0")
    return v


def capacity_multiple(text: str) -> float:
    """A volume to write, × the tested capacity: bounded as --precondition-factor is
    (plan.MAX_MULTIPLE), for the same reason (1e300 × capacity is no byte count)."""
    try:
        v = number(text)
    except ValueError:
        raise ValueError("give a number") from None
    if not math.isfinite(v) or not 0 < v <= MAX_MULTIPLE:  # one range said for 0, inf and 1e300 alike
        raise ValueError(f"give a number greater than 0 and at most {MAX_MULTIPLE:,} (× the tested capacity)")
    return v


def as_percent(params: Iterable[Param], settings: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Settings as a run stores them: each share with its '%' ('5' -> '5%'), so a stored bare
    share is always one of a run from before the rule (legacy_shares)."""
    shares = {p.name for p in params if p.parse in SHARES}
    return tuple((k, v if k not in shares or v.strip().endswith("%") else f"{v.strip()}%") for k, v in settings)


def legacy_shares(params: Iterable[Param], settings: Iterable[Iterable[str]]) -> tuple[tuple[str, str], ...]:
    """A stored run's settings, read as the run read them: a bare share was a fraction ('0.05' was
    5 %) in the runs stored before a bare number became a percentage; runs since store it with its
    '%' (as_percent). Reading an old run must not make its 5 % a 0.05 %."""
    shares = {p.name for p in params if p.parse in SHARES}
    out = []
    for k, v in ((str(k), str(v)) for k, v in settings):
        if k in shares and not v.strip().endswith("%"):
            try:
                # every digit stored (:g kept six: 0.123456789 read as 12.3457 %), no float noise
                v = f"{float(v) * 100:.12g}%"
            except ValueError:
                pass  # refused as it reads, naming the text stored
        out.append((k, v))
    return tuple(out)


def settings_meaning(params: Iterable[Param], settings: Iterable[Iterable[str]]) -> tuple[tuple[str, Any], ...]:
    """What a run's stored settings mean, for telling runs apart: each declared parameter's value as
    the run read it, so a share stored before the rule ('0.2') is the 20 % a run since stores as
    '20%' (legacy_shares), and '20%' is '20.0%'; a setting not declared, or one that no longer
    reads, by its text."""
    params = tuple(params)
    declared = {p.name: p for p in params}
    out: list[tuple[str, Any]] = []
    for k, v in legacy_shares(params, settings):
        try:
            out.append((k, declared[k].read(v, "") if k in declared else v))
        except IolabError:
            out.append((k, v))
    return tuple(sorted(out, key=lambda kv: kv[0]))


def seconds(text: str) -> float:
    """A test's duration: each becomes a workload's time, a warm-up or an idle, which the plan holds
    to 24 h (plan.MAX_CELL_SECONDS); refused here, naming the parameter, rather than by the plan's
    check of a workload it built from it (or, for a phase built during the run, after a run was stored)."""
    v = parse_duration(text, "duration")
    if not math.isfinite(v) or not 0 < v <= MAX_CELL_SECONDS:
        raise ValueError(
            f"give a duration greater than 0 and at most {MAX_CELL_SECONDS / 3600:g} h (e.g. 500ms, 60s, 2h)"
        )
    return v


def size(text: str) -> int:
    return parse_size(text, "size")


def int_list(text: str, least: int = 0) -> tuple[int, ...]:
    """'1,2,4,8' or 'START:STEP:STOP' (inclusive, e.g. 5000:5000:100000) -> ascending values,
    each at least `least` (one wording for -5 and for 0 where 0 means nothing)."""
    t = text.replace(" ", "")
    if ":" in t:
        try:
            start, step, stop = (_int(x) for x in t.split(":"))
        except ValueError:
            raise ValueError("give START:STEP:STOP as three whole numbers") from None
        if start < 1 or step < 1 or stop < start or stop > MAX_WHOLE:
            raise ValueError(f"START:STEP:STOP needs 1 ≤ START ≤ STOP ≤ {MAX_WHOLE:,} and STEP ≥ 1")
        count = (stop - start) // step + 1  # counted before it is built: 1:1:2000000000 is 2e9 values
        if count > 1000:
            raise ValueError(f"{count:,} values; at most 1,000")
        return tuple(range(start, stop + 1, step))
    items = _items(t)
    try:
        values = tuple(_int(x) for x in items)
    except ValueError:
        raise ValueError("give whole numbers separated by commas, or START:STEP:STOP") from None
    if not values or min(values) < least or list(values) != sorted(set(values)):
        raise ValueError(f"give ascending, distinct whole numbers of at least {least}")
    if values[-1] > MAX_WHOLE:
        raise ValueError(f"{values[-1]:,} is more than {MAX_WHOLE:,}")
    return values


def _items(text: str) -> list[str]:
    """A list's comma-separated items; an empty one (1,,4 or a trailing comma) is refused, not
    dropped: it is a value left out, and the list run would not be the one meant."""
    items = text.split(",")
    if "" in items:
        raise ValueError(f"{text!r} has an empty value between commas; give each value once (e.g. 1,2,4)")
    return items


def percent_list(text: str) -> tuple[int, ...]:
    """int_list of percentages: each from 0 to 100, with its '%' or without ('0%,50%' or '0,50')."""
    values = int_list(re.sub(r"\s*%\s*(?=[,:]|$)", "", text.strip()))
    if values[-1] > 100:
        raise ValueError(f"{values[-1]} % is more than 100 %; give percentages from 0 to 100")
    return values


# the parameters whose value is a percentage: one rule for how each is written (core/percentages.py)
PERCENTAGES: tuple[Callable[[str], Any], ...] = (*SHARES, read_percent, percent_list)


def size_list(text: str) -> tuple[int, ...]:
    """'512,4k,64k,1m' -> bytes, ascending."""
    values = tuple(parse_size(x, "size") for x in _items(text.replace(" ", "")))
    if not values or list(values) != sorted(set(values)):
        raise ValueError("give ascending, distinct sizes separated by commas (e.g. 512,4k,64k,1m)")
    return values


def choice(*options: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"choose one of {', '.join(options)}")
        return text

    return parse


def show_list(values: Iterable[Any]) -> str:
    return ", ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in values)


def show_seconds(v: float) -> str:
    return duration(v)


show_percent = share_text  # a share parameter's value, as every share is printed


# -- the settings a run carries ---------------------------------------------------------------


def given(profile: Profile) -> dict[str, str]:
    return dict(profile.settings)


def _scaled(p: Param, profile: Profile, text: Mapping[str, str]) -> bool:
    return profile.quick and p.quick is not None and p.name not in text


def values(params: Iterable[Param], profile: Profile, test: str = "") -> dict[str, Any]:
    """The typed value of each declared parameter as the run uses it: the one given, else its
    quick value in a --quick run, else its default. Builders and reports both read these."""
    text = given(profile)
    out: dict[str, Any] = {}
    for p in params:
        if p.name in text:
            out[p.name] = p.read(text[p.name], test)
        elif _scaled(p, profile, text):
            out[p.name] = p.quick(profile, out) if callable(p.quick) else p.quick
        else:
            out[p.name] = p.default
    return out


def check_acting(declared: Mapping[str, Iterable[Param]], profile: Profile) -> None:
    """Refuse a parameter set where it acts in no test of a run about to start (`only_with`)."""
    text, idle = given(profile), dict[str, tuple[str, Param, Any] | None]()
    for test, params in declared.items():
        out = values(params := tuple(params), profile, test)
        for p in (p for p in params if p.name in text):
            other, wanted = p.only_with or (p.name, out[p.name])  # one without only_with always acts
            idle[p.name] = None if out[other] == wanted else idle.get(p.name, (test, p, out[other]))
    for test, p, now in filter(None, idle.values()):
        other, wanted = p.only_with or ("", "")
        raise IolabError(
            f"{setting(p.name, text[p.name])} (test {test}) acts only with {other}={wanted}, and {other} is {now} "
            f"here ({'as set' if other in text else 'by default'}): the run would take {p.name} and change nothing. "
            f"Set {other}={wanted} as well, or leave {p.name} out. Nothing was run or written."
        )


def stored_values(params: Iterable[Param], settings: Iterable[Iterable[str]], test: str = "") -> dict[str, Any]:
    """The values given in settings as a run stored them (the manifest's profile), else the
    defaults, for reports of runs that did not store their typed values (manifest plan.values)."""
    params = tuple(params)
    text = dict(legacy_shares(params, settings))
    return {p.name: (p.read(text[p.name], test) if p.name in text else p.default) for p in params}


def parameter_rows(params: Iterable[Param], profile: Profile, test: str = "") -> list[tuple[str, str]]:
    """Report rows: every parameter with its value and whether it was set or is the default
    (and where the default comes from)."""
    text = given(profile)
    vals = values(params, profile, test)
    rows = []
    for p in params:
        how = (
            "set with --set"
            if p.name in text
            else f"--quick; default {p.show(p.default)}"
            if _scaled(p, profile, text)
            else "default" + (f", {p.source}" if p.source else "")
        )
        rows.append((p.name, f"{p.show(vals[p.name])} ({how})"))
    return rows


def parse_settings(pairs: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """`--set NAME=VALUE` options -> settings, refusing malformed or repeated names."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = check_text(pair, "--set").partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise IolabError(
                f"--set {pair!r}: write NAME=VALUE (e.g. --set steps=5000:5000:100000); "
                "`iolab tests TEST` lists a test's parameters. Nothing was run or written."
            )
        if name in out:
            raise IolabError(f"--set {name}: given twice ({out[name]!r} and {value!r}). Nothing was run or written.")
        out[name] = value.strip()
    return tuple(sorted(out.items()))


def check_known(settings: Mapping[str, str], declared: Mapping[str, Iterable[Param]]) -> None:
    """Every set name must be a parameter of at least one test that will run; each value must
    parse for every test that declares it."""
    by_name: dict[str, list[tuple[str, Param]]] = {}
    for test, params in declared.items():
        for p in params:
            by_name.setdefault(p.name, []).append((test, p))
    for name, text in settings.items():
        if name not in by_name:
            known = sorted(by_name)
            offer = f"its parameters are {', '.join(known)}" if known else "it takes no parameters"
            raise IolabError(
                f"{setting(name)}: no test in this run has a parameter of that name ({offer}; "
                "`iolab tests TEST` lists them). Nothing was run or written."
            )
        for test, p in by_name[name]:
            # before the parser, whose "give whole numbers" answered a list of fractions (0,0.5,1)
            if p.parse in PERCENTAGES:
                about = f"Parameter {name}: {p.help} (default {p.show(p.default)})."
                refuse_fraction_like(setting(name), text, f"{setting(name, text)} (test {test})", about)
            p.read(text, test)
