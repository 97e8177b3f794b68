package filters

import (
	"sort"
	"strings"
)

func sortedKeys(m map[string]Matcher) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func join(parts []string) string { return strings.Join(parts, ",") }
