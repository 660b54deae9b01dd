package docstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// A log is an append-only file of records (logformat.go). Append writes one
// record and, when sync is set, fsyncs before returning, so an acknowledged
// record survives a crash. A record is the unit of atomicity: replay
// applies a record wholly or not at all.
//
// Only the end of a log is ever being written, so a crash can leave damage
// only there: a torn tail, a short or failing last stretch with no intact
// record after it, which was never acknowledged and is cut off on open.
// Damage followed by an intact record is corruption (a flipped bit, a bad
// disk block, an edited file): open refuses it with a *CorruptError and
// leaves the file byte for byte as it was, as etcd's WAL does, rather than
// drop the acknowledged records after it as RocksDB's point-in-time
// recovery would; Repair salvages every intact record, offline.
type log struct {
	f    *os.File
	w    file // f, or a test's faulty file
	path string
	sync bool
	size int64
	// migrated is set when open rewrote a format-1 log in format 2.
	migrated bool
	// broken is set when a failed append could not be undone or an fsync
	// failed: after a failed fsync the kernel may have dropped the pages
	// and marked them clean, so what is on disk is unknown and a retry
	// cannot tell; every later append fails until the log is reopened.
	broken error
}

// file is what appends use of the log's file.
type file interface {
	Write([]byte) (int, error)
	Truncate(int64) error
	Seek(int64, int) (int64, error)
	Sync() error
}

// wrapFile makes the file appends write through (tests inject faults).
var wrapFile = func(f *os.File) file { return f }

// ErrLocked is Open's error when another process holds the store's log.
var ErrLocked = errors.New("the document log is held by another process (another dmar serve on the same --state folder)")

type logOptions struct {
	sync bool // fsync appends, and lock the file against a second process
	// salvage keeps the intact records before damage that is followed by
	// intact ones, and drops the rest, instead of refusing: for a cache,
	// whose records can all be computed again.
	salvage bool
}

// openLog opens (creating) the log at path and calls each with every
// record of its intact prefix, in order. It returns how many bytes of torn
// tail were cut off. A log damaged before its end is refused with a
// *CorruptError (unless o.salvage) and left as it was; a log in format 1 is
// rewritten in format 2.
func openLog(path string, o logOptions, each func([]byte) error) (*log, int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, 0, err
	}
	f, err := openLocked(path, o.sync)
	if err != nil {
		return nil, 0, err
	}
	l, torn, err := openFile(path, f, o, each)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return l, torn, nil
}

func openFile(path string, f *os.File, o logOptions, each func([]byte) error) (*log, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	res, err := scanLog(f, st.Size(), func(p []byte, _ int64, after bool) error {
		if after {
			return nil
		}
		return each(p)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("replay %s: %w", path, err)
	}
	if res.corrupt() && !o.salvage {
		return nil, 0, &CorruptError{Log: path, Damage: res.damage[0], Before: len(res.prefix), After: res.after, AfterAt: res.afterAt, Unknown: res.unknown}
	}
	torn := res.size - res.good
	l := &log{f: f, path: path, sync: o.sync, size: res.good}
	switch {
	case res.version == 1:
		// Rewritten in format 2 (the intact prefix), then reopened: the
		// new file is another inode, so it is locked anew.
		if err := writeLog(path, len(res.prefix), func(i int) ([]byte, error) {
			p := make([]byte, res.prefix[i].n)
			_, err := f.ReadAt(p, res.prefix[i].at)
			return p, err
		}); err != nil {
			return nil, 0, fmt.Errorf("rewrite %s in format 2: %w", path, err)
		}
		nf, err := openLocked(path, o.sync)
		if err != nil {
			return nil, 0, err
		}
		f.Close()
		st, err := nf.Stat()
		if err != nil {
			nf.Close()
			return nil, 0, err
		}
		l.f, l.size, l.migrated = nf, st.Size(), true
	case res.good < int64(len(fileHeader)):
		// New, or its header was cut off by a crash: no record yet.
		if err := f.Truncate(0); err != nil {
			return nil, 0, err
		}
		if _, err := f.WriteAt([]byte(fileHeader), 0); err != nil {
			return nil, 0, err
		}
		l.size, torn = int64(len(fileHeader)), res.size
		if o.sync {
			if err := f.Sync(); err != nil {
				return nil, 0, err
			}
			// A new file's name must be durable too.
			if err := syncDir(filepath.Dir(path)); err != nil {
				return nil, 0, err
			}
		}
	case torn > 0:
		if err := f.Truncate(res.good); err != nil {
			return nil, 0, err
		}
		if o.sync {
			if err := f.Sync(); err != nil {
				return nil, 0, err
			}
		}
	}
	if _, err := l.f.Seek(l.size, io.SeekStart); err != nil {
		return nil, 0, err
	}
	l.w = wrapFile(l.f)
	return l, torn, nil
}

// openLocked opens (creating) path; with lock, one process holds it: a
// second dmar serve on the same state folder must not interleave records
// with the first.
func openLocked(path string, lock bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if lock {
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s: %w", path, ErrLocked)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
	}
	return f, nil
}

// Append writes one record (fsynced when the log syncs).
func (l *log) Append(payload []byte) error {
	if l.broken != nil {
		return fmt.Errorf("append to %s: the log takes no more writes until it is reopened (restart the server): %w", l.path, l.broken)
	}
	if len(payload) > maxRecord {
		return fmt.Errorf("record of %d bytes is over the log's limit of %d", len(payload), maxRecord)
	}
	buf := appendFrame(make([]byte, 0, frameHeader2+len(payload)), payload)
	if _, err := l.w.Write(buf); err != nil {
		// Cut what was partly written, so the next record follows a good one.
		if terr := l.w.Truncate(l.size); terr != nil {
			l.broken = terr
		} else if _, serr := l.w.Seek(l.size, io.SeekStart); serr != nil {
			l.broken = serr
		}
		return fmt.Errorf("append to %s: %w", l.path, err)
	}
	if l.sync {
		if err := l.w.Sync(); err != nil {
			l.broken = err
			return fmt.Errorf("fsync %s: %w", l.path, err)
		}
	}
	l.size += int64(len(buf))
	return nil
}

// Size is the log's length in bytes.
func (l *log) Size() int64 { return l.size }

func (l *log) Close() error { return l.f.Close() }

// rewriteLog atomically replaces the log at path with one holding records.
func rewriteLog(path string, records [][]byte) error {
	return writeLog(path, len(records), func(i int) ([]byte, error) { return records[i], nil })
}

// writeLog atomically replaces the file at path with a format-2 log of n
// records: written to a temporary file, fsynced, renamed over, directory
// fsynced. A crash leaves either the old file or the new one.
func writeLog(path string, n int, record func(i int) ([]byte, error)) error {
	tmp, err := writeTemp(path, n, record)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// writeTemp writes a format-2 log of n records beside path, fsynced, and
// returns its name.
func writeTemp(path string, n int, record func(i int) ([]byte, error)) (string, error) {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = w.WriteString(fileHeader)
	var frame []byte
	for i := 0; i < n && err == nil; i++ {
		var p []byte
		if p, err = record(i); err == nil {
			frame = appendFrame(frame[:0], p)
			_, err = w.Write(frame)
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
