// Package child runs the operator that a bench command measures as a child
// process (the command itself, re-executed, or another build of it), so
// that its memory and CPU are its own, and reads the report it prints: a
// line of its standard output that is a JSON object (the last one wins).
// Its standard error goes to the bench's.
package child

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
)

// Report runs bin ("": the running executable) with the bench's
// environment plus env, and decodes its report into a T.
func Report[T any](bin string, env ...string) (T, error) {
	var rep T
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return rep, err
		}
		bin = self
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return rep, err
	}
	if err := cmd.Start(); err != nil {
		return rep, err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &rep); err != nil {
				_ = cmd.Wait()
				return rep, err
			}
		}
	}
	return rep, cmd.Wait()
}
