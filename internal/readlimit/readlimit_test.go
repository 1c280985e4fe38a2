package readlimit

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		path    string
		limit   int64
		regular bool
		want    string // content, or a part of the error
		ok      bool
	}{
		{"within the limit", small, 5, true, "12345", true},
		{"empty file", filepath.Join(dir, "empty"), 0, true, "", true},
		{"over the limit", small, 4, false, "5 bytes, more than the limit of 4 bytes", false},
		{"missing", filepath.Join(dir, "nope"), 10, false, "no such file", false},
		{"directory", dir, 10, false, "is a directory", false},
		{"device, stream", "/dev/zero", 1 << 10, false, "more than the limit of 1 KiB", false},
		{"device, regular required", "/dev/zero", 1 << 10, true, "not a regular file", false},
	} {
		if c.name == "empty file" {
			if err := os.WriteFile(c.path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasPrefix(c.path, "/dev/") {
			if _, err := os.Stat(c.path); err != nil {
				t.Logf("%s: skipped: %v", c.name, err)
				continue
			}
		}
		b, err := File(c.path, c.limit, c.regular)
		switch {
		case c.ok && (err != nil || string(b) != c.want):
			t.Errorf("%s: %q, %v; want %q", c.name, b, err, c.want)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path)):
			t.Errorf("%s: %q, %v; want an error naming the file with %q", c.name, b, err, c.want)
		}
		if strings.Contains(c.want, "limit") && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v does not wrap ErrTooLarge", c.name, err)
		}
	}
	if _, err := File(filepath.Join(dir, "nope"), 1, false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v does not match os.ErrNotExist", err)
	}
}

func TestAll(t *testing.T) {
	data := bytes.Repeat([]byte("abc"), 1000)
	for _, limit := range []int64{0, 1, 2999, 3000, 3001, 1 << 20} {
		// One byte at a time, to cross the buffer's growth at every size.
		b, err := All(iotest.OneByteReader(bytes.NewReader(data)), "r", limit)
		if limit >= 3000 {
			if err != nil || !bytes.Equal(b, data) {
				t.Errorf("limit %d: %d bytes, %v", limit, len(b), err)
			}
		} else if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), "r: ") {
			t.Errorf("limit %d: %d bytes, %v; want ErrTooLarge naming r", limit, len(b), err)
		}
	}
	if _, err := All(iotest.ErrReader(io.ErrUnexpectedEOF), "r", 10); !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "r: ") {
		t.Errorf("failing reader: %v", err)
	}
}

func TestReader(t *testing.T) {
	data := bytes.Repeat([]byte("abc"), 1000)
	for _, limit := range []int64{0, 1, 2999, 3000, 3001} {
		b, err := io.ReadAll(Reader(iotest.OneByteReader(bytes.NewReader(data)), "r", limit))
		if limit >= 3000 {
			if err != nil || !bytes.Equal(b, data) {
				t.Errorf("limit %d: %d bytes, %v", limit, len(b), err)
			}
		} else if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), "r: ") || int64(len(b)) != limit {
			t.Errorf("limit %d: %d bytes, %v; want ErrTooLarge after the limit", limit, len(b), err)
		}
	}
}
