package manifests

import (
	"fmt"
	"go/scanner"

	"github.com/kopf-go/kopf/generator/model"
	"github.com/kopf-go/kopf/runtime/resources"
)

// A reconcile handler (on.reconcile) also needs to read the resources it
// owns (owns=) and watches (watches=): the runtime watches them (never
// writing onto them) to find the objects to reconcile, so they get get,
// list and watch; a resource that handlers also serve gets get added to
// its rule. The reconciled resource itself is patched: the runtime
// applies the handler's kw.Patch (its conditions), and with finalize=true
// adds and removes its finalizer.

// addRelated records the owned and watched resources of a reconcile
// registration into rules; those whose group or plural cannot be told are
// errors at the marker.
func addRelated(rules map[[2]string]*rule, r *model.Registration, declared []*model.Typed, errs *scanner.ErrorList) {
	for _, list := range []struct {
		name string
		sels []resources.Selector
	}{{"owns", r.Owns}, {"watches", r.Watches}} {
		for _, sel := range list.sels {
			group, plural, why := resolveSelector(sel, nil, declared)
			if why != "" {
				errs.Add(r.Pos, list.name+": "+why)
				continue
			}
			key := [2]string{group, plural}
			ru := rules[key]
			if ru == nil {
				ru = &rule{group: group, plural: plural, markers: map[string]bool{}}
				rules[key] = ru
			}
			ru.related = true
		}
	}
}

// anyRelated reports whether reconcile handlers own or watch any of the
// rules' resources.
func anyRelated(rules []*rule) bool {
	for _, ru := range rules {
		if ru.related {
			return true
		}
	}
	return false
}

// verbs returns the verbs of a served resource's rule: get first when a
// reconcile handler owns or watches it too.
func (ru *rule) verbs(verbs ...string) []string {
	if ru.related {
		return append([]string{"get"}, verbs...)
	}
	return verbs
}

// writeRelatedRules writes the rule of a resource that reconcile handlers
// own or watch and no handler serves.
func writeRelatedRules(b *roleWriter, qualified string, ru *rule) {
	fmt.Fprintf(b, "  # %s: owned or watched by on.reconcile handlers (owns=, watches=).\n", qualified)
	b.WriteString("  # get, list, watch: the runtime watches them to find the objects to\n" +
		"  # reconcile; it writes nothing onto them.\n")
	b.rule(ru.group, []string{ru.plural}, "get", "list", "watch")
}
