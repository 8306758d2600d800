"""What the delimited text formats share: the SQL shape of a reader (fields -> checks ->
values), field labels for range errors, scaled times, SCSI opcodes, and the device number
the writers take from a device name."""

from __future__ import annotations

from iolab.traces.sqltext import Field, check_fields, csv_fields, header_skip, lines_sql, ws_fields

# A writer's device number: the digits a device name ends with ('asu3' -> 3), else 0.
DEVICE_NUMBER = "coalesce(TRY_CAST(regexp_extract(device, '(\\d+)$', 1) AS INTEGER), 0)"


# The device as a comma-separated writer writes it: a name with a comma (Linux's major,minor
# "8,16", as every capture and blkparse/blktrace/FIU import names it) written as is added a field,
# and the exported file no longer read (in iolab or any tool) though the export said nothing;
# major:minor is how lsblk and /sys/dev/block write it.
CSV_DEVICE = "replace(device, ',', ':')"


def delimited(
    path: str,
    fields: list[Field],
    values: dict[str, str],
    *,
    header: str | None,
    at_least: bool = False,
    ws: bool = False,
) -> str:
    """Common shape of the delimited formats. `values` maps trace-table columns to SQL over
    the split list `f` (process, latency_us and pid may be left out: NULL); it is only
    evaluated on good lines."""
    split = ws_fields() if ws else csv_fields()
    err = check_fields(fields, "f", "whitespace-separated" if ws else "comma-separated", at_least)
    skip = header_skip(header) if header else "false"
    # Values are computed on good data lines only (a CAST of a bad field would fail).
    cols = ", ".join(
        f"CASE WHEN err IS NULL AND kind = 'io' THEN {values.get(c, 'NULL')} END AS {c}"
        for c in ("time_ns", "device", "op", "offset_bytes", "size_bytes", "process", "latency_us", "pid")
    )
    return f"""
        WITH l AS ({lines_sql(path)}),
        s AS (SELECT ln, line, {split} AS f, {skip} AS hdr FROM l),
        c AS (SELECT ln, line, f, CASE WHEN hdr THEN NULL ELSE {err} END AS err,
                     CASE WHEN hdr THEN 'skip' ELSE 'io' END AS kind FROM s)
        SELECT ln, line, err, kind, {cols} FROM c
    """


def labels(fields: list[Field], **cols: int) -> dict[str, str]:
    """Numeric column -> 'field N (name)' of the field it is computed from."""
    return {c: f"field {i} ({fields[i - 1].name})" for c, i in cols.items()}


def scaled_time(v: str, unit_ns: int) -> str:
    """SQL: a time field in units of `unit_ns` ns -> ns (exact for whole numbers)."""
    return (
        f"CASE WHEN regexp_full_match(trim({v}), '[0-9]+') THEN TRY_CAST({v} AS HUGEINT) * {unit_ns}"
        f" ELSE TRY_CAST(round(TRY_CAST({v} AS DOUBLE) * {unit_ns}) AS HUGEINT) END"
    )


# SCSI opcodes (SBC): READ(10)/(16), WRITE(10)/(16), SYNCHRONIZE CACHE(10)/(16), UNMAP.
SCSI_READ, SCSI_WRITE, SCSI_SYNC, SCSI_UNMAP = (0x28, 0x88), (0x2A, 0x8A), (0x35, 0x91), (0x42,)


def scsi_op_sql(code: str) -> str:
    """SQL: a SCSI opcode (integer expression) -> the table's op."""

    def within(codes: tuple[int, ...]) -> str:
        return ", ".join(str(c) for c in codes)

    return (
        f"CASE WHEN {code} IN ({within(SCSI_READ)}) THEN 'read' WHEN {code} IN ({within(SCSI_WRITE)}) THEN 'write'"
        f" WHEN {code} IN ({within(SCSI_SYNC)}) THEN 'flush' WHEN {code} IN ({within(SCSI_UNMAP)}) THEN 'trim'"
        " ELSE 'other' END"
    )


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


__all__ = ["DEVICE_NUMBER", "delimited", "is_number", "labels", "scaled_time", "scsi_op_sql"]
