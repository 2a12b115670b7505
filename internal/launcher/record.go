package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// recordVersion is the version of cluster.json this code writes and
// reads.
const recordVersion = 1

// recordFile is the cluster's record in its directory.
const recordFile = "cluster.json"

// maxRecordSize bounds cluster.json.
const maxRecordSize = 1 << 20

// ErrNoCluster is returned when a directory holds no cluster record.
var ErrNoCluster = errors.New("launcher: no cluster")

// loadRecord reads DIR/cluster.json. A missing file is ErrNoCluster.
func loadRecord(dir string) (*Cluster, error) {
	path := filepath.Join(dir, recordFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s (start one with cuttle cluster up)", ErrNoCluster, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("launcher: %w", err)
	}
	return parseRecord(path, b)
}

// parseRecord decodes and checks a cluster record.
func parseRecord(path string, b []byte) (*Cluster, error) {
	if len(b) > maxRecordSize {
		return nil, fmt.Errorf("launcher: %s: %d bytes (limit %d)", path, len(b), maxRecordSize)
	}
	var c Cluster
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("launcher: %s: %w", path, err)
	}
	if c.Version != recordVersion {
		return nil, fmt.Errorf("launcher: %s: version %d (this cuttle reads %d)", path, c.Version, recordVersion)
	}
	if len(c.Daemons) == 0 {
		return nil, fmt.Errorf("launcher: %s: no daemons", path)
	}
	seen := map[string]bool{}
	for _, d := range c.Daemons {
		if d.Kind == "" || d.ID == "" || len(d.Args) == 0 || !filepath.IsAbs(d.Log) {
			return nil, fmt.Errorf("launcher: %s: incomplete daemon %q", path, d.Name())
		}
		if !validName(d.Name()) || seen[d.Name()] {
			return nil, fmt.Errorf("launcher: %s: bad or repeated daemon name %q", path, d.Name())
		}
		seen[d.Name()] = true
	}
	return &c, nil
}

// validName reports whether a daemon name is safe as a file name.
func validName(s string) bool {
	if s == "" || s[0] == '.' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// saveRecord writes DIR/cluster.json atomically.
func saveRecord(c *Cluster) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("launcher: %w", err)
	}
	return writeFileAtomic(filepath.Join(c.Dir, recordFile), append(b, '\n'), 0o644)
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place.
func writeFileAtomic(path string, data []byte, mode os.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("launcher: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("launcher: %w", err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("launcher: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("launcher: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("launcher: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("launcher: %w", err)
	}
	return nil
}
