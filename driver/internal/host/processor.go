package host

import (
	"errors"

	"github.com/klauspost/cpuid/v2"
	"github.com/prometheus/procfs"

	"wafbench/driver/result"
)

// isaFeatures maps each extension result.ISAChecked names to the CPUID
// feature that reports it (klauspost/cpuid checks the OS enables the AVX
// and AVX-512 register state too, as the libraries do before using them).
var isaFeatures = map[string]cpuid.FeatureID{
	"sse4_2": cpuid.SSE42, "avx": cpuid.AVX, "avx2": cpuid.AVX2, "bmi2": cpuid.BMI2, "sha_ni": cpuid.SHA,
	"avx512f": cpuid.AVX512F, "avx512bw": cpuid.AVX512BW, "avx512vl": cpuid.AVX512VL,
}

// Processor reads the CPU's identity with CPUID (vendor, family, model,
// stepping, brand string, caches, the checked ISA extensions, hypervisor
// bit and vendor) and its clock from /proc/cpuinfo. A cpuinfo that cannot
// be read leaves MHz 0 and is named in the second result; CPUID itself
// cannot fail on amd64.
func Processor() (*result.Processor, string) {
	return processorFrom(cpuid.CPU, readMHz)
}

func processorFrom(c cpuid.CPUInfo, mhz func() (float64, error)) (*result.Processor, string) {
	p := &result.Processor{
		Vendor: c.VendorString, Family: c.Family, Model: c.Model, Stepping: c.Stepping, ModelName: c.BrandName,
		ISA:        map[string]bool{},
		L1dKiB:     kib(c.Cache.L1D),
		L2KiB:      kib(c.Cache.L2),
		L3KiB:      kib(c.Cache.L3),
		Hypervisor: c.Supports(cpuid.HYPERVISOR),
	}
	for _, x := range result.ISAChecked {
		p.ISA[x] = c.Supports(isaFeatures[x])
	}
	if p.Hypervisor {
		p.HypervisorVendor = c.HypervisorVendorString
	}
	var missing string
	if v, err := mhz(); err != nil {
		missing = "CPU MHz: " + err.Error()
	} else {
		p.MHz = v
	}
	return p, missing
}

// kib converts a cache size in bytes (-1: not detected) to KiB (0).
func kib(bytes int) int {
	if bytes <= 0 {
		return 0
	}
	return bytes / 1024
}

// readMHz is the "cpu MHz" of the first CPU in /proc/cpuinfo.
func readMHz() (float64, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, err
	}
	info, err := fs.CPUInfo()
	if err != nil {
		return 0, err
	}
	if len(info) == 0 || info[0].CPUMHz <= 0 {
		return 0, errNoMHz
	}
	return info[0].CPUMHz, nil
}

var errNoMHz = errors.New("/proc/cpuinfo has no \"cpu MHz\" for CPU 0")
