package export

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"folio/archive"
)

// state is what an export remembers for the next one: a fingerprint per
// snapshot page and per root page, and for --out the files each snapshot
// contributed. It lives under the collection's .folio/ folder.
type state struct {
	Key      uint64   // options and templates the export ran with
	Pages    []uint64 // fingerprint of root page i+1 (and its search shard)
	Manifest uint64   // fingerprint of the root index.jsonl
	Total    uint64   // snapshots exported
	// ManifestSize and ManifestMTime identify the root index.jsonl the
	// snapshots' Off and Len point into.
	ManifestSize, ManifestMTime int64
	Snaps                       map[uint64]snapState
}

type snapState struct {
	Dir   string
	FP    uint64 // fingerprint of its page
	Own   uint64 // ownFP: its row and manifest record
	URL   uint64 // hash of its URL and its memberSig: the captures of
	Sig   uint64 // each URL as the export saw them
	Off   int64  // where its record lies in the root manifest
	Len   int64
	Files int64 // files in the exported copy of the folder (--out)
	Bytes int64
	// Archived caches the manifest's is_archived, which for a snapshot
	// neither sealed nor with outputs costs a look at its folder.
	Archived bool
}

const stateMagic = "folio-export-state 4\n"

func newState(key uint64) *state {
	return &state{Key: key, Snaps: map[uint64]snapState{}}
}

// readState loads a state file; a missing or unreadable one is nil, which
// means a full export.
func readState(path string) (*state, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read export state %s: %w", path, err)
	}
	defer f.Close()
	st, err := decodeState(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, nil // stale or damaged state only costs a full export
	}
	return st, nil
}

func decodeState(r *bufio.Reader) (*state, error) {
	magic := make([]byte, len(stateMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != stateMagic {
		return nil, errors.New("not an export state")
	}
	var hdr [7]uint64
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, err
	}
	if hdr[2] > 1<<32 || hdr[3] > 1<<32 {
		return nil, errors.New("implausible export state")
	}
	st := &state{Key: hdr[0], Manifest: hdr[1], Total: hdr[4],
		ManifestSize: int64(hdr[5]), ManifestMTime: int64(hdr[6]), Snaps: make(map[uint64]snapState, hdr[3])}
	st.Pages = make([]uint64, hdr[2])
	if err := binary.Read(r, binary.LittleEndian, st.Pages); err != nil {
		return nil, err
	}
	for range hdr[3] {
		var rec stateRec
		if err := binary.Read(r, binary.LittleEndian, &rec); err != nil {
			return nil, err
		}
		dir := make([]byte, rec.N)
		if _, err := io.ReadFull(r, dir); err != nil {
			return nil, err
		}
		st.Snaps[hashString(string(dir))] = snapState{Dir: string(dir), FP: rec.FP, Own: rec.Own,
			URL: rec.URL, Sig: rec.Sig, Off: rec.Off, Len: rec.Len, Files: rec.Files, Bytes: rec.Bytes, Archived: rec.Archived}
	}
	return st, nil
}

func (st *state) write(path string) error {
	return archive.WriteFileWith(path, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		bw.WriteString(stateMagic)
		hdr := [7]uint64{st.Key, st.Manifest, uint64(len(st.Pages)), uint64(len(st.Snaps)), st.Total,
			uint64(st.ManifestSize), uint64(st.ManifestMTime)}
		binary.Write(bw, binary.LittleEndian, hdr)
		binary.Write(bw, binary.LittleEndian, st.Pages)
		for _, s := range st.Snaps {
			rec := stateRec{uint16(len(s.Dir)), s.FP, s.Own, s.URL, s.Sig, s.Off, s.Len, s.Files, s.Bytes, s.Archived}
			binary.Write(bw, binary.LittleEndian, rec)
			bw.WriteString(s.Dir)
		}
		return bw.Flush()
	})
}

// stateRec is one snapshot's fixed-size part in the state file, followed
// by its folder name.
type stateRec struct {
	N                 uint16
	FP, Own, URL, Sig uint64
	Off, Len          int64
	Files, Bytes      int64
	Archived          bool
}

// hasher builds 64-bit fingerprints.
type hasher struct{ h uint64 }

func newHasher() *hasher { return &hasher{h: 14695981039346656037} }

func (x *hasher) bytes(b []byte) *hasher {
	for _, c := range b {
		x.h ^= uint64(c)
		x.h *= 1099511628211
	}
	x.h ^= 0xff // separator
	x.h *= 1099511628211
	return x
}

func (x *hasher) str(s string) *hasher {
	for i := 0; i < len(s); i++ {
		x.h ^= uint64(s[i])
		x.h *= 1099511628211
	}
	x.h ^= 0xff
	x.h *= 1099511628211
	return x
}

func (x *hasher) u64(v uint64) *hasher {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return x.bytes(b[:])
}

func (x *hasher) sum() uint64 { return x.h }

// hashString is the 64-bit FNV-1a hash of s.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// testEvent reports the steps of an export to tests of their order; it
// does nothing otherwise.
var testEvent = func(string) {}
