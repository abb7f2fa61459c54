package host

import (
	"slices"
	"strconv"
	"testing"

	"github.com/prometheus/procfs"

	"wafbench/driver/result"
)

// TestProcessorMatchesTheKernel: what CPUID says about this machine's CPU
// agrees with the kernel's /proc/cpuinfo — family, model, stepping, vendor
// and each checked ISA extension (the kernel prints the same flag names) —
// and every checked extension is recorded, present or absent.
func TestProcessorMatchesTheKernel(t *testing.T) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	info, err := fs.CPUInfo()
	if err != nil || len(info) == 0 {
		t.Fatalf("/proc/cpuinfo: %v (%d CPUs)", err, len(info))
	}
	k := info[0]
	p, missing := Processor()
	if missing != "" {
		t.Errorf("unmeasured: %s", missing)
	}
	for _, c := range []struct{ name, got, want string }{
		{"vendor", p.Vendor, k.VendorID},
		{"family", strconv.Itoa(p.Family), k.CPUFamily},
		{"model", strconv.Itoa(p.Model), k.Model},
		{"stepping", strconv.Itoa(p.Stepping), k.Stepping},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q from CPUID, want %q as /proc/cpuinfo says", c.name, c.got, c.want)
		}
	}
	if len(p.ISA) != len(result.ISAChecked) {
		t.Errorf("ISA: got %d entries, want one per checked extension (%d)", len(p.ISA), len(result.ISAChecked))
	}
	for _, x := range result.ISAChecked {
		if got, want := p.ISA[x], slices.Contains(k.Flags, x); got != want {
			t.Errorf("ISA %s: got %v from CPUID, want %v as the kernel's flags say", x, got, want)
		}
	}
	if got, want := p.Hypervisor, slices.Contains(k.Flags, "hypervisor"); got != want {
		t.Errorf("hypervisor: got %v, want %v as the kernel's flags say", got, want)
	}
	if p.Hypervisor && p.HypervisorVendor == "" {
		t.Errorf("hypervisor vendor: got none with the hypervisor bit set")
	}
	if p.MHz <= 0 || p.L1dKiB <= 0 {
		t.Errorf("got MHz %v, L1d %d KiB; want both measured", p.MHz, p.L1dKiB)
	}
}
