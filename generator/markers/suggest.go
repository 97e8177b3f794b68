package markers

// This file is the one place where kopf-gen decides whether a name is a
// likely typo of another: every "did you mean" of the generator (marker
// names, argument names, near-miss markers, field paths, resources,
// callbacks) goes through Suggest or SuggestWithin.

// Suggest returns the candidate closest to s by edit distance, if it is
// close enough to be a likely typo, or "". Close enough is a distance of at
// most a third of s's length, at least 1 and at most 3; the distance
// counts insertions, deletions, substitutions and transpositions of
// adjacent bytes (so "craete" is 1 from "create"). Ties go to the earlier
// candidate.
func Suggest(s string, candidates []string) string { return suggest(s, candidates) }

// SuggestWithin is Suggest with a stricter bound: a candidate must also be
// at most limit edits away. It is for names where a near miss is an error
// although a different name could be legal (resources).
func SuggestWithin(s string, candidates []string, limit int) string {
	return closest(s, candidates, min(limit, defaultLimit(s)))
}

func suggest(s string, candidates []string) string {
	return closest(s, candidates, defaultLimit(s))
}

func defaultLimit(s string) int { return min(3, max(1, len(s)/3)) }

// closest returns the candidate nearest to s within limit edits, or "".
// s itself is never suggested.
func closest(s string, candidates []string, limit int) string {
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if c == s {
			continue
		}
		if d := distance(s, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// distance is the optimal string alignment distance between a and b, in
// bytes: the Levenshtein distance where swapping two adjacent bytes also
// costs one edit.
func distance(a, b string) int {
	// Three rows: the one before the previous is for transpositions.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
