#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The attribution of latencies to SMIs and NMIs, and the platform and
machine facts beside them, in hwlat-scan: runs it against the fake
detector (fake_detector.py, this script playing the module) and proves
that:

- stream lines with smi_ns carry smi_count and smi_ns into the journal, the
  old line without smi_ns gives HWLAT_SMI_NS=unavailable, and "-" is the word
  "unavailable", never 0;
- the debugfs `smi` file decides availability: "unavailable: <reason>"
  makes every sample and the summary unavailable with that reason, and a
  module without the file (older than the tools) too, with a reason that
  says to rebuild it;
- the machine SMI total is exact: per-cpu mode with a broadcast SMI counted
  by both CPUs gives the per-CPU maximum (5, not 10), round-robin the sum,
  and the scan prints the per-CPU totals and the method;
- the platform facts come from the (fake) sysfs/proc root: clocksource,
  TSC stability, CPU model; the hypervisor from the real CPUID agrees with
  the kernel's hypervisor flag; HWLAT_CPUS_EXCLUDED follows the module's
  `cpus_excluded` only when the scan names no CPUs, and the printed
  platform line names them, one CPU too, and none when the list is empty;
- end to end, hwlat-report reads such a journal and says "unavailable"
  with the reason in text, JSON and SVG, never "0 SMIs".

TAP output; exit status 1 when any check failed.
"""
import json
import os
import platform
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_detector as fake  # noqa: E402

REPORT = os.path.abspath(os.environ.get("HWLAT_REPORT", "report/hwlat-report"))
SAMPLE_ID, SUMMARY_ID = fake.SAMPLE_ID, fake.SUMMARY_ID
ok = fake.ok


def new_line(seq, cpu, inner, smi, smi_ns, nmi=0, nmi_ns=0):
    """A stream line with smi_ns (the contract's "11 fields": sec and nsec count as two)."""
    return f"{seq} {cpu} 1700000000.{seq:09d} {inner} 0 1 {nmi} {nmi_ns} {smi} {smi_ns}\n"


def scan(tmp, lines, args=(), drain="", platform_root=None, **det):
    """One scan of `lines` (written after enable=1): returns (result,
    samples, summary) with the entries read back from a real journal."""
    d = fake.make_fake(tmp, **det)
    export = os.path.join(tmp, "export.txt")

    def script(w):
        w.write("".join(lines))
        w.flush()
        fake.wait_for(lambda: sum(1 for e in fake.parse_export(export)
                                  if e.get("MESSAGE_ID") == SAMPLE_ID) >= len(lines)
                      if os.path.exists(export) else False, 5)

    mod = fake.FakeModule(d, script, drain=drain)
    mod.start()
    extra = ["--platform-root", platform_root] if platform_root else []
    r = fake.run_scan(["--detector-dir", d, "--journal-export", export, "--duration", "1"]
                      + extra + list(args))
    mod.join(5)
    entries, jfile = fake.to_journal(export, os.path.join(tmp, "journal"))
    entries = entries or []
    samples = [e for e in entries if e.get("MESSAGE_ID") == SAMPLE_ID]
    summaries = [e for e in entries if e.get("MESSAGE_ID") == SUMMARY_ID]
    return r, samples, summaries[0] if summaries else {}, jfile


def fields(entry, *names):
    return {n: entry.get(n) for n in names}


def test_unavailable_end_to_end(tmp):
    """The module cannot count: "-" everywhere, the reason in the summary,
    and hwlat-report says so in text, JSON and SVG."""
    lines = [new_line(1, 0, 30000, "-", "-"), new_line(2, 1, 45000, "-", "-", nmi=1, nmi_ns=45000),
             new_line(3, 0, 20000, "-", "-")]
    r, samples, sm, jfile = scan(tmp, lines, smi="unavailable: not an Intel CPU\n")
    ok(r.returncode == 0, f"scan completed (exit {r.returncode})", r.stderr)
    ok([fields(s, "HWLAT_SMI_COUNT", "HWLAT_SMI_NS") for s in samples]
       == [{"HWLAT_SMI_COUNT": "unavailable", "HWLAT_SMI_NS": "unavailable"}] * 3,
       "'-' in the stream: HWLAT_SMI_COUNT and HWLAT_SMI_NS are 'unavailable'",
       [fields(s, "HWLAT_SMI_COUNT", "HWLAT_SMI_NS") for s in samples])
    want = {"HWLAT_SMI_TOTAL": "unavailable", "HWLAT_SMI_UNAVAILABLE": "not an Intel CPU",
            "HWLAT_SMI_METHOD": "sum", "HWLAT_NMI_TOTAL": "1"}
    ok(fields(sm, *want) == want, "summary: total unavailable, the module's reason, method sum",
       fields(sm, *want))
    ok("hwlat-scan: SMIs: unavailable (not an Intel CPU)\n" in r.stdout
       and " 0 SMIs" not in r.stdout, "the scan prints 'SMIs: unavailable (not an Intel CPU)'",
       r.stdout)

    if not os.access(REPORT, os.X_OK):
        ok(False, f"hwlat-report is built ({REPORT})")
        return
    env = dict(os.environ, TZ="UTC")
    svg = os.path.join(tmp, "r.svg")
    t = subprocess.run([REPORT, "--file", jfile, "--svg", svg], capture_output=True, text=True,
                       env=env)
    ok(t.returncode == 0 and "SMIs: unavailable (not an Intel CPU)" in t.stdout
       and "0 SMIs" not in t.stdout and "0 windows with SMIs" not in t.stdout,
       "report text: 'SMIs: unavailable (not an Intel CPU)', never 0", t.stdout + t.stderr)
    j = subprocess.run([REPORT, "--file", jfile, "--json"], capture_output=True, text=True,
                       env=env)
    try:
        doc = json.loads(j.stdout)
    except ValueError:
        doc = {}
    att = doc.get("summary", {}).get("attribution", {})
    ok(att.get("smi_total") == "unavailable" and att.get("smi_windows") == "unavailable"
       and att.get("smi_unavailable_reason") == "not an Intel CPU"
       and att.get("nmi_windows") == 1 and att.get("unexplained_windows") == 2,
       "report JSON: smi_total and smi_windows 'unavailable' with the reason", att)
    svgtext = open(svg).read() if os.path.exists(svg) else ""
    ok("SMIs: unavailable (not an Intel CPU)" in svgtext,
       "report SVG: 'SMIs: unavailable (not an Intel CPU)'", svgtext[-1500:])


def test_old_module(tmp):
    """A module without `smi` writing the old line (no smi_ns) with 0."""
    lines = [fake.line(1, 0, 1700000000, 1, 30000, 0, 1, 0, 0, 0),
             fake.line(2, 1, 1700000000, 2, 30000, 0, 1, 0, 0, 3)]
    r, samples, sm, _ = scan(tmp, lines, smi=None)
    ok(r.returncode == 0 and [fields(s, "HWLAT_SMI_COUNT", "HWLAT_SMI_NS") for s in samples]
       == [{"HWLAT_SMI_COUNT": "unavailable", "HWLAT_SMI_NS": "unavailable"}] * 2,
       "old module (no smi file): its counts are not used, samples say 'unavailable'",
       [fields(s, "HWLAT_SMI_COUNT", "HWLAT_SMI_NS") for s in samples])
    ok(sm.get("HWLAT_SMI_TOTAL") == "unavailable"
       and sm.get("HWLAT_SMI_UNAVAILABLE", "").startswith(
           "the hwlat_detector module is too old to say whether it can count SMIs")
       and "dkms autoinstall" in sm.get("HWLAT_SMI_UNAVAILABLE", ""),
       "old module: summary says it is too old and how to rebuild it", sm)


def test_ten_field_line(tmp):
    """A module with `smi` but the old line: smi_ns unavailable."""
    lines = [fake.line(1, 0, 1700000000, 1, 30000, 0, 1, 0, 0, 2)]
    r, samples, sm, _ = scan(tmp, lines)
    ok(r.returncode == 0 and samples
       and fields(samples[0], "HWLAT_SMI_COUNT", "HWLAT_SMI_NS")
       == {"HWLAT_SMI_COUNT": "2", "HWLAT_SMI_NS": "unavailable"}
       and sm.get("HWLAT_SMI_TOTAL") == "2",
       "line without smi_ns: HWLAT_SMI_COUNT=2, HWLAT_SMI_NS=unavailable, total 2",
       (samples, sm))


def test_per_cpu_broadcast(tmp):
    """per-cpu mode: 5 broadcast SMIs raise both CPUs' counters: total 5."""
    lines = [new_line(1, 0, 90000, 2, 90000), new_line(2, 1, 91000, 2, 91000),
             new_line(3, 0, 95000, 3, 95000), new_line(4, 1, 94000, 3, 94000)]
    r, samples, sm, _ = scan(tmp, lines, args=["--mode", "per-cpu"])
    ok([fields(s, "HWLAT_SMI_COUNT", "HWLAT_SMI_NS") for s in samples][:1]
       == [{"HWLAT_SMI_COUNT": "2", "HWLAT_SMI_NS": "90000"}],
       "line with smi_ns: HWLAT_SMI_COUNT=2, HWLAT_SMI_NS=90000",
       [fields(s, "HWLAT_SMI_COUNT", "HWLAT_SMI_NS") for s in samples])
    want = {"HWLAT_MODE": "per-cpu", "HWLAT_SMI_TOTAL": "5", "HWLAT_SMI_METHOD": "max-per-cpu",
            "HWLAT_SMI_UNAVAILABLE": None}
    ok(fields(sm, *want) == want, "per-cpu, 5 SMIs on each of 2 CPUs: total 5 (max-per-cpu)",
       fields(sm, *want))
    ok("hwlat-scan: SMIs: machine total 5 (max-per-cpu); per CPU 0: 5, 1: 5\n" in r.stdout,
       "the scan prints the per-CPU totals and the method", r.stdout)


def test_round_robin_sum(tmp):
    lines = [new_line(1, 0, 90000, 2, 90000), new_line(2, 1, 91000, 3, 91000),
             new_line(3, 0, 15000, 0, 0, nmi=1, nmi_ns=15000)]
    r, samples, sm, _ = scan(tmp, lines, args=["--mode", "round-robin"])
    want = {"HWLAT_SMI_TOTAL": "5", "HWLAT_SMI_METHOD": "sum"}
    ok(fields(sm, *want) == want, "round-robin, 2 + 3 SMIs: total 5 (sum)", fields(sm, *want))
    ok("hwlat-scan: SMIs: machine total 5 (sum); per CPU 0: 2, 1: 3\n" in r.stdout,
       "the scan prints 'machine total 5 (sum); per CPU 0: 2, 1: 3'", r.stdout)


def put(root, path, text):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def host_hypervisor_flag():
    with open("/proc/cpuinfo") as f:
        for l in f:
            if l.startswith("flags"):
                return "hypervisor" in l.split(":", 1)[1].split()
    return False


def test_platform(tmp):
    root = os.path.join(tmp, "root")
    put(root, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Fake Xeon @ 2.0GHz\n"
        "flags\t\t: fpu tsc constant_tsc nonstop_tsc\n")
    cs = "sys/devices/system/clocksource/clocksource0/"
    put(root, cs + "current_clocksource", "kvm-clock\n")
    put(root, cs + "available_clocksource", "kvm-clock tsc hpet acpi_pm\n")
    dmi = "sys/class/dmi/id/"
    put(root, dmi + "sys_vendor", "Fake Vendor\n")
    put(root, dmi + "product_name", "Rack \x1b[31m9000\n")
    put(root, dmi + "bios_vendor", "Fake BIOS\n")
    put(root, dmi + "bios_version", "2.17.1\n")
    put(root, dmi + "bios_date", "03/14/2025\n")
    put(root, dmi + "board_name", "\n")
    put(root, "proc/cpuinfo", "processor\t: 0\nmodel name\t: Fake Xeon @ 2.0GHz\n"
        "microcode\t: 0xf0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n")
    put(root, "sys/devices/system/cpu/online", "0-7\n")
    sub = os.path.join(tmp, "a")
    os.mkdir(sub)
    r, _, sm, _ = scan(sub, [new_line(1, 0, 30000, 0, 0)], platform_root=root,
                       cpus_excluded="2-3\n")
    want = {"HWLAT_CPU_MODEL": "Fake Xeon @ 2.0GHz", "HWLAT_CLOCKSOURCE": "kvm-clock",
            "HWLAT_TSC_STABLE": "yes", "HWLAT_CPUS_EXCLUDED": "2-3"}
    ok(r.returncode == 0 and fields(sm, *want) == want,
       "platform facts from the fake root, cpus_excluded recorded", (fields(sm, *want), r.stderr))
    want = {"HWLAT_SYS_VENDOR": "Fake Vendor", "HWLAT_PRODUCT_NAME": "Rack \x1b[31m9000",
            "HWLAT_BOARD_VENDOR": "unavailable", "HWLAT_BOARD_NAME": "unavailable",
            "HWLAT_BIOS_VENDOR": "Fake BIOS", "HWLAT_BIOS_VERSION": "2.17.1",
            "HWLAT_BIOS_DATE": "03/14/2025", "HWLAT_MICROCODE": "0xf0", "HWLAT_CPU_COUNT": "8"}
    # journalctl gives a value with control bytes as a list of bytes
    got = {k: bytes(v).decode() if isinstance(v, list) else v
           for k, v in fields(sm, *want).items()}
    ok(got == want, "machine identity from the fake root", got)
    ok("hwlat-scan: machine: Fake Vendor Rack ?[31m9000, board unavailable unavailable, "
       "BIOS Fake BIOS 2.17.1 03/14/2025, microcode 0xf0, 8 CPUs\n" in r.stdout,
       "the scan prints the identity, control bytes as '?'", r.stdout)
    hv = sm.get("HWLAT_HYPERVISOR")
    if platform.machine() in ("x86_64", "i386", "i686"):
        ok(hv and hv != "unknown" and (hv != "none") == host_hypervisor_flag(),
           f"HWLAT_HYPERVISOR={hv} agrees with the kernel's hypervisor flag")
    else:
        ok(hv == "unknown", f"no CPUID on {platform.machine()}: HWLAT_HYPERVISOR={hv}")
    ok(f"hwlat-scan: platform: hypervisor {hv}, clocksource kvm-clock, TSC stable yes, "
       "CPUs left out of the default set 2-3\n" in r.stdout, "the scan prints the platform",
       r.stdout)

    put(root, cs + "available_clocksource", "kvm-clock hpet acpi_pm\n")
    sub = os.path.join(tmp, "b")
    os.mkdir(sub)
    r, _, sm, _ = scan(sub, [new_line(1, 0, 30000, 0, 0)], platform_root=root,
                       args=["--cpus", "0"], cpus_excluded="2-3\n")
    ok(sm.get("HWLAT_TSC_STABLE") == "no" and "HWLAT_CPUS_EXCLUDED" not in sm,
       "TSC not an available clocksource: 'no'; --cpus given: no HWLAT_CPUS_EXCLUDED",
       fields(sm, "HWLAT_TSC_STABLE", "HWLAT_CPUS_EXCLUDED"))

    sub = os.path.join(tmp, "c")
    os.mkdir(sub)
    r, _, sm, _ = scan(sub, [new_line(1, 0, 30000, 0, 0)],
                       platform_root=os.path.join(tmp, "nothing"), cpus_excluded="\n")
    want = {"HWLAT_CLOCKSOURCE": "unknown", "HWLAT_TSC_STABLE": "unknown",
            "HWLAT_CPU_MODEL": "unknown", "HWLAT_CPUS_EXCLUDED": "",
            "HWLAT_SYS_VENDOR": "unavailable", "HWLAT_PRODUCT_NAME": "unavailable",
            "HWLAT_BIOS_VENDOR": "unavailable", "HWLAT_BIOS_VERSION": "unavailable",
            "HWLAT_BIOS_DATE": "unavailable", "HWLAT_MICROCODE": "unavailable",
            "HWLAT_CPU_COUNT": "unavailable"}
    ok(fields(sm, *want) == want, "unreadable root: unknown, identity unavailable; "
       "empty cpus_excluded: empty field",
       fields(sm, *want))
    ok("left out of the default set" not in r.stdout,
       "empty cpus_excluded: the platform line names no CPUs left out", r.stdout)

    # One CPU left out: a list of one character is a list all the same.
    sub = os.path.join(tmp, "one-excluded")
    os.mkdir(sub)
    r, _, sm, _ = scan(sub, [new_line(1, 0, 30000, 0, 0)], cpus_excluded="3\n")
    ok(sm.get("HWLAT_CPUS_EXCLUDED") == "3" and
       ", CPUs left out of the default set 3\n" in r.stdout,
       "cpus_excluded '3': recorded and printed on the platform line",
       (fields(sm, "HWLAT_CPUS_EXCLUDED"), r.stdout))

    sub = os.path.join(tmp, "d")
    os.mkdir(sub)
    r, _, sm, _ = scan(sub, [new_line(1, 0, 30000, 0, 0)], cpus_excluded="banana\n")
    ok(r.returncode == 0 and "HWLAT_CPUS_EXCLUDED" not in sm
       and "cpus_excluded: expected a cpulist, read 'banana'" in r.stderr,
       "malformed cpus_excluded: named in a message, not recorded", r.stderr)


def test_man_page(_tmp):
    srcdir = os.environ.get("srcdir", ".")
    text = open(os.path.join(srcdir, "service/hwlat-scan.8")).read()
    ok(".BI \\-\\-platform-root= DIR" in text, "hwlat-scan(8) documents --platform-root")


def main():
    return fake.run((test_unavailable_end_to_end, test_old_module, test_ten_field_line,
                     test_per_cpu_broadcast, test_round_robin_sum, test_platform,
                     test_man_page))


if __name__ == "__main__":
    sys.exit(main())
