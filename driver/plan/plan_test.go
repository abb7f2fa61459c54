package plan

import (
	"reflect"
	"strings"
	"testing"
)

func TestModeOrderLatin(t *testing.T) {
	got := ModeOrder(Options{Modes: []string{"A", "B", "C"}, Repeats: 4, Order: Latin})
	want := [][]string{{"A", "B", "C"}, {"C", "A", "B"}, {"B", "C", "A"}, {"A", "B", "C"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Each mode takes each position exactly once over n repeats.
	pos := map[string]map[int]bool{}
	for _, order := range got[:3] {
		for p, m := range order {
			if pos[m] == nil {
				pos[m] = map[int]bool{}
			}
			pos[m][p] = true
		}
	}
	for m, ps := range pos {
		if len(ps) != 3 {
			t.Errorf("mode %s positions: got %v, want all three", m, ps)
		}
	}
}

func TestModeOrderShuffleSeeded(t *testing.T) {
	o := Options{Modes: []string{"A", "B", "C", "D"}, Repeats: 6, Order: shuffle, Seed: 42}
	a, b := ModeOrder(o), ModeOrder(o)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different orders: %v vs %v", a, b)
	}
	o.Seed = 43
	if reflect.DeepEqual(a, ModeOrder(o)) {
		t.Errorf("seeds 42 and 43 gave the same orders %v", a)
	}
	for _, order := range a {
		if len(order) != 4 {
			t.Fatalf("order %v lost a mode", order)
		}
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name   string
		o      Options
		trials int
		first  Trial
	}{
		{"mode-repeat", Options{Modes: []string{"p", "m"}, Cases: 3, Repeats: 2, Order: Latin, Scope: PerModeRepeat}, 4,
			Trial{Index: 1, Repeat: 1, Position: 1, Mode: "p", Cases: []int{0, 1, 2}}},
		{"workload", Options{Modes: []string{"p", "m"}, Cases: 3, Repeats: 2, Order: Latin, Scope: perWorkload}, 12,
			Trial{Index: 1, Repeat: 1, Position: 1, Mode: "p", Cases: []int{0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Build(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.trials {
				t.Errorf("trials: got %d, want %d", len(got), tt.trials)
			}
			if !reflect.DeepEqual(got[0], tt.first) {
				t.Errorf("first: got %+v, want %+v", got[0], tt.first)
			}
			if last := got[len(got)-1]; last.Index != tt.trials || last.Repeat != 2 {
				t.Errorf("last: got %+v", last)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	base := Options{Modes: []string{"a"}, Cases: 1, Repeats: 1, Order: Latin, Scope: PerModeRepeat}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no modes", func(o *Options) { o.Modes = nil }, "modes"},
		{"dup mode", func(o *Options) { o.Modes = []string{"a", "a"} }, "listed twice"},
		{"repeats", func(o *Options) { o.Repeats = 0 }, "repeats"},
		{"order", func(o *Options) { o.Order = "random" }, "order"},
		{"scope", func(o *Options) { o.Scope = "x" }, "trial-scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.edit(&o)
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want error with %q", err, tt.want)
			}
		})
	}
	if err := base.Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
}
