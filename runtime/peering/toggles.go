package peering

import (
	"slices"
	"sync"
)

// Toggles is a set of named pause reasons (Kopf's operator_paused, a
// ToggleSet(any)): the operator is paused while any toggle is on. Its
// OnChange hook, set before the first toggle is made, is told each change
// of the whole (paused or not), in order, under the set's lock: it must
// not call back into the set.
type Toggles struct {
	// OnChange is told when the set turns paused (true) or not (false).
	OnChange func(paused bool)

	mu  sync.Mutex
	on  map[*Toggle]bool
	was bool
}

// Toggle is one reason to pause.
type Toggle struct {
	set  *Toggles
	name string
}

// Make adds a toggle, on or off.
func (s *Toggles) Make(name string, on bool) *Toggle {
	t := &Toggle{set: s, name: name}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on == nil {
		s.on = map[*Toggle]bool{}
	}
	s.on[t] = on
	s.changedLocked()
	return t
}

// Paused reports whether any toggle is on.
func (s *Toggles) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.anyLocked()
}

// Reasons are the names of the toggles that are on, sorted.
func (s *Toggles) Reasons() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for t, on := range s.on {
		if on {
			names = append(names, t.name)
		}
	}
	slices.Sort(names)
	return names
}

func (s *Toggles) anyLocked() bool {
	for _, on := range s.on {
		if on {
			return true
		}
	}
	return false
}

func (s *Toggles) changedLocked() {
	now := s.anyLocked()
	if now != s.was {
		s.was = now
		if s.OnChange != nil {
			s.OnChange(now)
		}
	}
}

// Set turns the toggle on or off.
func (t *Toggle) Set(on bool) {
	t.set.mu.Lock()
	defer t.set.mu.Unlock()
	if _, ok := t.set.on[t]; !ok {
		return // dropped
	}
	t.set.on[t] = on
	t.set.changedLocked()
}

// On reports whether the toggle is on.
func (t *Toggle) On() bool {
	t.set.mu.Lock()
	defer t.set.mu.Unlock()
	return t.set.on[t]
}

// Drop removes the toggle from its set.
func (t *Toggle) Drop() {
	t.set.mu.Lock()
	defer t.set.mu.Unlock()
	delete(t.set.on, t)
	t.set.changedLocked()
}
