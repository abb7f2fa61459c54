package host

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
)

// MachineID identifies this machine as it is booted: the first 16 hex
// digits of the SHA-256 of the kernel's boot ID (a CI runner is a fresh
// machine per job; two runs one after the other here share it), or "" when
// the boot ID cannot be read. A container shares its host's boot ID.
func MachineID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("wafbench machine " + id))
	return hex.EncodeToString(sum[:8])
}
