package archive

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"time"
)

// IDSource makes new snapshot ids. Core code takes one in its options so
// tests can be deterministic.
type IDSource func() string

// NewID returns a UUIDv7 for time now written as 32 lowercase hex digits,
// the form ArchiveBox 0.9.4 uses for snapshot ids and folder names.
func NewID(now time.Time, rnd io.Reader) string {
	var u [16]byte
	binary.BigEndian.PutUint64(u[:8], uint64(now.UnixMilli())<<16)
	if _, err := io.ReadFull(rnd, u[6:]); err != nil {
		panic("archive: read random bytes: " + err.Error())
	}
	u[6] = 0x70 | u[6]&0x0f // version 7
	u[8] = 0x80 | u[8]&0x3f // RFC 4122 variant
	return hex.EncodeToString(u[:])
}

// DerivedID returns a UUIDv7 whose time is at and whose other bits come
// from the sha256 of parts: the same inputs give the same id. A migration
// makes the ids of folders and crawls that have none this way, so the ids
// its dry run prints are the ids the run then writes.
func DerivedID(at time.Time, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return NewID(at, bytes.NewReader(h.Sum(nil)))
}

// RandomIDs is the IDSource used outside tests.
func RandomIDs() string { return NewID(time.Now(), rand.Reader) }
