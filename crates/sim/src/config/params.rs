//! The parameter table: every parameter's name, unit and help, and the words a choice takes.

pub struct ParamDef {
    pub name: &'static str,
    pub unit: &'static str,
    pub help: &'static str,
    /// Allowed words for a choice parameter; empty for a number.
    pub choices: &'static [&'static str],
}

const fn p(name: &'static str, unit: &'static str, help: &'static str) -> ParamDef {
    ParamDef {
        name,
        unit,
        help,
        choices: &[],
    }
}
const fn c(name: &'static str, choices: &'static [&'static str], help: &'static str) -> ParamDef {
    ParamDef {
        name,
        unit: "",
        help,
        choices,
    }
}

const ON_OFF: &[&str] = &["on", "off"];
const LINKS: &[&str] = &["sata3", "sas6", "sas12", "pcie3x4", "pcie4x4"];

pub const SSD_PARAMS: &[ParamDef] = &[
    p("user_gb", "GB", "user (logical) capacity; give this or op"),
    p(
        "op",
        "ratio",
        "over-provisioning rho = (physical - user)/user; sets user capacity from the flash size",
    ),
    p("channels", "", "flash channels"),
    p("dies_per_channel", "", "dies on each channel"),
    p("planes", "", "planes per die (programmed together)"),
    p(
        "blocks_per_plane",
        "",
        "erase blocks per plane (= FTL superblocks)",
    ),
    p("pages_per_block", "", "pages per erase block"),
    p(
        "page_kib",
        "KiB",
        "flash page size (a multiple of the 4 KiB mapping unit)",
    ),
    p("t_read_us", "us", "page read time"),
    p("t_prog_us", "us", "page program time"),
    p("t_erase_us", "us", "block erase time"),
    p("channel_mbps", "MB/s", "transfer rate of one channel"),
    c("link", LINKS, "host link (sets link_mbps and duplex)"),
    p(
        "link_mbps",
        "MB/s",
        "host link bandwidth per direction (0 = from link)",
    ),
    p(
        "overhead_us",
        "us",
        "controller time per command on one core",
    ),
    p(
        "controller_cores",
        "",
        "controller cores processing commands in parallel (with the dies, channels and link they set the maximum IOPS)",
    ),
    p(
        "queue_slots",
        "",
        "commands the controller takes at once; more wait at the port in order, so IOPS stop growing past this queue depth (0 = no limit)",
    ),
    p(
        "write_core_us",
        "us",
        "controller time per write command after its data is buffered (mapping update): it does not delay the acknowledgement but keeps the core busy, so with overhead_us it sets the fresh-drive write IOPS",
    ),
    p(
        "core_by_lba_pct",
        "%",
        "share of commands taken by the core owning their LBA stripe (the rest by the first free core)",
    ),
    p(
        "time_spread_pct",
        "%",
        "spread of every NAND read, program and erase time and of the controller time (triangular, +/- this share)",
    ),
    p(
        "read_page_skew_pct",
        "%",
        "lower pages of a cell read in t_read_us x (1 - this share), upper pages x (1 + it): the two humps of a read latency histogram",
    ),
    p(
        "read_retry_pct",
        "%",
        "share of page reads that need 1 to 4 read retries (each another page read)",
    ),
    p(
        "buffer_kib",
        "KiB",
        "write buffer (0 = write-through)",
    ),
    p(
        "pace_pct",
        "%",
        "admission pacing: buffer occupancy at which the controller admits host data at the rate the buffer drains (0 = off: a unit enters as soon as a slot frees)",
    ),
    c(
        "plp",
        ON_OFF,
        "power-loss protection: the buffer is safe, so writes are acknowledged from it even with the write cache disabled",
    ),
    c(
        "gc",
        &["greedy", "fifo", "cost-benefit", "random"],
        "garbage-collection victim choice",
    ),
    c(
        "die_alloc",
        &["least-busy", "striped"],
        "which die a written unit goes to: the least busy with room (dynamic allocation), or in turn by address, a page per die (static striping, as simpler controllers do)",
    ),
    p(
        "gc_choices",
        "blocks",
        "greedy GC compares this many blocks drawn at random and collects the least valid (0 = every block: the least valid of all)",
    ),
    p(
        "gc_reserve",
        "blocks",
        "free FTL blocks below which foreground GC runs (>= 2; with gc_start_pct=0 keep 3: at 2 the host opens its next block with one free block, beside the GC copies' own, and waits for a whole collection)",
    ),
    p(
        "gc_start_pct",
        "%",
        "foreground GC starts, gently, when the free spare blocks fall below this share of the spare area (full speed at gc_reserve)",
    ),
    p(
        "gc_slice",
        "copies",
        "foreground GC runs in slices of this many page copies between host commands",
    ),
    p(
        "gc_copy_us",
        "us",
        "controller time per GC copy: a slice holds every core",
    ),
    p(
        "gc_switch_us",
        "us",
        "controller time to checkpoint the block tables after gc_switch_every collected victims: it holds every core, so the host command behind it waits (rare write outliers)",
    ),
    p(
        "gc_switch_every",
        "victims",
        "collected victims between two block-table checkpoints (gc_switch_us each)",
    ),
    p(
        "gc_pass_period_ms",
        "ms",
        "a periodic GC pass starts once per period of the drive's clock: a walk over the blocks in address order that empties each one holding invalid data, beside foreground GC (0 = none)",
    ),
    p(
        "gc_pass_ms",
        "ms",
        "how long each GC pass lasts (at most gc_pass_period_ms)",
    ),
    p(
        "gc_pass_pct",
        "%",
        "chunks the pass's walk copies per 100 chunks the host writes while it lasts: its extra work, so the depth of the per-second dips",
    ),
    p(
        "gc_pace_victims",
        "victims",
        "foreground GC copies at the average cost of about this many victims, not each victim's own, its free blocks taking up the difference (0 = each victim's own: per-second IOPS follow every victim's valid data); UNVERIFIED, a firmware behaviour iolab assumes",
    ),
    c("bg_gc", ON_OFF, "garbage collection while the host is idle"),
    p(
        "bg_period_ms",
        "ms",
        "background GC bursts while the host is busy, one per period (0 = only when idle)",
    ),
    p(
        "bg_burst_ms",
        "ms",
        "flash time one background GC burst occupies",
    ),
    p(
        "bg_reserve_pct",
        "%",
        "background GC keeps this share of the spare blocks free",
    ),
    p(
        "idle_ms",
        "ms",
        "host idle time before background work starts",
    ),
    c(
        "compression",
        ON_OFF,
        "compressing controller: flash writes shrink with data entropy",
    ),
    p(
        "compress_floor",
        "ratio",
        "stored share of a fully compressible unit (entropy 0; at least 0.25, one 1 KiB chunk)",
    ),
    p(
        "compress_ceiling",
        "ratio",
        "stored share of a unit the controller cannot compress (at least 1: the compressor's headers and the parity it adds take flash, so incompressible data leaves less spare than the nominal over-provisioning)",
    ),
    p(
        "compress_limit",
        "entropy",
        "entropy from which the controller stores data uncompressed (the ratio curve flattens smoothly there)",
    ),
    p("slc_gb", "GB", "static SLC write cache (0 = none)"),
    p(
        "bits_per_cell",
        "bits",
        "bits per cell of the main flash (SLC blocks hold 1/bits as much)",
    ),
    p("slc_prog_us", "us", "SLC page program time"),
    p("slc_read_us", "us", "SLC page read time"),
    p(
        "write_path_us",
        "us",
        "time a write takes after its command's overhead_us to be acknowledged: its data fetched from host memory into the DRAM buffer and entered in the write cache (by DMA: no core is held, so IOPS are not capped by it)",
    ),
];

pub const HDD_PARAMS: &[ParamDef] = &[
    p("capacity_gb", "GB", "capacity"),
    p("rpm", "rev/min", "spindle speed"),
    p("track_seek_ms", "ms", "track-to-track seek"),
    p("full_seek_ms", "ms", "full-stroke seek"),
    p(
        "seek_knee",
        "fraction",
        "seek distance (share of the stroke) where the curve turns from square-root to linear",
    ),
    p("outer_mbps", "MB/s", "media rate at the outer edge (LBA 0)"),
    p("inner_mbps", "MB/s", "media rate at the inner edge"),
    p(
        "cache_mib",
        "MiB",
        "read cache (recently transferred data is served without media access)",
    ),
    p("ncq", "", "commands the drive reorders (1 = in order)"),
    p(
        "age_weight_pct",
        "%",
        "command aging: this share of the time a host command has waited counts off its positioning time when the drive picks the next command (0.5: 5 ms per second waited; 0 = none, shortest positioning time alone, which can leave a command waiting until the queue empties)",
    ),
    p("overhead_us", "us", "command overhead"),
    p(
        "time_spread_pct",
        "%",
        "spread of the controller time of a write taken into the write cache and of a destage's start (triangular, +/- this share)",
    ),
    c("link", LINKS, "host link"),
    p(
        "link_mbps",
        "MB/s",
        "host link bandwidth (unset: from link)",
    ),
];
