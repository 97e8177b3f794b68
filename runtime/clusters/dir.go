package clusters

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// DefaultDirInterval is how often KubeconfigDir reads its directory when
// DirOptions.Interval is not set.
const DefaultDirInterval = 10 * time.Second

// DirOptions tune KubeconfigDir.
type DirOptions struct {
	// Interval is how often the directory is read again (default
	// DefaultDirInterval, 10 s): a file added, changed or removed is
	// engaged, re-engaged or disengaged within one interval.
	Interval time.Duration
	// Logger receives the clusters engaged and disengaged and the files
	// skipped (nil: slog.Default()).
	Logger *slog.Logger
}

// KubeconfigDir returns a Provider of one cluster per kubeconfig file in
// the directory dir.
//
// The files: every regular file of dir (or symbolic link to one, as in a
// Secret or ConfigMap mounted as a volume), not in its subdirectories, whose
// name does not start with a dot. The cluster's name is the file's name
// less its extension ("prod-eu.yaml", "prod-eu.kubeconfig" and "prod-eu"
// all name "prod-eu"; of two files of one name, the first in the order of
// their file names is used and the other skipped). Its Config is the
// file's current context (FromKubeconfig: relative paths are resolved
// against dir).
//
// Run reads the directory at its start (an unreadable directory is Run's
// error) and then every Interval, comparing each file's content by its
// hash: a new file is engaged, a changed one engaged again with its new
// Config (Sink.Engage's rule), a removed one disengaged. The files that a
// kubeconfig refers to (certificates, keys, tokens) are not watched: a
// change of them alone is not seen. A file that cannot be read or is not a
// kubeconfig with a current context is logged (its name and the cause,
// once per content) and skipped: if its cluster was engaged, it stays
// engaged with its last good Config, so that a file caught half-written
// does not stop a cluster. A directory that becomes unreadable later is
// logged and read again at the next interval, its clusters left engaged.
//
// The directory is polled rather than watched with inotify: the module
// graph of kopf-go has no file-notification library, and polling is also
// what works for the symbolic links that Kubernetes swaps in a mounted
// volume.
func KubeconfigDir(dir string, opts DirOptions) Provider {
	if opts.Interval <= 0 {
		opts.Interval = DefaultDirInterval
	}
	opts.Logger = logger(opts.Logger)
	return &dirProvider{dir: dir, opts: opts}
}

type dirProvider struct {
	dir  string
	opts DirOptions
}

// Run implements Provider.
func (p *dirProvider) Run(ctx context.Context, sink Sink) error {
	if _, err := os.ReadDir(p.dir); err != nil {
		return fmt.Errorf("clusters: reading the kubeconfig directory: %w", err)
	}
	e := newEngaged(sink, p.opts.Logger)
	bad := map[string]string{} // file → the hash of the content logged as bad
	t := time.NewTicker(p.opts.Interval)
	defer t.Stop()
	for {
		if want, err := p.scan(e, bad); err != nil {
			p.opts.Logger.Error(fmt.Sprintf("The kubeconfig directory %s could not be read: %v", p.dir, err))
		} else {
			e.sync(ctx, want)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// scan reads the directory: the clusters of its good files, and of its
// bad files the clusters engaged already (kept as they are). bad keeps
// the files logged as bad, so that each bad content is logged once.
func (p *dirProvider) scan(e *engaged, bad map[string]string) (map[string]wanted, error) {
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	want := map[string]wanted{}
	from := map[string]string{} // cluster name → its file
	for _, entry := range entries {
		file := entry.Name()
		path := filepath.Join(p.dir, file)
		if strings.HasPrefix(file, ".") {
			continue
		}
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			continue // a directory, or a dangling link of a volume's swap
		}
		name := strings.TrimSuffix(file, filepath.Ext(file))
		if other, ok := from[name]; ok {
			p.skip(bad, file, "-", fmt.Errorf("its cluster name %q is %s's already", name, other))
			continue
		}
		from[name] = file
		data, err := os.ReadFile(path)
		sum := sha256.Sum256(data)
		version := hex.EncodeToString(sum[:])
		var cfg Cluster
		if err == nil {
			cfg.Config, err = FromKubeconfig(data, path)
		}
		if err != nil {
			p.skip(bad, file, version, err)
			if v, ok := e.version(name); ok {
				want[name] = wanted{version: v}
			}
			continue
		}
		delete(bad, file)
		cfg.Name = name
		want[name] = wanted{cluster: cfg, version: version}
	}
	return want, nil
}

// skip logs a bad file, once for each of its contents.
func (p *dirProvider) skip(bad map[string]string, file, version string, err error) {
	if bad[file] == version {
		return
	}
	bad[file] = version
	p.opts.Logger.Error(fmt.Sprintf("The kubeconfig file %s is skipped: %v", filepath.Join(p.dir, file), err))
}
