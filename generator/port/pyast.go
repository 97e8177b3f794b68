package port

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// pyastScript prints a module's AST as JSON: every node an object with
// "_type" (the class of ast), its fields, and its position (lineno,
// col_offset, end_lineno, end_col_offset); floats as {"_float": repr}.
//
//go:embed pyast.py
var pyastScript string

// Node is a node of Python's ast as pyast.py prints it.
type Node map[string]any

// Type is the node's class in Python's ast (FunctionDef, Call, Name...).
func (n Node) Type() string { s, _ := n["_type"].(string); return s }

// Is reports whether n is of one of the types.
func (n Node) Is(types ...string) bool {
	for _, t := range types {
		if n.Type() == t {
			return true
		}
	}
	return false
}

// Get is the child node of a field, nil if there is none.
func (n Node) Get(field string) Node {
	m, _ := n[field].(map[string]any)
	return m
}

// List is the list of nodes of a field.
func (n Node) List(field string) []Node {
	raw, _ := n[field].([]any)
	out := make([]Node, 0, len(raw))
	for _, r := range raw {
		m, _ := r.(map[string]any)
		out = append(out, m)
	}
	return out
}

// Str is a string field ("" if absent or not a string).
func (n Node) Str(field string) string { s, _ := n[field].(string); return s }

// Line is the node's line number (1-based).
func (n Node) Line() int { return n.int("lineno") }

func (n Node) int(field string) int {
	switch v := n[field].(type) {
	case json.Number:
		i, _ := v.Int64()
		return int(i)
	case float64:
		return int(v)
	}
	return 0
}

// Source is the node's text in the module's source.
func (n Node) Source(lines []string) string {
	l1, c1, l2, c2 := n.Line(), n.int("col_offset"), n.int("end_lineno"), n.int("end_col_offset")
	if l1 < 1 || l2 > len(lines) || l2 < l1 {
		return ""
	}
	if l1 == l2 {
		return byteSlice(lines[l1-1], c1, c2)
	}
	parts := []string{byteSlice(lines[l1-1], c1, -1)}
	parts = append(parts, lines[l1:l2-1]...)
	parts = append(parts, byteSlice(lines[l2-1], 0, c2))
	return strings.Join(parts, "\n")
}

// byteSlice cuts a line at byte offsets (Python's col_offset counts UTF-8
// bytes); end -1 is the end of the line.
func byteSlice(s string, start, end int) string {
	if end < 0 || end > len(s) {
		end = len(s)
	}
	if start > end {
		return ""
	}
	return s[start:end]
}

// ErrNoPython is returned when the interpreter cannot be run.
var ErrNoPython = errors.New("kopf-gen port parses Python with python3's own ast module: it needs Python 3.8 or newer (for the ast of f-strings), given with --python or found on PATH as python3")

// Module is a parsed Python file.
type Module struct {
	Path  string
	AST   Node
	Lines []string
}

// ParseFile parses a Python file with the interpreter python.
func ParseFile(ctx context.Context, python, path string) (*Module, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	exe, err := exec.LookPath(python)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoPython, err)
	}
	// -I (isolated): neither the current directory nor PYTHON* variables
	// reach sys.path, so that a file of the operator named like a module
	// of the standard library (operator.py, ast.py) is not imported by ast.
	cmd := exec.CommandContext(ctx, exe, "-I", "-c", pyastScript, path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		msg := strings.TrimSpace(stderr.String())
		switch {
		case strings.Contains(msg, "Unknown option"): // Python 2 has no -I
			return nil, fmt.Errorf("%w: %s is not Python 3", ErrNoPython, exe)
		case errors.As(err, &exit) && exit.ExitCode() == 2:
			return nil, fmt.Errorf("%s", msg)
		case errors.As(err, &exit) && exit.ExitCode() == 3:
			return nil, fmt.Errorf("%w: %s", ErrNoPython, msg)
		case strings.Contains(msg, "SyntaxError") && strings.Contains(msg, "print"):
			return nil, fmt.Errorf("%w: %s is Python 2", ErrNoPython, exe)
		}
		return nil, fmt.Errorf("parsing %s with %s: %w: %s", path, exe, err, msg)
	}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("parsing %s: reading the AST from %s: %w", path, exe, err)
	}
	return &Module{Path: path, AST: tree, Lines: strings.Split(string(src), "\n")}, nil
}
