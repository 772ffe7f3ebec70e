package archive

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tempMarker is part of every temporary file name folio creates; readers
// skip such files and verify reports strays left by a crash.
const tempMarker = ".folio-tmp-"

// IsTemp reports whether name is a temporary file of an unfinished write.
func IsTemp(name string) bool { return strings.Contains(name, tempMarker) }

// WriteFile writes data to path atomically: a uniquely named temp file in
// the same folder is written, length-checked, synced and renamed over path,
// then the folder is synced. On any error the temp file is removed and path
// is untouched.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return WriteFileWith(path, perm, func(w io.Writer) error {
		n, err := w.Write(data)
		if err == nil && n != len(data) {
			err = io.ErrShortWrite
		}
		return err
	})
}

// WriteFileWith is WriteFile for content produced by a function, for files
// too large to hold in memory.
func WriteFileWith(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := filepath.Join(dir, "."+base+tempMarker+hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	cw := &countingWriter{w: f}
	if err = write(cw); err != nil {
		return err
	}
	var st os.FileInfo
	if st, err = f.Stat(); err != nil {
		return err
	}
	if st.Size() != cw.n {
		return fmt.Errorf("wrote %d bytes but the file holds %d", cw.n, st.Size())
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// SyncDir fsyncs a directory so a rename or create inside it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
