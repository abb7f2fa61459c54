package builds

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// lineSignal is an io.Writer that closes seen once a line containing want
// has been written.
type lineSignal struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineSignal) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// TestRunCancelStopsTheGroup: cancelling a build step ends the script and
// the process it started (SIGTERM to the group), and run reports the
// cancellation.
func TestRunCancelStopsTheGroup(t *testing.T) {
	out := &lineSignal{want: "started", seen: make(chan struct{})}
	r := &Runner{Root: t.TempDir(), Stderr: out}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- r.run(ctx, "test", "sleeping", nil, "sh", "-c", "sleep 600 & echo started >&2; wait")
	}()
	<-out.seen
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
