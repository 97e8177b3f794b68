package markers

import (
	"strings"
)

// NearMiss reports whether a line comment that is not a marker is most
// likely a misspelt one, and if so returns the warning to give: what to
// write instead, and why the comment is not a marker. text is the
// comment's whole text including "//" (ast.Comment.Text).
//
// A comment is a near miss when, after "//", it has the prefix "kopf:" in
// any letter case, preceded by spaces, tabs or a '+' (kubebuilder's
// style), with spaces allowed around the colon, and the word after the
// colon is the name of a marker (defined or planned) or close to one (see
// [Suggest]). So "// kopf:on.create x", "//+kopf:on.create x",
// "// Kopf : on.craete x" are near misses, while prose ("// kopf: this is
// great", "// Kopf's on.create handlers"), a marker quoted in prose
// ("// see //kopf:on.create"), and a marker commented out on purpose
// ("// //kopf:on.create x") are not. Block comments are never near misses.
func (t *Table) NearMiss(text string) (string, bool) {
	if IsMarker(text) || !strings.HasPrefix(text, "//") {
		return "", false
	}
	rest := text[len("//"):]
	var faults []string
	if r := trimSpace(rest); len(r) < len(rest) {
		faults = append(faults, "markers have no space after //")
		rest = r
	}
	if r, ok := strings.CutPrefix(rest, "+"); ok {
		faults = append(faults, "markers have no '+' (that is kubebuilder's style)")
		rest = trimSpace(r)
	}
	const word = "kopf"
	if len(rest) < len(word) || !strings.EqualFold(rest[:len(word)], word) {
		return "", false
	}
	if rest[:len(word)] != word {
		faults = append(faults, "markers are lower case")
	}
	rest = rest[len(word):]
	spaced := false
	if r := trimSpace(rest); len(r) < len(rest) {
		spaced, rest = true, r
	}
	rest, ok := strings.CutPrefix(rest, ":")
	if !ok {
		return "", false
	}
	if r := trimSpace(rest); len(r) < len(rest) {
		spaced, rest = true, r
	}
	if spaced {
		faults = append(faults, "markers have no space around the colon")
	}
	name := t.markerName(firstWord(rest))
	if name == "" {
		return "", false
	}
	return "not a marker: did you mean " + Prefix + name + "? " + strings.Join(faults, "; "), true
}

func trimSpace(s string) string { return strings.TrimLeft(s, " \t") }
