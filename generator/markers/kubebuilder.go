package markers

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"sigs.k8s.io/controller-tools/pkg/crd"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/controller-tools/pkg/rbac"
)

// KubebuilderPrefix starts controller-gen's markers (after "//" and any
// spaces, as controller-tools reads them), the ones kopf-gen reads as the
// others.
const KubebuilderPrefix = "+kubebuilder:"

// KubebuilderRBAC is controller-gen's RBAC marker, which kopf-gen reads
// as //kopf:rbac.
const KubebuilderRBAC = "+kubebuilder:rbac"

// kubebuilderScaffold starts the markers of kubebuilder's command line
// (where `kubebuilder create` inserts code), which no generator reads.
const kubebuilderScaffold = "+kubebuilder:scaffold:"

// kubebuilder is the registry of controller-gen's markers that kopf-gen
// reads through controller-tools: those of its CRD, object (DeepCopy) and
// RBAC generators; built once per table, when first needed.
type kubebuilder struct {
	once  sync.Once
	reg   *ctmarkers.Registry
	names []string
	err   error
}

func (k *kubebuilder) registry() (*ctmarkers.Registry, []string, error) {
	k.once.Do(func() {
		k.reg = &ctmarkers.Registry{}
		for _, g := range []interface {
			RegisterMarkers(*ctmarkers.Registry) error
		}{crd.Generator{}, deepcopy.Generator{}, rbac.Generator{}} {
			if err := g.RegisterMarkers(k.reg); err != nil {
				k.err = fmt.Errorf("registering controller-tools' markers: %w", err)
				return
			}
		}
		seen := map[string]bool{}
		for _, d := range k.reg.AllDefinitions() {
			if !seen[d.Name] {
				seen[d.Name] = true
				k.names = append(k.names, "+"+d.Name)
			}
		}
	})
	return k.reg, k.names, k.err
}

// KubebuilderText returns the text of a comment as controller-tools reads
// it as a marker ("//", spaces, then "+"; the text trimmed, from the '+'
// on), if it is a +kubebuilder: marker.
func KubebuilderText(comment string) (string, bool) {
	rest, ok := strings.CutPrefix(comment, "//")
	if !ok {
		return "", false
	}
	text := strings.TrimSpace(rest)
	return text, strings.HasPrefix(text, KubebuilderPrefix)
}

// IsKubebuilderRBAC reports whether a marker text (as KubebuilderText
// returns it) is controller-gen's RBAC marker, by controller-tools' own
// lookup of names.
func (t *Table) IsKubebuilderRBAC(text string) bool {
	reg, _, err := t.kb.registry()
	return err == nil && reg.Lookup(text, ctmarkers.DescribesPackage) == rbac.RuleDefinition
}

// KubebuilderSelectableField returns the jsonPath of a comment that is
// controller-gen's +kubebuilder:selectablefield marker of a type (a CRD
// version's selectableFields), parsed with controller-tools' definition,
// as the CRD generator reads it; false if the comment is not one or does
// not parse (the CRD generator reports that).
func (t *Table) KubebuilderSelectableField(comment string) (string, bool) {
	reg, _, err := t.kb.registry()
	text, ok := KubebuilderText(comment)
	if err != nil || !ok {
		return "", false
	}
	def := reg.Lookup(text, ctmarkers.DescribesType)
	if def == nil {
		return "", false
	}
	v, err := def.Parse(text)
	if err != nil {
		return "", false
	}
	sf, ok := v.(crdmarkers.SelectableField)
	return sf.JSONPath, ok
}

// ParseKubebuilderRBAC parses a +kubebuilder:rbac marker (its text as
// KubebuilderText returns it) with controller-tools' definition, as
// controller-gen does. Its errors are a [*KubebuilderError].
func ParseKubebuilderRBAC(text string) (rbac.Rule, error) {
	v, err := rbac.RuleDefinition.Parse(text)
	if err != nil {
		return rbac.Rule{}, kubebuilderError(text, err)
	}
	r, _ := v.(rbac.Rule)
	return r, nil
}

// KubebuilderError is what controller-tools cannot parse in a marker:
// its first error, at a byte offset in the marker's text.
type KubebuilderError struct {
	Offset int
	Msg    string
}

func (e *KubebuilderError) Error() string {
	return fmt.Sprintf("cannot parse %s: %s", KubebuilderRBAC, e.Msg)
}

// kubebuilderError locates controller-tools' first error in the text: its
// scanner reads the arguments, which are the text after the marker's name
// (and its ':') or after its first '='.
func kubebuilderError(text string, err error) *KubebuilderError {
	var list loader.ErrList
	if errors.As(err, &list) && len(list) > 0 {
		err = list[0]
	}
	var se *ctmarkers.ScannerError
	if !errors.As(err, &se) {
		return &KubebuilderError{Msg: err.Error()}
	}
	start := len(text)
	if rest, ok := strings.CutPrefix(text, KubebuilderRBAC+":"); ok && strings.Contains(rest, "=") {
		start = len(KubebuilderRBAC) + 1
	} else if i := strings.IndexByte(text, '='); i >= 0 {
		start = i + 1
	}
	return &KubebuilderError{Offset: min(len(text), start+se.Pos.Column-1), Msg: se.Msg}
}

// KubebuilderWarning returns the warning that a line comment deserves as
// a kubebuilder marker kopf-gen does not read, if it is one: a
// +kubebuilder: marker that none of the generators kopf-gen runs
// (controller-tools' CRD, object and RBAC generators) defines, with the
// closest name that they define; controller-runtime's webhook markers;
// and a near miss of a defined one ("// kubebuilder:rbac:..." without its
// '+', or "+Kubebuilder:"). kubebuilder's scaffolding markers
// (+kubebuilder:scaffold:...) are kubebuilder's command line's, and no
// warning. Where a +kubebuilder:rbac marker is read is for the model to
// tell (controller-gen reads it at package level only).
func (t *Table) KubebuilderWarning(comment string) (string, bool) {
	reg, names, err := t.kb.registry()
	if err != nil {
		return err.Error(), true
	}
	text, ok := KubebuilderText(comment)
	if !ok {
		return kubebuilderNearMiss(reg, comment)
	}
	if strings.HasPrefix(text, kubebuilderScaffold) || defined(reg, text) {
		return "", false
	}
	name, _, _ := strings.Cut(text, "=")
	if strings.HasPrefix(name, "+kubebuilder:webhook") {
		return fmt.Sprintf("kopf-gen does not read %s: it is controller-runtime's webhook; admission webhooks are //kopf:on.validate and //kopf:on.mutate handlers (docs/admission.md)", name), true
	}
	msg := fmt.Sprintf("kopf-gen does not read %s: no generator that kopf-gen runs (controller-tools' CRD, object and RBAC generators) defines it", name)
	s := Suggest(name, names)
	if i := strings.LastIndexByte(name, ':'); s == "" && i > len(KubebuilderPrefix) {
		s = Suggest(name[:i], names) // the name of a marker with arguments
	}
	if s != "" {
		msg += "; did you mean " + s + "?"
	}
	return msg, true
}

// defined reports whether controller-tools defines the marker, for any
// target.
func defined(reg *ctmarkers.Registry, text string) bool {
	for _, target := range []ctmarkers.TargetType{ctmarkers.DescribesPackage, ctmarkers.DescribesType, ctmarkers.DescribesField} {
		if reg.Lookup(text, target) != nil {
			return true
		}
	}
	return false
}

// kubebuilderNearMiss returns the warning of a comment that is a defined
// kubebuilder marker but for its '+' or its letter case.
func kubebuilderNearMiss(reg *ctmarkers.Registry, comment string) (string, bool) {
	rest, ok := strings.CutPrefix(comment, "//")
	if !ok {
		return "", false
	}
	text := strings.TrimSpace(rest)
	plus := strings.HasPrefix(text, "+")
	text = strings.TrimPrefix(text, "+")
	const word = "kubebuilder:"
	if len(text) < len(word) || !strings.EqualFold(text[:len(word)], word) {
		return "", false
	}
	fixed := KubebuilderPrefix + text[len(word):]
	if strings.HasPrefix(fixed, kubebuilderScaffold) || !defined(reg, fixed) {
		return "", false
	}
	why := "controller-gen's markers start with '+'"
	if plus {
		why = "controller-gen's markers are case-sensitive"
	}
	name, _, _ := strings.Cut(fixed, "=")
	return fmt.Sprintf("not a marker: did you mean //%s...? %s", name, why), true
}
