package pyfmt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// width is pprint's default width.
const width = 80

// Pformat returns pprint.pformat() of the value that v stands for, with
// pprint's defaults (width=80, indent=1, sort_dicts=True, compact=False):
// the repr when it fits the width; else dicts, lists and tuples one item a
// line, aligned after their opening bracket (a dict's values after their
// key), and long strings split at their line ends and spaces into
// adjacent literals, within parentheses at the top level:
//
//	{'metadata': {'labels': {'app': 'web', 'owner': 'team-a', 'tier': 'frontend'},
//	              'name': 'kopf-example-1',
//	              'namespace': 'default'},
//	 'spec': {'duration': '1m', 'field': 'value', 'items': ['item1', 'item2']}}
func Pformat(v any) string {
	var p printer
	p.format(toNode(v, 0), 0, 0, 0)
	return p.sb.String()
}

// printer is pprint.PrettyPrinter's _format and its _pprint_* methods:
// indent is the column where the value starts, allowance the characters
// that follow it on its last line (closing brackets, a comma).
type printer struct {
	sb strings.Builder
}

func (p *printer) format(n node, indent, allowance, level int) {
	rep := reprOf(n)
	if utf8.RuneCountInString(rep) > width-indent-allowance {
		switch n.kind {
		case kDict:
			p.sb.WriteByte('{')
			p.dictItems(n, indent, allowance+1, level+1)
			p.sb.WriteByte('}')
			return
		case kList:
			p.sb.WriteByte('[')
			p.items(n.items, indent, allowance+1, level+1)
			p.sb.WriteByte(']')
			return
		case kTuple:
			end := ")"
			if len(n.items) == 1 {
				end = ",)"
			}
			p.sb.WriteByte('(')
			p.items(n.items, indent, allowance+len(end), level+1)
			p.sb.WriteString(end)
			return
		case kStr:
			p.str(n.s, indent, allowance, level+1)
			return
		}
	}
	p.sb.WriteString(rep)
}

// dictItems is _format_dict_items.
func (p *printer) dictItems(n node, indent, allowance, level int) {
	indent++
	for i, key := range n.keys {
		last := i == len(n.keys)-1
		rep := reprOf(key)
		p.sb.WriteString(rep)
		p.sb.WriteString(": ")
		p.format(n.items[i], indent+utf8.RuneCountInString(rep)+2, lastAllowance(last, allowance), level)
		if !last {
			p.sb.WriteString(",\n")
			p.sb.WriteString(strings.Repeat(" ", indent))
		}
	}
}

// items is _format_items (not compact).
func (p *printer) items(items []node, indent, allowance, level int) {
	indent++
	for i, item := range items {
		if i > 0 {
			p.sb.WriteString(",\n")
			p.sb.WriteString(strings.Repeat(" ", indent))
		}
		p.format(item, indent, lastAllowance(i == len(items)-1, allowance), level)
	}
}

// lastAllowance: the last item is followed by what follows its container,
// the others by a comma.
func lastAllowance(last bool, allowance int) int {
	if last {
		return allowance
	}
	return 1
}

// str is _pprint_str: a string split at its line ends, then at its
// spaces, into literals that fit the width.
func (p *printer) str(s string, indent, allowance, level int) {
	if level == 1 {
		indent++
		allowance++
	}
	var chunks []string
	lines := splitLines(s)
	maxWidth1, maxWidth := width-indent, width-indent
	for i, line := range lines {
		lastLine := i == len(lines)-1
		if lastLine {
			maxWidth1 -= allowance
		}
		if rep := reprOf(node{kind: kStr, s: line}); utf8.RuneCountInString(rep) <= maxWidth1 {
			chunks = append(chunks, rep)
			continue
		}
		parts := splitWords(line)
		maxWidth2, current := maxWidth, ""
		for j, part := range parts {
			candidate := current + part
			if j == len(parts)-1 && lastLine {
				maxWidth2 -= allowance
			}
			if utf8.RuneCountInString(reprOf(node{kind: kStr, s: candidate})) > maxWidth2 {
				if current != "" {
					chunks = append(chunks, reprOf(node{kind: kStr, s: current}))
				}
				current = part
			} else {
				current = candidate
			}
		}
		if current != "" {
			chunks = append(chunks, reprOf(node{kind: kStr, s: current}))
		}
	}
	if len(chunks) == 1 {
		p.sb.WriteString(chunks[0])
		return
	}
	if level == 1 {
		p.sb.WriteByte('(')
	}
	for i, chunk := range chunks {
		if i > 0 {
			p.sb.WriteString("\n")
			p.sb.WriteString(strings.Repeat(" ", indent))
		}
		p.sb.WriteString(chunk)
	}
	if level == 1 {
		p.sb.WriteByte(')')
	}
}

// splitLines is Python's str.splitlines(keepends=True).
func splitLines(s string) []string {
	var lines []string
	for start, i := 0, 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '\r':
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		default:
			if i < len(s) {
				continue
			}
		}
		lines = append(lines, s[start:i])
		start = i
	}
	return lines
}

// splitWords is re.findall(r'\S*\s*', line) without its last, empty match:
// runs of non-space characters, each with the spaces that follow it.
func splitWords(line string) []string {
	var parts []string
	for start, i := 0, 0; i < len(line); start = i {
		for i < len(line) {
			r, size := utf8.DecodeRuneInString(line[i:])
			if isSpace(r) {
				break
			}
			i += size
		}
		for i < len(line) {
			r, size := utf8.DecodeRuneInString(line[i:])
			if !isSpace(r) {
				break
			}
			i += size
		}
		parts = append(parts, line[start:i])
	}
	return parts
}

// isSpace is Python's str.isspace() of one character (\s in re).
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}
