package plan

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in   string
		want Shard
		err  string // "" = parses
	}{
		{"0/4", Shard{0, 4}, ""},
		{"3/4", Shard{3, 4}, ""},
		{"0/1", Shard{0, 1}, ""},
		{"4/4", Shard{}, "0 ≤ i < N"},
		{"5/4", Shard{}, "0 ≤ i < N"},
		{"-1/4", Shard{}, "0 ≤ i < N"},
		{"0/0", Shard{}, "N ≥ 1"},
		{"1/-2", Shard{}, "N ≥ 1"},
		{"1", Shard{}, "want i/N"},
		{"a/4", Shard{}, "whole numbers"},
		{"1/4x", Shard{}, "whole numbers"},
		{"", Shard{}, "want i/N"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String: got %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func TestShardRepeatsPartition(t *testing.T) {
	for _, tc := range []struct{ total, n int }{{8, 4}, {9, 4}, {6, 4}, {5, 1}, {12, 5}, {3, 3}} {
		var all []int
		sizes := map[int]bool{}
		for i := range tc.n {
			r := Shard{i, tc.n}.Repeats(tc.total)
			sizes[len(r)] = true
			all = append(all, r...)
		}
		want := make([]int, tc.total)
		for i := range want {
			want[i] = i + 1
		}
		if !reflect.DeepEqual(all, want) {
			t.Errorf("%d repeats in %d shards: union %v, want %v in order", tc.total, tc.n, all, want)
		}
		if len(sizes) > 2 {
			t.Errorf("%d repeats in %d shards: sizes %v differ by more than one", tc.total, tc.n, sizes)
		}
	}
}

// TestShardBalance: the union of N shards is the unsharded design, trial
// for trial, and every mode takes every position equally often across the
// shards whenever the repeats allow (a multiple of the number of modes);
// with R per shard a multiple of the modes, every shard is balanced on its
// own too, so losing one shard leaves the rest balanced.
func TestShardBalance(t *testing.T) {
	tests := []struct {
		name    string
		modes   []string
		repeats int // whole design
		shards  int
		each    bool // every shard balanced on its own
	}{
		{"3 modes, 4 shards of 3", []string{"A", "B", "C"}, 12, 4, true},
		{"3 modes, 3 shards of 2", []string{"A", "B", "C"}, 6, 3, false},
		{"2 modes, 4 shards of 2", []string{"A", "B"}, 8, 4, true},
		{"4 modes, 2 shards of 2", []string{"A", "B", "C", "D"}, 4, 2, false},
		{"5 modes, 5 shards of 1", []string{"A", "B", "C", "D", "E"}, 5, 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Modes: tt.modes, Cases: 2, Repeats: tt.repeats, Order: Latin, Scope: PerModeRepeat}
			whole, err := Build(o)
			if err != nil {
				t.Fatal(err)
			}
			var union []Trial
			var orders [][]string
			count := map[string]map[int]int{} // mode → position → times, over all shards
			for i := range tt.shards {
				got, ord, err := Shard{i, tt.shards}.Select(o, whole)
				if err != nil {
					t.Fatal(err)
				}
				own := map[string]map[int]int{}
				for k, tr := range got {
					if tr.Index != k+1 {
						t.Fatalf("shard %d: trial %d has Index %d, want %d", i, k, tr.Index, k+1)
					}
					for _, c := range []map[string]map[int]int{count, own} {
						if c[tr.Mode] == nil {
							c[tr.Mode] = map[int]int{}
						}
						c[tr.Mode][tr.Position]++
					}
					tr.Index = 0
					union = append(union, tr)
				}
				orders = append(orders, ord...)
				if tt.each {
					checkEven(t, "shard "+Shard{i, tt.shards}.String(), own, len(tt.modes))
				}
			}
			want := make([]Trial, len(whole))
			copy(want, whole)
			for i := range want {
				want[i].Index = 0
			}
			if !reflect.DeepEqual(union, want) {
				t.Errorf("union of shards differs from the unsharded design:\n got %v\nwant %v", union, want)
			}
			if !reflect.DeepEqual(orders, ModeOrder(o)) {
				t.Errorf("mode orders: got %v, want %v", orders, ModeOrder(o))
			}
			checkEven(t, "union", count, len(tt.modes))
		})
	}
}

// checkEven wants every mode in every position the same number of times.
func checkEven(t *testing.T, what string, count map[string]map[int]int, positions int) {
	t.Helper()
	want := -1
	for m, byPos := range count {
		for p := 1; p <= positions; p++ {
			if want < 0 {
				want = byPos[p]
			}
			if byPos[p] != want || want == 0 {
				t.Errorf("%s: mode %s in position %d %d times, want %d (every mode in every position equally often): %v", what, m, p, byPos[p], want, count)
				return
			}
		}
	}
}

func TestShardSelectRefusesEmptyShards(t *testing.T) {
	o := Options{Modes: []string{"A", "B"}, Cases: 1, Repeats: 3, Order: Latin, Scope: PerModeRepeat}
	trials, _ := Build(o)
	if _, _, err := (Shard{3, 4}).Select(o, trials); err == nil || !strings.Contains(err.Error(), "3 repeats cannot fill 4 shards") {
		t.Errorf("got %v, want a refusal naming 3 repeats and 4 shards", err)
	}
}
