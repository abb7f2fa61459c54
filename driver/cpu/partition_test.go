package cpu

import (
	"reflect"
	"strings"
	"testing"
)

func TestPlan(t *testing.T) {
	tests := []struct {
		name    string
		req     PartitionRequest
		want    Partition
		wantErr string
	}{
		{name: "defaults: the client gets a CPU of its own", req: PartitionRequest{Online: []int{0, 1, 2, 3}, Concurrency: 2},
			want: Partition{Envoy: []int{0, 1}, Client: []int{2}, Upstream: []int{3}}},
		{name: "defaults: three left", req: PartitionRequest{Online: []int{0, 1, 2, 3}, Concurrency: 1},
			want: Partition{Envoy: []int{0}, Client: []int{1, 2}, Upstream: []int{3}}},
		{name: "explicit client: the upstream shares it", req: PartitionRequest{Online: []int{0, 1}, Concurrency: 1, Client: "1"},
			want: Partition{Envoy: []int{0}, Client: []int{1}, Upstream: []int{1}}},
		{name: "concurrency leaves one CPU free", req: PartitionRequest{Online: []int{0, 1}, Concurrency: 4},
			want: Partition{Envoy: []int{0}, Client: []int{1}, Upstream: []int{1}}},
		{name: "one CPU shared by all", req: PartitionRequest{Online: []int{0}, Concurrency: 1},
			want: Partition{Envoy: []int{0}, Client: []int{0}, Upstream: []int{0}}},
		{name: "explicit envoy", req: PartitionRequest{Online: []int{0, 1, 2}, Concurrency: 1, Envoy: "0"},
			want: Partition{Envoy: []int{0}, Client: []int{1}, Upstream: []int{2}}},
		{name: "explicit client and upstream", req: PartitionRequest{Online: []int{0, 1, 2}, Concurrency: 1, Client: "0", Upstream: "0"},
			want: Partition{Envoy: []int{0}, Client: []int{0}, Upstream: []int{0}}},
		{name: "bad envoy list", req: PartitionRequest{Online: []int{0, 1}, Concurrency: 1, Envoy: "x"}, wantErr: `--envoy-cpus: cpu list "x"`},
		{name: "bad client list", req: PartitionRequest{Online: []int{0, 1}, Concurrency: 1, Client: "1-0"}, wantErr: "--client-cpus: "},
		{name: "bad upstream list", req: PartitionRequest{Online: []int{0, 1}, Concurrency: 1, Upstream: "4095"}, wantErr: "--upstream-cpus: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Plan(tt.req)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, %v; want error starting %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestShared(t *testing.T) {
	tests := []struct {
		name            string
		p               Partition
		online          int
		allow           bool
		wantNote, wantE string
	}{
		{name: "apart", p: Partition{Envoy: []int{0}, Client: []int{1}, Upstream: []int{1}}, online: 2},
		{name: "client shares", p: Partition{Envoy: []int{0, 1}, Client: []int{1}, Upstream: []int{2}}, online: 3,
			wantE: "Envoy's CPUs (--envoy-cpus 0-1) overlap the client's (--client-cpus 1) on CPU 1: the figures would measure their contention, not the proxy; give them separate CPUs, or pass --allow-shared-cpus to measure anyway (recorded in meta.json)"},
		{name: "both share", p: Partition{Envoy: []int{0}, Client: []int{0}, Upstream: []int{0, 1}}, online: 2,
			wantE: "Envoy's CPUs (--envoy-cpus 0) overlap the client's (--client-cpus 0) on CPU 0 and the upstream's (--upstream-cpus 0-1) on CPU 0: "},
		{name: "one CPU", p: Partition{Envoy: []int{0}, Client: []int{0}, Upstream: []int{0}}, online: 1,
			wantE: "this machine has 1 online CPU, so Envoy, the client and the upstream must share it"},
		{name: "allowed", p: Partition{Envoy: []int{0}, Client: []int{0}, Upstream: []int{1}}, online: 1, allow: true,
			wantNote: "Envoy's CPUs (--envoy-cpus 0) overlap the client's (--client-cpus 0) on CPU 0 (--allow-shared-cpus): the proxy's figures include competing with them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			note, err := tt.p.Shared(tt.online, tt.allow)
			if note != tt.wantNote {
				t.Errorf("note: got %q, want %q", note, tt.wantNote)
			}
			switch {
			case tt.wantE == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case tt.wantE != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantE)):
				t.Errorf("got error %v, want one starting %q", err, tt.wantE)
			}
		})
	}
}
