package cpu

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "0", want: []int{0}},
		{in: "0,2-3", want: []int{0, 2, 3}},
		{in: "3,1", want: []int{1, 3}},
		{in: " 0-1 , 4 ", want: []int{0, 1, 4}},
		{in: "5-5", want: []int{5}},
		{in: "", wantErr: "empty"},
		{in: "a", wantErr: `bad CPU number "a"`},
		{in: "3-1", wantErr: "reversed"},
		{in: "1,1", wantErr: "CPU 1 given twice"},
		{in: "0-2,2", wantErr: "CPU 2 given twice"},
		{in: "1,", wantErr: "bad CPU number"},
		{in: "-1", wantErr: "bad CPU number"},
		{in: "0-", wantErr: "bad CPU number"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseList(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseList(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ParseList(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1}, "0-1"},
		{[]int{3, 0, 1}, "0-1,3"},
		{[]int{0, 2, 3, 4, 7, 9, 10}, "0,2-4,7,9-10"},
		{[]int{1, 1}, "1"},
	}
	for _, tt := range tests {
		if got := Format(tt.in); got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	online, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	if err := check(online); err != nil {
		t.Errorf("Check(online %v) = %v", online, err)
	}
	bad := online[len(online)-1] + 1
	err = check([]int{bad})
	want := "is not available (online: " + Format(online) + ")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Check([%d]) = %v, want error containing %q", bad, err, want)
	}
	if err := check(nil); err == nil {
		t.Error("Check(nil) = nil, want error")
	}
}

func TestThreadsSelf(t *testing.T) {
	got, err := Threads(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 {
		t.Fatalf("Threads(self) = %d threads, want a Go process's several", len(got))
	}
	if got[0].TID != os.Getpid() {
		t.Errorf("first thread TID %d, want main thread %d", got[0].TID, os.Getpid())
	}
	for _, th := range got {
		if th.Name == "" || len(th.CPUs) == 0 {
			t.Errorf("thread %+v: want a name and CPUs", th)
		}
	}
}

func TestStartPinned(t *testing.T) {
	online, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	last := []int{online[len(online)-1]}
	before, err := Threads(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "5")
	if err := StartPinned(cmd, last); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	threads, err := Verify(cmd.Process.Pid, last)
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) != 1 || threads[0].Name != "sleep" || !slices.Equal(threads[0].CPUs, last) {
		t.Errorf("Verify = %+v, want one thread \"sleep\" on %v", threads, last)
	}
	// The driver's own threads must be untouched.
	self, err := Threads(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range self {
		for _, b := range before {
			if b.TID == th.TID && !slices.Equal(b.CPUs, th.CPUs) {
				t.Errorf("driver thread %d (%s): CPUs %v, was %v", th.TID, th.Name, th.CPUs, b.CPUs)
			}
		}
	}
	// And a mismatch is reported with the thread named.
	if len(online) > 1 {
		_, err := Verify(cmd.Process.Pid, online[:1])
		if err == nil || !strings.Contains(err.Error(), "sleep thread") {
			t.Errorf("Verify against %v = %v, want error naming the sleep thread", online[:1], err)
		}
	}
}

func TestStartPinnedBadCPU(t *testing.T) {
	cmd := exec.Command("true")
	if err := StartPinned(cmd, []int{unixMaxCPUForTest}); err == nil {
		cmd.Wait()
		t.Fatal("StartPinned on an absent CPU succeeded")
	}
	if cmd.Process != nil {
		t.Error("child started despite the error")
	}
}

const unixMaxCPUForTest = 1023

// TestPinSelf re-runs the test binary so pinning does not affect the other
// tests of this process.
func TestPinSelf(t *testing.T) {
	if cpus := os.Getenv("CPU_TEST_PIN_SELF"); cpus != "" {
		want, err := parseList(cpus)
		if err != nil {
			t.Fatal(err)
		}
		if err := PinSelf(want); err != nil {
			t.Fatal(err)
		}
		// Make the runtime start more threads after pinning.
		done := make(chan bool)
		for range 8 {
			go func() {
				var f *os.File
				f, _ = os.Open("/proc/self/stat")
				f.Close()
				done <- true
			}()
		}
		for range 8 {
			<-done
		}
		if _, err := Verify(os.Getpid(), want); err != nil {
			t.Fatal(err)
		}
		return
	}
	online, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	last := Format(online[len(online)-1:])
	cmd := exec.Command(os.Args[0], "-test.run=^TestPinSelf$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CPU_TEST_PIN_SELF="+last)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child pinned to %s: %v\n%s", last, err, out)
	}
}
