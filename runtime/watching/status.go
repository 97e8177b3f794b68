package watching

import (
	"sync"
	"time"
)

// Status is what a Watcher has seen of its requests so far: enough to tell
// a watch that is quiet because nothing changes (a stream is open) from one
// that is broken and cannot be re-established (no stream since a while,
// failed requests), and to count what happened (e.g. for metrics).
//
// A stream that is open but silent is not a problem in itself: client-go's
// reflector asks for bookmarks (about one a minute), the server ends every
// watch after 5 to 10 minutes and the reflector starts another one, and the
// watcher ends a stream that has been silent for InactivityTimeout (then
// Watching is false until a new one is established).
type Status struct {
	// Started is when Run began.
	Started time.Time
	// Watching says whether a watch stream is open now, listing
	// (client-go's streaming list is a watch) or watching.
	Watching bool
	// Since is when Watching last changed: when the open stream was
	// established, or when the last one ended (Started if none was ever
	// established).
	Since time.Time
	// Listed is when the last complete listing was delivered (zero: none
	// yet). A listing is repeated when a watch cannot be resumed.
	Listed time.Time
	// LastEvent is when the last event or bookmark arrived through a
	// stream (zero: none yet); Events counts them.
	LastEvent time.Time
	Events    uint64
	// Restarts counts the watch streams established after the first one.
	Restarts int
	// Failures counts the listing and watch requests that failed since the
	// last one that succeeded (not those cut short by the context), and
	// LastError is the last of them (nil if Failures is 0).
	Failures  int
	LastError error
	// Sharded says whether the last listing's metadata.shardInfo echoed
	// the Watcher's ShardSelector: the API server filtered the objects by
	// it (false without a ShardSelector, and on API servers that ignore
	// it).
	Sharded bool
}

// tracker keeps a Watcher's Status. Its methods are safe for concurrent
// use; each call takes the clock once.
type tracker struct {
	mu         sync.Mutex
	status     Status
	started    int    // the streams established so far
	stream     uint64 // the number of the open stream (0: none)
	shardKnown bool   // a listing has set status.Sharded since run
}

func (t *tracker) run() {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.status = Status{Started: now, Since: now}
	t.started, t.stream = 0, 0
	t.shardKnown = false
}

// setSharded records whether the last listing was sharded, and says
// whether that is news: the first listing's since run, or a change.
func (t *tracker) setSharded(sharded bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	news := !t.shardKnown || t.status.Sharded != sharded
	t.shardKnown, t.status.Sharded = true, sharded
	return news
}

// opened records a stream just established and returns its number, for
// closed.
func (t *tracker) opened() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started++
	t.stream = uint64(t.started)
	if t.started > 1 {
		t.status.Restarts++
	}
	t.status.Watching, t.status.Since = true, time.Now()
	t.status.Failures, t.status.LastError = 0, nil
	return t.stream
}

// closed records the end of stream n. A stream ends after the reflector
// has started the next one only in a race, which then does not count.
func (t *tracker) closed(n uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stream != n {
		return
	}
	t.stream = 0
	t.status.Watching, t.status.Since = false, time.Now()
}

func (t *tracker) event() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status.LastEvent = time.Now()
	t.status.Events++
}

func (t *tracker) listed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status.Listed = time.Now()
	t.status.Failures, t.status.LastError = 0, nil
}

func (t *tracker) failed(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.status.Failures++
	t.status.LastError = err
}

func (t *tracker) get() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}
