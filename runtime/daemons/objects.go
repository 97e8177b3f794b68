package daemons

// Objects returns the objects the engine runs daemons or timers for (or
// did, until the reactor forgets them), in no order: for a caller that
// stops some of them, e.g. those of the buckets a sharded replica gives up.
func (e *Engine) Objects() []*Object {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*Object, 0, len(e.objects))
	for o := range e.objects {
		out = append(out, o)
	}
	return out
}
