"""Names holding invisible format characters are refused where control characters are: a bidi
override (U+202E) printed a label, drive or host name reversed in the comparison's table and in
the terminal, and a zero-width space or an isolate made two names look alike or one lie."""

from __future__ import annotations

import re

import pytest

from .conftest import iolab
from .test_rwsw import workload  # noqa: F401  (the module-scoped capture analysed into wl/)

pytestmark = pytest.mark.integration

# each with the name `unicodedata` gives it, as the refusal says it
INVISIBLE = [
    ("\u202e", "RIGHT-TO-LEFT OVERRIDE"),
    ("\u200b", "ZERO WIDTH SPACE"),
    ("\u2066", "LEFT-TO-RIGHT ISOLATE"),
    ("\u2067", "RIGHT-TO-LEFT ISOLATE"),
    ("\u2068", "FIRST STRONG ISOLATE"),
    ("\u2069", "POP DIRECTIONAL ISOLATE"),
    ("\ufeff", "ZERO WIDTH NO-BREAK SPACE"),
]


def one_paragraph(p) -> str:
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stdout == "", p.stdout + p.stderr
    assert p.stderr.startswith("iolab: ") and "\n\n" not in p.stderr.strip(), p.stderr
    for ch, _ in INVISIBLE:
        assert ch not in p.stderr, "the character reached the terminal"
    return " ".join(p.stderr.split())


@pytest.mark.parametrize(("ch", "name"), INVISIBLE)
def test_a_label_with_an_invisible_format_character_is_refused(tmp_path, ch, name):
    label = f"ab{ch}cd"
    p = iolab("compare", "run-a", "run-b", "--label", label, "--label", "x", "--out", str(tmp_path / "cmp"))
    said = one_paragraph(p)
    code = f"\\u{ord(ch):04x}"
    assert said.startswith(
        f"iolab: --label 'ab{code}cd': holds an invisible format character ('{code}', {name}, at position 3); "
    ), said
    assert said.endswith(
        "nor invisible format characters (bidi overrides, zero-width spaces). Nothing was run or written."
    )
    assert not (tmp_path / "cmp").exists()


def test_a_published_drive_name_with_a_bidi_override_is_refused(tmp_path):
    f = tmp_path / "vendor.csv"
    f.write_text("drive,figure,value,unit\nVendor \u202eX1,ART RND 4KiB R/W 65/35,95,µs\n", encoding="utf-8")
    said = one_paragraph(iolab("compare", str(f)))
    assert (
        f"{f}, line 2, field 'drive': 'Vendor \\u202eX1' holds an invisible format character "
        "('\\u202e', RIGHT-TO-LEFT OVERRIDE, at position 8); a field may not hold control or invisible "
        "format characters." in said
    ), said


def test_a_hosts_file_field_with_a_zero_width_space_is_refused(tmp_path):
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[[host]]\naddress = "127.0.0.1"\nssh = "root@lab\\u200b1"\n', encoding="utf-8")
    p = iolab("fio-job", "iops", "--quick", "-t", f"file:{tmp_path}/t.img?size=4MiB", "--hosts-file", str(hosts))
    said = one_paragraph(p)
    assert "field 'ssh' 'root@lab\\u200b1': holds an invisible format character ('\\u200b', ZERO WIDTH SPACE" in said
    assert not (tmp_path / "t.img").exists()


def test_joiners_that_scripts_and_emoji_need_are_names_as_written(tmp_path):
    """ZWNJ and ZWJ write Persian, the Indic scripts and emoji: a label holding one is taken."""
    for label in ("می\u200cخواهم", "👩\u200d💻"):
        p = iolab("compare", "run-a", "run-b", "--label", label, "--label", "x", "--out", str(tmp_path / "cmp"))
        assert p.returncode != 0 and "invisible" not in p.stderr and "run-a" in " ".join(p.stderr.split()), p.stderr


@pytest.mark.parametrize(("ch", "name"), INVISIBLE)
def test_a_workload_name_with_an_invisible_format_character_is_refused_in_the_clis_words(workload, tmp_path, ch, name):
    # a composite.toml's name with a bidi override said "field 'name': expected a string without
    # control characters, got 'web\u202eabc'": another wording than every argument's and file
    # field's, and no control character in it; now the one text, with the file's line
    wl, runs = tmp_path / "wl", tmp_path / "runs"
    wl.mkdir()
    text = (workload / "wl" / "composite.toml").read_text()
    (wl / "composite.toml").write_text(re.sub(r'^name = ".*"$', f'name = "web{ch}abc"', text, count=1, flags=re.M))
    said = one_paragraph(iolab("run", "multi-wsat", "-w", str(wl), "--quick", "--runs-dir", str(runs)))
    code = f"\\u{ord(ch):04x}"
    assert said.startswith(
        f"iolab: {wl / 'composite.toml'}:7: [workload]: field 'name' 'web{code}abc': holds an invisible format "
        f"character ('{code}', {name}, at position 4); "
    ), said
    assert said.endswith(
        "nor invisible format characters (bidi overrides, zero-width spaces). Nothing was run or written."
    ), said
    assert not runs.exists()
