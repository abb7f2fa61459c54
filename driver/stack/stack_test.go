package stack

import (
	"slices"
	"strings"
	"testing"

	"wafbench/driver/cpu"
)

func TestSidecar(t *testing.T) {
	two := cpu.Partition{Envoy: []int{0}, Client: []int{1}, Upstream: []int{1}}
	one := cpu.Partition{Envoy: []int{0}, Client: []int{0}, Upstream: []int{0}}
	tests := []struct {
		name          string
		f             Flags
		part          cpu.Partition
		wantPlacement string
		wantCPUs      []int
		wantTransport string
		wantErr       string
	}{
		{name: "defaults", part: two, wantPlacement: "envoy", wantTransport: "uds"},
		{name: "envoy tcp", f: Flags{ExtProcCPUs: "envoy", ExtProcTransport: "tcp"}, part: two, wantPlacement: "envoy", wantTransport: "tcp"},
		{name: "own", f: Flags{ExtProcCPUs: "own"}, part: two, wantPlacement: "own", wantCPUs: []int{1}, wantTransport: "uds"},
		{name: "own on one CPU", f: Flags{ExtProcCPUs: "own"}, part: one, wantErr: "every CPU is Envoy's"},
		{name: "list", f: Flags{ExtProcCPUs: "0"}, part: two, wantPlacement: "0", wantCPUs: []int{0}, wantTransport: "uds"},
		{name: "bad list", f: Flags{ExtProcCPUs: "99999"}, part: two, wantErr: "--extproc-cpus"},
		{name: "bad transport", f: Flags{ExtProcTransport: "quic"}, part: two, wantErr: "--extproc-transport"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f.sidecar(tt.part)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("sidecar() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Placement != tt.wantPlacement || !slices.Equal(got.CPUs, tt.wantCPUs) || got.Transport != tt.wantTransport {
				t.Errorf("sidecar() = %+v, want placement %q CPUs %v transport %q", got, tt.wantPlacement, tt.wantCPUs, tt.wantTransport)
			}
		})
	}
}
