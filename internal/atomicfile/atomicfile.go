// Package atomicfile writes files so that a reader (or a process restarted
// after a crash) sees either the old content or the new, never a mix: it
// writes a temporary file in the same directory, syncs it, and renames it
// over the target.
//
// The file is created with mode 0666 less the process's umask (0644 under
// the usual umask 022), as os.Create and os.WriteFile(path, data, 0666) do,
// whatever the mode of the file it replaces.
//
// A path that is a symbolic link writes the file it points to (the link
// stays a link); a path that is, or whose link points to, something other
// than a regular file (a directory, a named pipe, a device) is an error,
// and nothing is replaced.
package atomicfile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// perm is the mode the temporary file is created with; the kernel
// removes the umask's bits from it.
const perm = 0o666

// createTemp creates a new temporary file next to path, named
// ".<base>.tmp<random>", with mode perm less the umask. Unlike
// os.CreateTemp, which always creates mode 0600, it lets the umask decide,
// and it never changes the process's umask (which would race with other
// goroutines creating files).
func createTemp(dir, base string) (*os.File, error) {
	var err error
	for range 100 {
		var rnd [8]byte
		if _, err = rand.Read(rnd[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, "."+base+".tmp"+hex.EncodeToString(rnd[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			// Name the file being written, not the temporary one:
			// "open DIR/.NAME.tmp…: no such file or directory" would
			// hide which path was meant.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, &fs.PathError{Op: "create", Path: filepath.Join(dir, base), Err: pe.Err}
			}
			return nil, err
		}
	}
	return nil, fmt.Errorf("atomicfile: no unused temporary name for %s: %w", filepath.Join(dir, base), err)
}

// Write creates or replaces path with what write produces. On any error the
// target is left as it was and the temporary file is removed.
func Write(path string, write func(w io.Writer) error) (err error) {
	if path, err = target(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := createTemp(dir, filepath.Base(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	// Make the rename durable.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// target returns the file that Write replaces for path: path itself, or
// the file its symbolic links lead to; an error if that exists and is not
// a regular file.
func target(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return path, nil // absent (or unreadable: the write says why)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", fmt.Errorf("atomicfile: %s is a symbolic link that leads nowhere: %w", path, err)
		}
		if fi, err = os.Stat(resolved); err != nil {
			return "", fmt.Errorf("atomicfile: %w", err)
		}
		path = resolved
	}
	switch {
	case fi.IsDir():
		return "", fmt.Errorf("%s is a directory, not a file: not replaced", path)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file (%v): not replaced", path, fi.Mode().Type())
	}
	return path, nil
}

// CheckWritable reports, before anything is computed for it, an error
// that Write would give for path because of where it is: a path that is
// a directory or another file that is not a regular one, or a directory
// where a file cannot be created (absent, not a directory, not writable).
// It creates and removes a temporary file beside path; path itself is
// not touched.
func CheckWritable(path string) error {
	path, err := target(path)
	if err != nil {
		return err
	}
	f, err := createTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// WriteBytes is Write for a byte slice.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// IsTemp reports whether name (a file name without directory) is that of
// a temporary file Write creates: ".<base>.tmp" and 16 hexadecimal digits.
// Such a file outlives Write only when the process is killed during it.
func IsTemp(name string) bool {
	const suffix = 16
	i := len(name) - suffix - len(".tmp")
	if len(name) < 2 || name[0] != '.' || i < 2 || name[i:i+len(".tmp")] != ".tmp" {
		return false
	}
	for _, c := range name[i+len(".tmp"):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// RemoveTemps removes the temporary files of Write (see IsTemp) from dir,
// and returns their paths. It must run only when no process is writing in
// dir (under a lock, say): it cannot tell a killed process's file from a
// live one's.
func RemoveTemps(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if e.Type().IsRegular() && IsTemp(e.Name()) {
			p := filepath.Join(dir, e.Name())
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return removed, err
			}
			removed = append(removed, p)
		}
	}
	return removed, nil
}
