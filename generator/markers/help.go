package markers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// grammarHelp summarises the syntax for `kopf-gen markers`; the package doc
// is the full specification.
const grammarHelp = `Markers are line comments in the doc comment of a declaration:

	//kopf:NAME POSITIONAL... KEY=VALUE...

Values: bare words (no spaces), Go strings ("two words", ` + "`raw`" + `), integers,
floats, booleans (true, false), durations (1.5s, 2m, 1h30m, or 90 meaning
seconds), maps {k: v, ...} and lists [a, b]. Unknown markers and arguments are
errors, reported as file:line:col.

Resource selectors: plural, kind, plural.group, plural.version.group,
group/version/plural, group/plural, v1/plural (the core group).
`

// WriteHelp writes the help for every marker of the table: the grammar,
// then each marker's usage, targets, summary and arguments.
func WriteHelp(w io.Writer, t *Table) error {
	var b strings.Builder
	b.WriteString(grammarHelp)
	for _, d := range t.defs {
		b.WriteString("\n")
		fmt.Fprintf(&b, "%s\n", d.Usage())
		fmt.Fprintf(&b, "    %s.\n", capitalize(d.Summary))
		fmt.Fprintf(&b, "    Applies to: %s.\n", d.Targets)
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, a := range d.Positional {
			fmt.Fprintf(tw, "    %s\t%s\trequired\t%s\n", a.Syntax(true), a.Type, a.Doc)
		}
		for _, a := range d.Args {
			typ := a.valueSyntax()
			if a.Positive {
				typ += ", > 0"
				if a.Type == TypeString {
					typ = "string, non-empty"
				}
			}
			fmt.Fprintf(tw, "    %s\t%s\tdefault: %s\t%s\n", a.Name, typ, a.Default, a.Doc)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("formatting the help of %s: %w", d.Name, err)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the markers' help: %w", err)
	}
	return nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
