"""The endurance pages of the characterisation tests: what each phase wrote, the drive's own
wear counters where it reports them, and DWPD on its write amplification basis."""

from __future__ import annotations

from iolab.core.cellschema import CellRow
from iolab.core.units import eng
from iolab.figures.endurance import endurance
from iolab.pages.report.model import Page, Table
from iolab.pages.report.rundata import RunData
from iolab.pages.report.sections import table_pages
from iolab.targets import wear

NOT_REPORTED = "not reported"


def _drive_row(
    name: str, rows: list[CellRow], counted: tuple[int | None, int | None, str]
) -> tuple[str, str, str, str]:
    host, media, _ = counted
    host_text = eng(host, "B") if host is not None else eng(sum(r.write_bytes for r in rows), "B") + " (fio)"
    waf = f"{media / host:.2f}" if host and media is not None else NOT_REPORTED
    return (name, host_text, eng(media, "B") if media is not None else NOT_REPORTED, waf)


def endurance_rows(run: RunData) -> list[tuple[str, str, str, str]]:
    """(phase, host writes, media writes, WAF): from the drive's own counters read before and
    after the phase (targets/wear.py) where it reports them, else from the engine's host and
    flash write counters (the simulator); what neither has says 'not reported'."""
    out = []
    groups = [("preconditioning", list(run.preconditioning))] + [(ph.phase.name, list(ph.rows)) for ph in run.phases]
    for name, rows in groups:
        if not rows:
            continue
        drive = wear.phase_writes(run.manifest.endurance.get(name, {}))
        if drive is not None:
            out.append(_drive_row(f"{name} (its purge and preconditioning included)", rows, drive))
            continue
        counted = [r for r in rows if "flash_write_bytes" in r.counters and "host_write_bytes" in r.counters]
        if not counted:
            out.append((name, eng(sum(r.write_bytes for r in rows), "B") + " (fio)", NOT_REPORTED, NOT_REPORTED))
            continue
        host = sum(r.counters["host_write_bytes"] for r in counted)
        flash = sum(r.counters["flash_write_bytes"] for r in counted)
        out.append((name, eng(host, "B"), eng(flash, "B"), f"{flash / host:.2f}" if host else "no writes"))
    return out


def endurance_pages(run: RunData) -> list[Page]:
    rows = endurance_rows(run)
    if not rows:
        return []
    e = endurance(run.manifest, run.phases, run.preconditioning)
    (pe, pe_src), (years, years_src), waf = e.pe, e.years, e.waf
    facts = [
        (
            "WAF the ratings rest on",
            f"{waf.value:.2f} over {eng(waf.host_bytes, 'B')} host writes; basis: {waf.basis}" if waf else NOT_REPORTED,
        )
    ]
    whole = run.write_amplification()
    if whole and waf and abs(whole[0] - waf.value) > 0.005:
        facts.append(("WAF over the whole run, for reference", f"{whole[0]:.2f} over {eng(whole[1], 'B')} host writes"))
    facts.append(("physical (flash) capacity", eng(e.physical, "B") if e.physical else NOT_REPORTED))
    facts.append(
        ("rated P/E cycles", f"{pe:,.0f} (source: {pe_src})" if pe else NOT_REPORTED + " (--pe-cycles N gives it)")
    )
    facts.append(
        (
            "warranty",
            f"{years:g} years (source: {years_src})" if years else NOT_REPORTED + " (--warranty-years Y gives it)",
        )
    )
    why = "" if e.tbw else " (needs the rated P/E cycles, a measured WAF and the flash capacity)"
    basis = f" (WAF {waf.value:.2f}, {waf.short})" if waf else ""
    facts.append(
        (
            "TBW = flash capacity × P/E ÷ WAF",
            f"{e.tbw / 1e12:,.1f} TB{' ' + e.of if e.of else ''}{basis}" if e.tbw else NOT_REPORTED + why,
        )
    )
    facts.append(
        ("DWPD over the warranty", f"{e.dwpd:.2f}{basis}" if e.dwpd else NOT_REPORTED + " (needs TBW and the warranty)")
    )
    drive = sorted({r["end"].get("source", "") for r in run.manifest.endurance.values() if r.get("end")})
    src = (
        "Source: results.db table cells (engine counters host_write_bytes, flash_write_bytes, op)"
        + (
            f"; manifest.json endurance (the drive's counters before and after each phase: {'; '.join(drive)})"
            if drive
            else ""
        )
        + "."
    )
    return table_pages(
        "Endurance",
        [
            Table(
                "host writes and media writes per phase",
                ("phase", "host writes", "media writes", "WAF"),
                tuple(rows),
                src,
                run.store_links(),
            ),
            Table("endurance figures", ("figure", "value"), tuple(facts), src),
        ],
    )
