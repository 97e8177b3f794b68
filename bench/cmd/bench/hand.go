package main

import (
	"os"
	"strings"
)

// generatedSections are the titles (prefixes) of the `## ` sections that
// writeReport writes; every other `## ` section of RESULTS.md was written
// by hand (findings of other benchmarks, such as cmd/daemons's) and is
// kept when the report is regenerated.
var generatedSections = []string{
	"How it is measured",
	"Catch-up throughput",
	"Update throughput",
	"Latency on a fixed creation schedule",
	"Latency (ms", // the title before issue 17
	"Memory and CPU",
	"API requests per handled object",
	"The issue's goals",
	"The machine's load during each pass",
	"Failed runs",
	"CPU profiles",
}

// keepHandSections returns generated with the hand-written sections of the
// file at path (if any) appended, in their order.
func keepHandSections(path, generated string) string {
	old, err := os.ReadFile(path)
	if err != nil {
		return generated
	}
	hand := handSections(string(old))
	if len(hand) == 0 {
		return generated
	}
	return strings.TrimRight(generated, "\n") + "\n\n" + strings.Join(hand, "\n\n") + "\n"
}

// handSections splits a report into its `## ` sections (outside code
// fences) and returns those whose title is not a generated one, each
// without trailing blank lines.
func handSections(text string) []string {
	var sections []string
	var cur []string
	fenced := false
	flush := func() {
		if len(cur) == 0 {
			return
		}
		title := strings.TrimPrefix(cur[0], "## ")
		generated := false
		for _, g := range generatedSections {
			if strings.HasPrefix(title, g) {
				generated = true
			}
		}
		if !generated {
			sections = append(sections, strings.TrimRight(strings.Join(cur, "\n"), "\n "))
		}
		cur = nil
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "## ") {
			flush()
			cur = []string{line}
			continue
		}
		if cur != nil {
			cur = append(cur, line)
		}
	}
	flush()
	return sections
}
