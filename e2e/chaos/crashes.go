package chaos

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// crashMarks begin the lines that the Go runtime writes to stderr when a
// process dies of a panic or a fatal error, or when the race detector
// (an operator built with -race) finds a data race.
var crashMarks = []string{"panic: ", "fatal error: ", "WARNING: DATA RACE"}

// Crashes returns the lines of an operator's log that tell of a panic
// that killed it, a fatal error, or a data race, each prefixed with its
// line number. The operator's own log lines never begin so: they begin
// with a time or a JSON brace.
func Crashes(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		for _, mark := range crashMarks {
			if strings.HasPrefix(line, mark) {
				out = append(out, fmt.Sprintf("%d: %s", n, line))
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading the log: %w", err)
	}
	return out, nil
}
