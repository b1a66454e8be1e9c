package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockName is the data directory's lock file: a daemon holds an exclusive flock(2) on it while it
// runs, with its pid written inside. The kernel drops the lock when the process ends, however it
// ends (SIGKILL too), so a stale file never blocks a start.
const lockName = "schedulerd.lock"

// errLocked is returned when another process holds the data directory's lock.
var errLocked = errors.New("the data directory is in use")

// dirLock is a held lock on a data directory.
type dirLock struct{ f *os.File }

// lockDir takes the exclusive lock on dir (which must exist) without waiting. When another
// process holds it the error wraps errLocked and names that process's pid.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: data directory %s is used by another schedulerd (pid %s, lock %s); "+
				"stop it first, or give this one its own --data", errLocked, dir, lockHolder(path), path)
		}
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(pid, 0)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	return &dirLock{f: f}, nil
}

// lockHolder returns the pid written in a lock file ("unknown" when it cannot be read).
func lockHolder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	if pid := strings.TrimSpace(string(b)); pid != "" {
		return pid
	}
	return "unknown"
}

// release gives the lock up. The file stays: removing it would let a process that opened it
// meanwhile lock a file no one else can find.
func (l *dirLock) release() {
	_ = l.f.Close()
}
