package kwargs

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Conditions returns the object's status.conditions (metav1.Condition, the
// shape GitOps tools read for health) as this cycle leaves them: those
// already set in Patch by [Base.SetCondition], else those of the body. A
// list that does not decode is an error naming it.
func (b *Base) Conditions() ([]metav1.Condition, error) {
	var raw any
	if status, ok := b.Patch["status"].(map[string]any); ok {
		raw = status["conditions"]
	}
	if raw == nil {
		raw = b.Body.Status()["conditions"]
	}
	if raw == nil {
		return nil, nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("status.conditions: %w", err)
	}
	var conds []metav1.Condition
	if err := json.Unmarshal(data, &conds); err != nil {
		return nil, fmt.Errorf("status.conditions is not a list of conditions: %w", err)
	}
	return conds, nil
}

// SetCondition sets one condition of the object's status.conditions, as
// apimachinery's meta.SetStatusCondition does (lastTransitionTime set when
// the status changes, kept when it does not), with ObservedGeneration taken
// from the object the handler got (metadata.generation), and writes the
// whole list into Patch: a merge patch replaces lists, so the conditions
// of other types are kept by writing them too. It reports whether the
// conditions changed; unchanged, nothing is written. The patch is applied
// after the handler returns, also when it fails, so a handler can report
// its failure in a condition and still return the error.
func (b *Base) SetCondition(c metav1.Condition) (changed bool, err error) {
	conds, err := b.Conditions()
	if err != nil {
		return false, err
	}
	c.ObservedGeneration = b.generation()
	if !meta.SetStatusCondition(&conds, c) {
		return false, nil
	}
	list := make([]any, len(conds))
	for i, cond := range conds {
		data, err := json.Marshal(cond)
		if err != nil {
			return false, fmt.Errorf("condition %s: %w", cond.Type, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return false, fmt.Errorf("condition %s: %w", cond.Type, err)
		}
		list[i] = m
	}
	b.Patch.Status()["conditions"] = list
	return true, nil
}

// generation is the object's metadata.generation (0 if absent), whichever
// number type the body was decoded with.
func (b *Base) generation() int64 {
	m := b.Meta
	if m == nil {
		m = b.Body.Meta()
	}
	switch g := m["generation"].(type) {
	case int64:
		return g
	case float64:
		return int64(g)
	case json.Number:
		n, _ := g.Int64()
		return n
	case int:
		return int64(g)
	}
	return 0
}
