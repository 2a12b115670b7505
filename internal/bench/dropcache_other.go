//go:build !linux

package bench

import "errors"

// DropPageCache is implemented on Linux only.
func DropPageCache(path string) error {
	return errors.New("bench: dropping the page cache is implemented on Linux only")
}
