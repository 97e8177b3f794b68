// Package buildinfo tells which published version of a kopf-go module the
// running binary was built with, from the build information that the go
// command records in every binary (runtime/debug.ReadBuildInfo).
//
// A binary built from a module proxy (go install
// github.com/kopf-go/kopf/cmd/kopf-gen@v0.1.0; an operator whose go.mod
// requires github.com/kopf-go/kopf v0.1.0) knows the versions it was built
// at; a binary built from a checkout, whose go.mod replaces kopf-go's
// modules with directories, and a test of a module itself do not, and
// report the version under development instead.
package buildinfo

import "runtime/debug"

// ModuleVersion is the version of the module at path that the running
// binary was built with, if the binary links it (as its main module or a
// dependency), not replaced, at a module version (v0.1.0, a pseudo-version);
// else "" (its version is then "(devel)" or none).
func ModuleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, m := range append([]*debug.Module{&info.Main}, info.Deps...) {
		if m.Path == path && m.Replace == nil && isVersion(m.Version) {
			return m.Version
		}
	}
	return ""
}

// isVersion reports whether v is a module version (v<digit>...), not
// "(devel)" nor "". The go command records only valid module versions.
func isVersion(v string) bool { return len(v) > 1 && v[0] == 'v' && v[1] >= '0' && v[1] <= '9' }
