package docstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// A log is an append-only file of records, each framed as
//
//	length uint32 (little endian) | CRC-32C of the payload uint32 | payload
//
// Append writes one record and, when sync is set, fsyncs before returning,
// so an acknowledged record survives a crash. A record is the unit of
// atomicity: replay applies a record wholly or, when its frame is short or
// its checksum wrong (a write cut off by a crash), discards it and
// everything after it, and truncates the file there so later appends follow
// the last good record.
type log struct {
	f    *os.File
	path string
	sync bool
	size int64
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrLocked is Open's error when another process holds the store's log.
var ErrLocked = errors.New("the document log is held by another process (another dmar serve on the same --state folder)")

// maxRecord bounds one record, so that a corrupted length cannot make
// replay allocate gigabytes.
const maxRecord = 1 << 30

const frameHeader = 8

// openLog opens (creating) the log at path and calls each with every good
// record in order. It returns how many bytes of torn tail were discarded.
func openLog(path string, sync bool, each func([]byte) error) (*log, int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, 0, err
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
	if sync {
		// One process writes a log: a second dmar serve on the same state
		// folder must not interleave records with the first.
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, 0, fmt.Errorf("%s: %w", path, ErrLocked)
			}
			return nil, 0, fmt.Errorf("lock %s: %w", path, err)
		}
	}
	if errors.Is(statErr, os.ErrNotExist) && sync {
		// A new file's name must be durable too.
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	good, err := replay(f, each)
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("replay %s: %w", path, err)
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	torn := end - good
	if torn > 0 {
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, 0, err
		}
		if sync {
			if err := f.Sync(); err != nil {
				f.Close()
				return nil, 0, err
			}
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, 0, err
	}
	return &log{f: f, path: path, sync: sync, size: good}, torn, nil
}

// replay reads records from the start of f and returns the offset after
// the last good one; each's error stops it.
func replay(f *os.File, each func([]byte) error) (int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var good int64
	var head [frameHeader]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return good, nil // clean end or a short header: torn
		}
		n := binary.LittleEndian.Uint32(head[:4])
		if n > maxRecord {
			return good, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return good, nil
		}
		if crc32.Checksum(payload, crcTable) != binary.LittleEndian.Uint32(head[4:]) {
			return good, nil
		}
		if err := each(payload); err != nil {
			return good, err
		}
		good += frameHeader + int64(n)
	}
}

// Append writes one record (fsynced when the log syncs).
func (l *log) Append(payload []byte) error {
	if len(payload) > maxRecord {
		return fmt.Errorf("record of %d bytes is over the log's limit of %d", len(payload), maxRecord)
	}
	buf := make([]byte, frameHeader+len(payload))
	binary.LittleEndian.PutUint32(buf[:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[4:8], crc32.Checksum(payload, crcTable))
	copy(buf[frameHeader:], payload)
	if _, err := l.f.Write(buf); err != nil {
		// Cut what was partly written, so the next record follows a good one.
		_ = l.f.Truncate(l.size)
		_, _ = l.f.Seek(l.size, io.SeekStart)
		return fmt.Errorf("append to %s: %w", l.path, err)
	}
	if l.sync {
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", l.path, err)
		}
	}
	l.size += int64(len(buf))
	return nil
}

// Size is the log's length in bytes.
func (l *log) Size() int64 { return l.size }

func (l *log) Close() error { return l.f.Close() }

// rewriteLog atomically replaces the log at path with one holding records:
// written to a temporary file, fsynced, renamed over, directory fsynced.
func rewriteLog(path string, records [][]byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, p := range records {
		var head [frameHeader]byte
		binary.LittleEndian.PutUint32(head[:4], uint32(len(p)))
		binary.LittleEndian.PutUint32(head[4:], crc32.Checksum(p, crcTable))
		w.Write(head[:])
		w.Write(p)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
