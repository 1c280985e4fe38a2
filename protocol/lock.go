package protocol

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// LockFile is the file of a run directory that LockDir locks, there while
// a process holds the directory (or after a process holding it was
// killed: the lock is free all the same). It holds the process id and
// command line of the holder; it is not a file of the run, and PrepareRun
// ignores it.
const LockFile = ".lock"

// ErrLocked is returned (wrapped) by LockDir when another process holds
// the directory.
var ErrLocked = errors.New("run directory in use by another process")

// DirLock is an exclusive lock on a run directory, held from LockDir until
// Release or the end of the process.
type DirLock struct {
	f    *os.File
	path string
	// Dir is the locked directory.
	Dir string
	// Removed are the temporary files of atomic writes (a checkpoint, a
	// model, …) that a process killed while writing them had left in Dir,
	// which LockDir removed.
	Removed []string
}

// LockDir creates dir if it is absent and takes an exclusive lock on it,
// so that no two processes run in one directory side by side: the lock
// is flock(2) on dir/.lock (LockFile), which Release removes and the
// kernel releases when the process ends, however it ends. When another process holds the lock, the
// error wraps ErrLocked and names dir and that process (its id and command
// line). With the lock held, LockDir removes the temporary files that a
// process killed while writing a file atomically left in dir, listing them
// in DirLock.Removed. On systems without flock(2) there is no lock.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockFile)
	var f *os.File
	for {
		var err error
		if f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666); err != nil {
			if errors.Is(err, os.ErrPermission) {
				return nil, fmt.Errorf("%s is not writable: %w", dir, err)
			}
			return nil, err
		}
		held, err := flock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !held {
			b, _ := readlimit.File(path, 1<<16, true)
			f.Close()
			holder := strings.TrimSpace(string(b))
			if holder == "" {
				holder = "unknown process"
			}
			return nil, fmt.Errorf("%s: %w (%s; lock file %s): wait for it to end or stop it", dir, ErrLocked, holder, path)
		}
		// The holder before us removes the file when it releases it: the
		// lock is ours only if path is still the file we locked.
		fi, err1 := f.Stat()
		pi, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(fi, pi) {
			break
		}
		f.Close()
	}
	l := &DirLock{f: f, Dir: dir, path: path}
	// Say who holds the lock, for the error of the next process.
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "process %d: %s\n", os.Getpid(), strings.Join(os.Args, " "))
	}
	var err error
	if l.Removed, err = atomicfile.RemoveTemps(dir); err != nil {
		l.Release()
		return nil, fmt.Errorf("%s: removing temporary files: %w", dir, err)
	}
	return l, nil
}

// LockHolder reports whether another process holds the lock of dir
// (LockDir), and which (its id and command line, as the lock file
// says), without taking the lock or changing anything in dir.
func LockHolder(dir string) (holder string, held bool) {
	path := filepath.Join(dir, LockFile)
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close() // releases the lock taken below, if it was
	if ok, err := flock(f); err != nil || ok {
		return "", false
	}
	b, _ := readlimit.File(path, 1<<16, true)
	return strings.TrimSpace(string(b)), true
}

// Release removes the lock file and releases the lock; a nil lock, or one
// released already, is ignored.
func (l *DirLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close() // closing the last descriptor releases flock(2)
	l.f = nil
}
