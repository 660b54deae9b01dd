package docstore

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// RepairReport is what Repair found in one log and did about it.
type RepairReport struct {
	Log    string `json:"log"`
	Format int    `json:"format"`
	// Kept counts the intact records written to the new log: Before the
	// first damage and After it.
	Kept   int `json:"kept_records"`
	Before int `json:"kept_before_damage"`
	After  int `json:"kept_after_damage"`
	// Damage lists the stretches that held no intact record; LostBytes
	// sums them.
	Damage    []Damage `json:"damage"`
	LostBytes int64    `json:"lost_bytes"`
	// Undecodable lists the offsets of records whose checksum held but that
	// do not decode (written by another version?): they are left out too.
	Undecodable []int64 `json:"undecodable,omitempty"`
	// SetAside is where the damaged file is kept (never deleted); empty when
	// nothing was changed.
	SetAside string `json:"set_aside,omitempty"`
	Repaired bool   `json:"repaired"`
	DryRun   bool   `json:"dry_run,omitempty"`
}

// Damaged reports whether the log needs repairing.
func (r *RepairReport) Damaged() bool { return len(r.Damage) > 0 || len(r.Undecodable) > 0 }

// RepairState repairs every document log under the state folder (the
// folder dmar serve --state uses: its logs are documents/*/documents.log),
// or the one in dir itself when dir holds a documents.log. With dryRun it
// only reports. A log held by a running server is an ErrLocked error.
func RepairState(dir string, dryRun bool) ([]RepairReport, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "documents", "*", LogFile))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, LogFile)); err == nil {
		paths = append([]string{filepath.Join(dir, LogFile)}, paths...)
	}
	if len(paths) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s holds no document log (%s, or documents/*/%s)", dir, LogFile, LogFile)
	}
	var out []RepairReport
	for _, p := range paths {
		r, err := RepairLog(p, dryRun)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RepairLog rebuilds the document log at path from every record whose
// checksum holds and that decodes, before and after any damage, in order:
// the new log is written beside it and fsynced, the damaged file is kept
// under a new name (path.damaged-TIME), then the new one is renamed over
// path. A crash at any step leaves the damaged log or the repaired one at
// path, and the damaged one kept. A log without damage is left alone.
//
// Each lost record was one acknowledged batch: the documents it wrote go
// back to what the records before it say, and the ids it deleted come back.
func RepairLog(path string, dryRun bool) (RepairReport, error) {
	return repairLog(path, dryRun, func(p []byte) bool {
		var r record
		return gob.NewDecoder(bytes.NewReader(p)).Decode(&r) == nil
	})
}

// repairLog is RepairLog keeping the records that decodes accepts (all,
// when it is nil).
func repairLog(path string, dryRun bool, decodes func([]byte) bool) (RepairReport, error) {
	rep := RepairReport{Log: path, DryRun: dryRun}
	f, err := openLocked(path, true)
	if err != nil {
		return rep, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return rep, err
	}
	var keep [][]byte
	res, err := scanLog(f, st.Size(), func(p []byte, at int64, after bool) error {
		if decodes != nil && !decodes(p) {
			rep.Undecodable = append(rep.Undecodable, at)
			return nil
		}
		keep = append(keep, p)
		if after {
			rep.After++
		} else {
			rep.Before++
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("read %s: %w", path, err)
	}
	rep.Format, rep.Damage, rep.Kept = res.version, res.damage, len(keep)
	if rep.Damage == nil {
		rep.Damage = []Damage{}
	}
	for _, d := range res.damage {
		rep.LostBytes += d.End - d.Offset
	}
	if !rep.Damaged() || dryRun {
		return rep, nil
	}
	tmp, err := writeTemp(path, len(keep), func(i int) ([]byte, error) { return keep[i], nil })
	if err != nil {
		return rep, fmt.Errorf("write the repaired log: %w", err)
	}
	aside, err := setAside(path)
	if err != nil {
		os.Remove(tmp)
		return rep, fmt.Errorf("keep the damaged log: %w", err)
	}
	rep.SetAside = aside
	if err := os.Rename(tmp, path); err != nil {
		return rep, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return rep, err
	}
	rep.Repaired = true
	return rep, nil
}

// setAside keeps the file at path under a new name, as a hard link (a copy
// where links are not supported), made durable before path is replaced.
func setAside(path string) (string, error) {
	base := path + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
	aside := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Link(path, aside); err != nil {
		if err := copyFile(path, aside); err != nil {
			return "", err
		}
	}
	return aside, syncDir(filepath.Dir(path))
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// WriteRepairReports prints reports as dmar docs repair does: one JSON
// object a log with asJSON, else what each log held, what was lost and
// where the damaged file is.
func WriteRepairReports(w io.Writer, reports []RepairReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range reports {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range reports {
		fmt.Fprintf(w, "%s (format %d):\n", r.Log, r.Format)
		if !r.Damaged() {
			fmt.Fprintf(w, "  intact: %d records, nothing to repair\n", r.Kept)
			continue
		}
		for _, d := range r.Damage {
			lost := fmt.Sprintf("%d records lost", d.Records)
			switch {
			case d.Records == 1:
				lost = "1 record lost"
			case d.Records < 0:
				lost = "how many records it held is unknown (framing lost)"
			}
			fmt.Fprintf(w, "  damaged: bytes %d-%d (%d bytes): %s; %s\n", d.Offset, d.End, d.End-d.Offset, d.Describe(), lost)
		}
		for _, at := range r.Undecodable {
			fmt.Fprintf(w, "  lost: the record at byte %d passes its checksum but does not decode\n", at)
		}
		verb := "kept"
		if r.DryRun {
			verb = "would keep"
		}
		fmt.Fprintf(w, "  %s %d intact records (%d before the first damage, %d after it); %d bytes lost\n", verb, r.Kept, r.Before, r.After, r.LostBytes)
		if r.Repaired {
			fmt.Fprintf(w, "  repaired: the damaged file is kept as %s\n", r.SetAside)
		}
		fmt.Fprintln(w, "  each lost record was one acknowledged batch: the documents it wrote are back to their state before it, the ids it deleted are back")
	}
	return nil
}
