// Package readlimit reads whole files and streams with a limit on their
// size, so that a file given by mistake (a device such as /dev/zero, a
// huge file, a pipe that does not end) is refused with an error naming it
// instead of exhausting the memory.
package readlimit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is wrapped by the errors of content over its limit.
var ErrTooLarge = errors.New("too large")

// Limits of the files the programs read whole.
const (
	// JSON is the limit of the settings, manifests and reports that the
	// programs write and read back (run.json, sweep.json, …).
	JSON = 64 << 20
	// Text is the limit of a user's text file read whole (a grammar or a
	// file of strings).
	Text = 1 << 30
)

// File reads the named file, of at most limit bytes. A larger regular
// file is refused before it is read, and any other file (a device, a
// pipe) after limit+1 bytes. With regular, a file that is not a regular
// file is refused. Errors name the file; those about the size wrap
// ErrTooLarge, and a missing file gives an error that matches
// os.ErrNotExist.
func File(path string, limit int64, regular bool) ([]byte, error) {
	if regular {
		// Before the open, which blocks on a named pipe until it has a
		// writer.
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%v)", path, fi.Mode().Type())
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory, not a file", path)
	case fi.Mode().IsRegular() && fi.Size() > limit:
		return nil, tooLarge(path, fmt.Sprintf("%d bytes, ", fi.Size()), limit)
	case !fi.Mode().IsRegular() && regular:
		return nil, fmt.Errorf("%s: not a regular file (%v)", path, fi.Mode().Type())
	}
	var b []byte
	if fi.Mode().IsRegular() {
		b = make([]byte, 0, fi.Size()+bytes.MinRead) // room to see the end without growing
	}
	return readAll(f, b, path, limit)
}

// All reads r to its end, at most limit bytes: more is an error naming
// name and wrapping ErrTooLarge, returned after reading limit+1 bytes.
func All(r io.Reader, name string, limit int64) ([]byte, error) {
	return readAll(r, nil, name, limit)
}

func readAll(r io.Reader, b []byte, name string, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if _, err := buf.ReadFrom(Reader(r, name, limit)); errors.Is(err, ErrTooLarge) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return buf.Bytes(), nil
}

func tooLarge(name, size string, limit int64) error {
	return fmt.Errorf("%s: %w: %smore than the limit of %s", name, ErrTooLarge, size, formatBytes(limit))
}

// formatBytes writes n in the largest binary unit that divides it, or in
// bytes.
func formatBytes(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Reader returns a reader of r that gives r's bytes until limit of them,
// and then, if r has more, an error naming name and wrapping ErrTooLarge:
// for a stream read as it goes (a file of strings, standard input).
func Reader(r io.Reader, name string, limit int64) io.Reader {
	return &limited{r: r, name: name, limit: limit, left: limit}
}

type limited struct {
	r           io.Reader
	name        string
	limit, left int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// One byte more than the limit means too much.
		var one [1]byte
		n, err := l.r.Read(one[:])
		if n > 0 {
			return 0, tooLarge(l.name, "", l.limit)
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
